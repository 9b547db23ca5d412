// grpc_load.cc - closed-loop gRPC C++ load generator for the larder.v1 services.
//
// Drives any server of larder.v1 over gRPC/HTTP/2 (Larder once it speaks it, the gRPC C++
// reference in ../shared/anchors/grpc-cpp, Benchmarks/h2-echo) with the stock gRPC C++
// client, so that the same client costs the same on every server and the server's own CPU
// per call can be compared. To keep the client's CPU per call small, calls go through
// grpc::GenericStub with request bytes encoded before the run (requests.h): no protobuf
// work per call, replies are not decoded (only their status is checked).
//
// --concurrency N calls are kept in flight in total over --conns C channels (one TCP
// connection each) and --threads T completion-queue threads; each finished call's slot
// issues the next one at once (closed loop), or, with --rate R, calls start at R per second
// in total (paced: each thread starts its share on a fixed schedule, with at most its share
// of --concurrency in flight; a call due while every slot is busy starts when one frees),
// so that two servers can be compared at the same load below what saturates the client.
// After --warmup S the run measures --duration S
// seconds (or --requests R calls) and prints one JSON line: calls/s, exact percentiles
// (every latency of the window is kept and sorted, nearest rank), errors by status code,
// client CPU, the server's CPU from /proc/PID/stat (--server-pid), and the CPU every other
// process used in the window (a shared machine's noise), each also per call.
//
// Other modes: --probe (one call; exit 0 if the target answers gRPC, 3 if not) and
// --write-bodies DIR (seed the server, then write the framed request bodies that
// scripts/bench-grpc.sh feeds to h2load: get.grpc, list.grpc, create.grpc, ping.grpc).
//
// `grpc_load --help` lists the flags.

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "proc_stats.h"
#include "requests.h"

namespace {

using Clock = std::chrono::steady_clock;
using grpcload::GrpcFrame;

[[noreturn]] void Die(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "grpc_load: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  std::exit(code);
}

enum class Workload { kGet, kCreate, kList, kPing };

struct Options {
  std::string target = "127.0.0.1:50051";
  std::string workload = "get";
  std::string label;  // copied into the JSON line ("server")
  int conns = 1;
  int concurrency = 1;
  int threads = 1;
  double warmup = 1;
  double duration = 5;
  int64_t requests = 0;  // > 0: measure this many calls instead of --duration
  double rate = 0;       // > 0: calls started per second in total (paced); 0: closed loop
  double max_seconds = 120;
  int deadline_ms = 10000;
  int connect_timeout_s = 10;
  int server_pid = 0;
  int page_size = 50;
  int seed_locations = 1000;
  int seed_meals = 500;
  bool probe = false;
  std::string write_bodies;
};

void Usage(FILE* to) {
  std::fprintf(to,
               "usage: grpc_load --target HOST:PORT [--workload get|create|list|ping] [--conns C]\n"
               "                 [--concurrency N] [--threads T] [--warmup S] [--duration S | --requests R]\n"
               "                 [--server-pid PID] [--label NAME] [--page-size P] [--deadline-ms MS]\n"
               "                 [--seed-locations N] [--seed-meals N] [--max-seconds S] [--rate R]\n"
               "       grpc_load --target HOST:PORT --probe\n"
               "       grpc_load --target HOST:PORT --write-bodies DIR [--seed-meals N] [--page-size P]\n"
               "Defaults: 1 conn, 1 in flight, 1 thread, 1 s warm-up, 5 s measured, 10 s deadline per\n"
               "call, page size 50, 1000 locations seeded for get, 500 meal records for list (0: seed\n"
               "nothing, get asks for an id no server holds: for h2-echo); ping is grpc.health.v1\n"
               "Health/Check with an empty request. --rate R paces the calls at R per second in total\n"
               "(at most --concurrency in flight) instead of the closed loop. A run\n"
               "never lasts more than --max-seconds (120) after the warm-up.\n");
}

int IntFlag(const std::string& name, const std::string& v) {
  char* end = nullptr;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < 0 || x > 100000000) Die(1, "%s: expected a number >= 0, got \"%s\"", name.c_str(), v.c_str());
  return static_cast<int>(x);
}

double SecondsFlag(const std::string& name, const std::string& v) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(x >= 0) || x > 3600) Die(1, "%s: expected seconds 0-3600, got \"%s\"", name.c_str(), v.c_str());
  return x;
}

Options ParseFlags(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], v;
    if (a == "-h" || a == "--help") {
      Usage(stdout);
      std::exit(0);
    }
    if (a == "--probe") {
      o.probe = true;
      continue;
    }
    size_t eq = a.find('=');
    if (eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (i + 1 < argc) {
      v = argv[++i];
    } else {
      Usage(stderr);
      Die(1, "%s needs a value", a.c_str());
    }
    if (a == "--target") o.target = v;
    else if (a == "--workload") o.workload = v;
    else if (a == "--label") o.label = v;
    else if (a == "--conns") o.conns = IntFlag(a, v);
    else if (a == "--concurrency") o.concurrency = IntFlag(a, v);
    else if (a == "--threads") o.threads = IntFlag(a, v);
    else if (a == "--warmup") o.warmup = SecondsFlag(a, v);
    else if (a == "--duration") o.duration = SecondsFlag(a, v);
    else if (a == "--requests") o.requests = IntFlag(a, v);
    else if (a == "--max-seconds") o.max_seconds = SecondsFlag(a, v);
    else if (a == "--rate") o.rate = IntFlag(a, v);
    else if (a == "--deadline-ms") o.deadline_ms = IntFlag(a, v);
    else if (a == "--connect-timeout") o.connect_timeout_s = IntFlag(a, v);
    else if (a == "--server-pid") o.server_pid = IntFlag(a, v);
    else if (a == "--page-size") o.page_size = IntFlag(a, v);
    else if (a == "--seed-locations") o.seed_locations = IntFlag(a, v);
    else if (a == "--seed-meals") o.seed_meals = IntFlag(a, v);
    else if (a == "--write-bodies") o.write_bodies = v;
    else {
      Usage(stderr);
      Die(1, "unknown flag %s", a.c_str());
    }
  }
  if (o.concurrency < 1) Die(1, "--concurrency must be >= 1");
  if (o.conns < 1) Die(1, "--conns must be >= 1");
  if (o.threads < 1) Die(1, "--threads must be >= 1");
  if (o.requests == 0 && o.duration <= 0) Die(1, "need --duration > 0 or --requests > 0");
  if (o.deadline_ms < 1) Die(1, "--deadline-ms must be >= 1");
    o.conns = std::min(o.conns, o.concurrency);  // a connection with no call in flight measures nothing
  o.threads = std::min(o.threads, o.concurrency);
  return o;
}

grpc::ByteBuffer ToByteBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string ToString(const grpc::ByteBuffer& bb) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!bb.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

/// One channel = one TCP connection: a local subchannel pool and a distinct argument
/// stop channels with equal arguments from sharing a connection.
std::shared_ptr<grpc::Channel> MakeChannel(const Options& o, int index, bool wait) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt("larder.grpc_load.connection", index);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  args.SetMaxReceiveMessageSize(16 << 20);
  auto ch = grpc::CreateCustomChannel(o.target, grpc::InsecureChannelCredentials(), args);
  if (wait && !ch->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(o.connect_timeout_s))) {
    Die(3, "could not connect to %s within %d s", o.target.c_str(), o.connect_timeout_s);
  }
  return ch;
}

/// One blocking unary call through the generic stub (seeding and --probe).
grpc::Status CallOnce(grpc::GenericStub* stub, const char* method, const std::string& request, std::string* reply,
                      int timeout_ms) {
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
  grpc::ByteBuffer req = ToByteBuffer(request), resp;
  grpc::Status status;
  auto reader = stub->PrepareUnaryCall(&ctx, method, req, &cq);
  reader->StartCall();
  int tag = 1;
  reader->Finish(&resp, &status, &tag);
  void* got = nullptr;
  bool ok = false;
  cq.Next(&got, &ok);
  reader.reset();
  cq.Shutdown();
  while (cq.Next(&got, &ok)) {
  }
  if (status.ok() && reply != nullptr) *reply = ToString(resp);
  return status;
}

std::string ColorHex(std::mt19937_64& rng) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", static_cast<unsigned>(rng() & 0xFFFFFF));
  return buf;
}

const char* const kMealNames[] = {"porridge", "lentil soup", "pasta", "apple", "green curry", "oatmeal with berries"};

/// Creates `n` locations and returns their ids.
std::vector<std::string> SeedLocations(grpc::GenericStub* stub, const std::string& prefix, int n, std::mt19937_64& rng) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    std::string reply, id;
    grpc::Status st = CallOnce(stub, grpcload::kCreateLocation,
                               grpcload::EncodeCreateLocation(prefix + std::to_string(i), ColorHex(rng)), &reply, 10000);
    if (!st.ok()) Die(4, "seeding: CreateLocation failed: %d %s", st.error_code(), st.error_message().c_str());
    if (!grpcload::DecodeLocationId(reply, &id)) Die(4, "seeding: the CreateLocation reply has no id");
    ids.push_back(id);
  }
  return ids;
}

void SeedMeals(grpc::GenericStub* stub, int n, std::mt19937_64& rng) {
  for (int i = 0; i < n; ++i) {
    grpc::Status st = CallOnce(stub, grpcload::kCreateMealRecord,
                               grpcload::EncodeCreateMealRecord(kMealNames[i % 6], static_cast<int32_t>(50 + rng() % 1200),
                                                                static_cast<int>(1 + rng() % 4)),
                               nullptr, 10000);
    if (!st.ok()) Die(4, "seeding: CreateMealRecord failed: %d %s", st.error_code(), st.error_message().c_str());
  }
}

// ---- the closed loop ----------------------------------------------------------------------

struct Shared {
  Options opt;
  const char* method = nullptr;
  std::vector<grpc::ByteBuffer> bodies;  // chosen at random per call
  Clock::time_point t_start, t_end;
  bool by_count = false;
  std::atomic<int64_t> measured{0};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> last_done_ns{0};
};

struct Slot {
  grpc::GenericStub* stub = nullptr;
  std::optional<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientAsyncResponseReader<grpc::ByteBuffer>> reader;
  grpc::ByteBuffer reply;
  grpc::Status status;
  Clock::time_point start;

  void Reset() {
    reader.reset();  // lives in the call's arena: before the context
    ctx.reset();
  }
};

struct Worker {
  Shared* sh = nullptr;
  grpc::CompletionQueue cq;
  std::vector<Slot*> slots;
  std::vector<int64_t> lat_ns;
  std::map<int, int64_t> errors_by_code;
  std::string first_error;
  std::mt19937_64 rng;
  double rate = 0;  // this thread's share of --rate; 0: closed loop

  void Issue(Slot* s) {
    s->Reset();
    s->ctx.emplace();
    s->start = Clock::now();
    s->ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(sh->opt.deadline_ms));
    const grpc::ByteBuffer& body =
        sh->bodies.size() == 1 ? sh->bodies[0] : sh->bodies[rng() % sh->bodies.size()];
    s->reader = s->stub->PrepareUnaryCall(&*s->ctx, sh->method, body, &cq);
    s->reader->StartCall();
    s->reader->Finish(&s->reply, &s->status, s);
  }

  /// Records a finished call (when inside the window) and says whether its slot goes on.
  bool Finish(Slot* s, bool ok) {
    const Clock::time_point done = Clock::now();
    bool record = false;
    if (done >= sh->t_start) {
      if (sh->by_count) {
        int64_t n = sh->measured.fetch_add(1, std::memory_order_relaxed);
        if (n < sh->opt.requests) {
          record = true;
          if (n + 1 == sh->opt.requests) {
            sh->last_done_ns.store((done - sh->t_start).count());
            sh->stop.store(true);
          }
        }
      } else {
        record = done < sh->t_end;
      }
    }
    if (record) {
      lat_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(done - s->start).count());
      if (!ok || !s->status.ok()) {
        ++errors_by_code[ok ? s->status.error_code() : -1];
        if (first_error.empty()) first_error = std::to_string(s->status.error_code()) + " " + s->status.error_message();
      }
    }
    return !sh->stop.load(std::memory_order_relaxed) && (sh->by_count || done < sh->t_end);
  }

  void Run() {
    lat_ns.reserve(1 << 20);
    if (rate > 0) {
      RunPaced();
      return;
    }
    int inflight = 0;
    for (Slot* s : slots) {
      Issue(s);
      ++inflight;
    }
    void* tag = nullptr;
    bool ok = false;
    while (inflight > 0 && cq.Next(&tag, &ok)) {
      auto* s = static_cast<Slot*>(tag);
      if (Finish(s, ok)) {
        Issue(s);
      } else {
        s->Reset();
        --inflight;
      }
    }
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
  }

  /// --rate: starts a call every 1/rate s (this thread's share), on a free slot.
  void RunPaced() {
    const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
    std::vector<Slot*> idle(slots.rbegin(), slots.rend());
    int inflight = 0;
    bool stopping = false;
    Clock::time_point next = Clock::now();
    void* tag = nullptr;
    bool ok = false;
    while (true) {
      Clock::time_point now = Clock::now();
      stopping = stopping || sh->stop.load(std::memory_order_relaxed) || (!sh->by_count && now >= sh->t_end);
      while (!stopping && !idle.empty() && next <= now) {
        Issue(idle.back());
        idle.pop_back();
        ++inflight;
        next += interval;
      }
      if (stopping && inflight == 0) break;
      // Wake for the next start if a slot is free, else for a completion (and look at the
      // stop flag at least every 20 ms).
      const Clock::time_point wake = !stopping && !idle.empty() ? next : now + std::chrono::milliseconds(20);
      // AsyncNext takes a system_clock deadline.
      const auto got = cq.AsyncNext(&tag, &ok, std::chrono::system_clock::now() + (wake - now));
      if (got == grpc::CompletionQueue::SHUTDOWN) break;
      if (got == grpc::CompletionQueue::TIMEOUT) continue;
      auto* s = static_cast<Slot*>(tag);
      if (!Finish(s, ok)) stopping = true;
      s->Reset();
      idle.push_back(s);
      --inflight;
    }
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
  }
};

double Percentile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return static_cast<double>(sorted[rank - 1]) / 1000.0;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

int Probe(const Options& o) {
  auto ch = MakeChannel(o, 0, false);
  grpc::GenericStub stub(ch);
  // An empty id: a server of larder.v1 answers INVALID_ARGUMENT (h2-echo answers OK);
  // UNAVAILABLE or DEADLINE_EXCEEDED mean the target did not speak gRPC over HTTP/2.
  grpc::Status st = CallOnce(&stub, grpcload::kGetLocation, grpcload::EncodeGetLocation(""), nullptr,
                             o.connect_timeout_s * 1000);
  const bool speaks = st.error_code() != grpc::StatusCode::UNAVAILABLE &&
                      st.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED;
  std::printf("{\"target\":%s,\"speaks_grpc\":%s,\"status\":%d,\"message\":%s}\n", JsonString(o.target).c_str(),
              speaks ? "true" : "false", st.error_code(), JsonString(st.error_message()).c_str());
  return speaks ? 0 : 3;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) Die(5, "cannot write %s", path.c_str());
}

int WriteBodies(const Options& o, const std::string& prefix, std::mt19937_64& rng) {
  auto ch = MakeChannel(o, 0, true);
  grpc::GenericStub stub(ch);
  std::vector<std::string> ids = SeedLocations(&stub, prefix, std::min(o.seed_locations, 1), rng);
  if (ids.empty()) ids.push_back(grpcload::kUnseededId);
  SeedMeals(&stub, o.seed_meals, rng);
  WriteFile(o.write_bodies + "/get.grpc", GrpcFrame(grpcload::EncodeGetLocation(ids[0])));
  WriteFile(o.write_bodies + "/ping.grpc", GrpcFrame(""));
  WriteFile(o.write_bodies + "/list.grpc", GrpcFrame(grpcload::EncodeListMealRecords(o.page_size)));
  WriteFile(o.write_bodies + "/create.grpc", GrpcFrame(grpcload::EncodeCreateMealRecord("oatmeal with berries", 420, 1)));
  std::printf("{\"bodies\":%s,\"location_id\":%s,\"seeded_meals\":%d}\n", JsonString(o.write_bodies).c_str(),
              JsonString(ids[0]).c_str(), o.seed_meals);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Shared sh;
  sh.opt = ParseFlags(argc, argv);
  const Options& o = sh.opt;
  std::mt19937_64 rng(std::random_device{}());
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "grpc-load-%d-%llx-", static_cast<int>(getpid()),
                static_cast<unsigned long long>(std::chrono::system_clock::now().time_since_epoch().count()));
  if (o.probe) return Probe(o);
  if (!o.write_bodies.empty()) return WriteBodies(o, prefix, rng);

  Workload wl;
  if (o.workload == "get") wl = Workload::kGet;
  else if (o.workload == "create") wl = Workload::kCreate;
  else if (o.workload == "list") wl = Workload::kList;
  else if (o.workload == "ping") wl = Workload::kPing;
  else Die(1, "--workload: expected get, create, list or ping, got \"%s\"", o.workload.c_str());
  sh.by_count = o.requests > 0;

  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  for (int i = 0; i < o.conns; ++i) {
    channels.push_back(MakeChannel(o, i, true));
    stubs.push_back(std::make_unique<grpc::GenericStub>(channels.back()));
  }

  // Seed, then encode every request body before the run.
  switch (wl) {
    case Workload::kGet:
      sh.method = grpcload::kGetLocation;
      for (const std::string& id : SeedLocations(stubs[0].get(), prefix, o.seed_locations, rng)) {
        sh.bodies.push_back(ToByteBuffer(grpcload::EncodeGetLocation(id)));
      }
      if (sh.bodies.empty()) sh.bodies.push_back(ToByteBuffer(grpcload::EncodeGetLocation(grpcload::kUnseededId)));
      break;
    case Workload::kPing:
      sh.method = grpcload::kHealthCheck;
      sh.bodies.push_back(ToByteBuffer(""));
      break;
    case Workload::kCreate:
      sh.method = grpcload::kCreateMealRecord;
      for (int i = 0; i < 256; ++i) {
        sh.bodies.push_back(ToByteBuffer(grpcload::EncodeCreateMealRecord(
            kMealNames[i % 6], static_cast<int32_t>(50 + rng() % 1200), static_cast<int>(1 + rng() % 4))));
      }
      break;
    case Workload::kList:
      sh.method = grpcload::kListMealRecords;
      SeedMeals(stubs[0].get(), o.seed_meals, rng);
      sh.bodies.push_back(ToByteBuffer(grpcload::EncodeListMealRecords(o.page_size)));
      break;
  }

  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < o.threads; ++t) {
    workers.push_back(std::make_unique<Worker>());
    workers.back()->sh = &sh;
    workers.back()->rng.seed(rng());
    workers.back()->rate = o.rate / o.threads;
  }
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < o.concurrency; ++i) {
    slots.push_back(std::make_unique<Slot>());
    slots.back()->stub = stubs[i % o.conns].get();
    workers[i % o.threads]->slots.push_back(slots.back().get());
  }

  auto secs = [](double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
  const Clock::time_point t0 = Clock::now();
  sh.t_start = t0 + secs(o.warmup);
  const Clock::time_point hard_end = sh.t_start + secs(sh.by_count ? o.max_seconds : std::min(o.duration, o.max_seconds));
  sh.t_end = sh.by_count ? Clock::time_point::max() : hard_end;

  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([w = w.get()] { w->Run(); });

  const int self_pid = static_cast<int>(getpid());
  std::this_thread::sleep_until(sh.t_start);
  const double self0 = grpcload::SelfCpuSeconds();
  const double srv0 = o.server_pid > 0 ? grpcload::ProcessCpuSeconds(o.server_pid) : -1;
  const double host0 = grpcload::MachineBusySeconds();
  const auto others0 = grpcload::OtherProcessesCpu(self_pid, o.server_pid);
  const std::string load_before = grpcload::LoadAverage();

  // The window ends at t_end, or (--requests) when the R-th call completes; in both
  // cases never later than --max-seconds after the warm-up.
  while (Clock::now() < hard_end && !sh.stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(sh.by_count ? 2 : 20));
  }
  const Clock::time_point window_end = Clock::now();
  const double self1 = grpcload::SelfCpuSeconds();
  const double srv1 = o.server_pid > 0 ? grpcload::ProcessCpuSeconds(o.server_pid) : -1;
  const double host1 = grpcload::MachineBusySeconds();
  const auto others1 = grpcload::OtherProcessesCpu(self_pid, o.server_pid);
  sh.stop.store(true);
  for (auto& t : threads) t.join();

  double seconds;
  if (sh.by_count && sh.last_done_ns.load() > 0) seconds = static_cast<double>(sh.last_done_ns.load()) / 1e9;
  else seconds = std::chrono::duration<double>((sh.by_count ? window_end : sh.t_end) - sh.t_start).count();
  const double wall = seconds > 0 ? seconds : 1e-9;
  const double cpu_wall = std::chrono::duration<double>(window_end - sh.t_start).count();

  std::vector<int64_t> lat;
  std::map<int, int64_t> errors_by_code;
  std::string first_error;
  for (auto& w : workers) {
    lat.insert(lat.end(), w->lat_ns.begin(), w->lat_ns.end());
    for (const auto& [code, n] : w->errors_by_code) errors_by_code[code] += n;
    if (first_error.empty()) first_error = w->first_error;
  }
  std::sort(lat.begin(), lat.end());
  int64_t errors = 0;
  std::string by_code = "{";
  for (const auto& [code, n] : errors_by_code) {
    errors += n;
    by_code += (by_code.size() > 1 ? ",\"" : "\"") + std::to_string(code) + "\":" + std::to_string(n);
  }
  by_code += "}";
  double mean = 0;
  for (int64_t v : lat) mean += static_cast<double>(v);
  mean = lat.empty() ? 0 : mean / static_cast<double>(lat.size()) / 1000.0;
  if (!first_error.empty()) std::fprintf(stderr, "grpc_load: first error: %s\n", first_error.c_str());

  const double calls = static_cast<double>(lat.size());
  const double client_cpu = self1 - self0;
  const double others_cpu = grpcload::CpuUsedSince(others0, others1);
  char srv_pct[32] = "null", srv_us[32] = "null";
  if (srv0 >= 0 && srv1 >= 0) {
    std::snprintf(srv_pct, sizeof srv_pct, "%.1f", 100.0 * (srv1 - srv0) / cpu_wall);
    if (calls > 0) std::snprintf(srv_us, sizeof srv_us, "%.2f", (srv1 - srv0) * 1e6 / calls);
  }
  std::printf(
      "{\"driver\":\"grpc-load\",\"server\":%s,\"target\":%s,\"workload\":\"%s\",\"conns\":%d,\"concurrency\":%d,"
      "\"threads\":%d,\"rate\":%.0f,\"requests\":%zu,\"errors\":%lld,\"errors_by_code\":%s,\"seconds\":%.3f,\"rps\":%.1f,"
      "\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,\"mean_us\":%.1f,"
      "\"client_cpu_pct\":%.1f,\"client_cpu_us_per_call\":%.2f,\"server_cpu_pct\":%s,"
      "\"server_cpu_us_per_call\":%s,\"others_cpu_pct\":%.1f,\"host_busy_pct\":%.1f,\"loadavg\":%s}\n",
      JsonString(o.label).c_str(), JsonString(o.target).c_str(), o.workload.c_str(), o.conns, o.concurrency,
      o.threads, o.rate, lat.size(), static_cast<long long>(errors), by_code.c_str(), seconds, calls / wall,
      Percentile(lat, 0.50), Percentile(lat, 0.90), Percentile(lat, 0.99), Percentile(lat, 0.999),
      lat.empty() ? 0.0 : static_cast<double>(lat.back()) / 1000.0, mean, 100.0 * client_cpu / cpu_wall,
      calls > 0 ? client_cpu * 1e6 / calls : 0.0, srv_pct, srv_us, 100.0 * others_cpu / cpu_wall,
      100.0 * (host1 - host0) / cpu_wall, JsonString(load_before).c_str());
  std::fflush(stdout);
  for (auto& s : slots) s->Reset();
  return lat.empty() || errors == static_cast<int64_t>(lat.size()) ? 2 : 0;
}
