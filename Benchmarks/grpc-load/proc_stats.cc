// proc_stats.cc - see proc_stats.h.
#include "proc_stats.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace grpcload {
namespace {

double Ticks(unsigned long long t) { return static_cast<double>(t) / static_cast<double>(sysconf(_SC_CLK_TCK)); }

}  // namespace

double ProcessCpuSeconds(int pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return -1;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  // The command name may hold spaces and parentheses: fields start after the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return -1;
  p += 2;  // ") " -> field 3 (state)
  unsigned long long utime = 0, stime = 0;
  for (int field = 3; field <= 15 && *p != '\0'; ++field) {
    char* end = nullptr;
    if (field == 14) utime = std::strtoull(p, &end, 10);
    if (field == 15) stime = std::strtoull(p, &end, 10);
    const char* space = std::strchr(p, ' ');
    if (space == nullptr) break;
    p = space + 1;
  }
  return Ticks(utime + stime);
}

double SelfCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double MachineBusySeconds() {
  FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return -1;
  unsigned long long v[8] = {0};  // user nice system idle iowait irq softirq steal
  int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                        &v[5], &v[6], &v[7]);
  std::fclose(f);
  if (got != 8) return -1;
  unsigned long long total = 0;
  for (unsigned long long x : v) total += x;
  return Ticks(total - v[3] - v[4]);
}

std::vector<std::pair<int, double>> OtherProcessesCpu(int skip_a, int skip_b) {
  std::vector<std::pair<int, double>> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0 || pid == skip_a || pid == skip_b) continue;
    double cpu = ProcessCpuSeconds(static_cast<int>(pid));
    if (cpu >= 0) out.emplace_back(static_cast<int>(pid), cpu);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

double CpuUsedSince(const std::vector<std::pair<int, double>>& before,
                    const std::vector<std::pair<int, double>>& after) {
  double sum = 0;
  size_t i = 0;
  for (const auto& [pid, cpu] : after) {
    while (i < before.size() && before[i].first < pid) ++i;
    double base = (i < before.size() && before[i].first == pid) ? before[i].second : 0;
    if (cpu > base) sum += cpu - base;
  }
  return sum;
}

std::string LoadAverage() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return "";
  char a[16], b[16], c[16];
  std::string out;
  if (std::fscanf(f, "%15s %15s %15s", a, b, c) == 3) out = std::string(a) + " " + b + " " + c;
  std::fclose(f);
  return out;
}

}  // namespace grpcload
