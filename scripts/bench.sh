#!/usr/bin/env bash
# Larder against the gRPC C++ reference ("anchor"), side by side on this machine.
#
# Builds Larder in release mode, the anchor (../shared/anchors/grpc-cpp, built in
# /tmp because that folder is read-only) and the wire-limit C server
# (Benchmarks/wire-limit). Every server runs pinned to SERVER_CPU on a fresh
# database, every load generator pinned to CLIENT_CPU, one run at a time:
#   - get, create, list at each concurrency: the anchor's own `load` against the
#     anchor, then `larder bench` against larder-server --durability normal
#     (alternating, same concurrency, connections = min(c, 4), same warm-up and duration);
#   - create against larder-server --durability full;
#   - ping: `larder bench` against larder-server, then against wire-limit.
# Writes a Markdown report (calls/s, p50/p99, ratios, CPU per call of both load
# generators, the issue's targets) to OUT, raw JSON lines (one per run) to OUT's .jsonl twin,
# keeps every block between <!-- NAME:begin --> and <!-- NAME:end --> (written by
# scripts/scale.sh and by hand from scripts/bench-backends.sh), and stops only the servers it
# started, by PID. A full run takes about 7-8 min.
#
# These are benchmarks, not tests: nothing here fails on a slow number.
#
# Every pair of runs is repeated ROUNDS times (the reference and Larder alternate
# throughout); the report shows the mean over the rounds, which halves the
# run-to-run noise a single 5 s run has on a shared machine (±15% seen).
#
# Env: DURATION=5 WARMUP=1 ROUNDS=2 CONCURRENCIES="1 64" WORKLOADS="get create list"
#      PING_CONCURRENCIES="1 64" MAX_CONNS=4 SERVER_CPU=0 CLIENT_CPU=1
#      ANCHOR_DIR=../shared/anchors/grpc-cpp ANCHOR_BUILD=/tmp/anchor-build ANCHOR_PORT=50571
#      SCRATCH=.build (swift --scratch-path) OUT=docs/BENCHMARKS.md
#      QUIET_PCT=30 QUIET_WAIT=10 (wait up to QUIET_WAIT s for the machine to go idle before each run)
#      SKIP_INSTALL=1 (do not apt-get missing packages)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}
WARMUP=${WARMUP:-1}
CONCURRENCIES=${CONCURRENCIES:-"1 64"}
WORKLOADS=${WORKLOADS:-"get create list"}
PING_CONCURRENCIES=${PING_CONCURRENCIES:-"1 64"}
MAX_CONNS=${MAX_CONNS:-4}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
ANCHOR_DIR=${ANCHOR_DIR:-$ROOT/../shared/anchors/grpc-cpp}
ANCHOR_BUILD=${ANCHOR_BUILD:-/tmp/anchor-build}
ANCHOR_PORT=${ANCHOR_PORT:-50571}
SCRATCH=${SCRATCH:-.build}
OUT=${OUT:-docs/BENCHMARKS.md}
QUIET_PCT=${QUIET_PCT:-30}
QUIET_WAIT=${QUIET_WAIT:-10}

source scripts/lib/bench-common.sh

# --- packages -----------------------------------------------------------------
need_packages=()
pkg-config --exists grpc++ 2>/dev/null || need_packages+=(libgrpc++-dev)
command -v grpc_cpp_plugin >/dev/null || need_packages+=(protobuf-compiler-grpc)
command -v protoc >/dev/null || need_packages+=(protobuf-compiler)
pkg-config --exists protobuf 2>/dev/null || need_packages+=(libprotobuf-dev)
pkg-config --exists libprotobuf-c 2>/dev/null || need_packages+=(libprotobuf-c-dev)
pkg-config --exists sqlite3 2>/dev/null || need_packages+=(libsqlite3-dev)
command -v taskset >/dev/null || need_packages+=(util-linux)
command -v make >/dev/null || need_packages+=(make)
command -v g++ >/dev/null || need_packages+=(g++)
command -v python3 >/dev/null || need_packages+=(python3)
if (( ${#need_packages[@]} > 0 )); then
  if [[ -n "${SKIP_INSTALL:-}" ]]; then log "missing packages: ${need_packages[*]}"; exit 1; fi
  log "installing ${need_packages[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_packages[@]}" >&2
fi

# --- builds -------------------------------------------------------------------
log "building Larder (release)"
export LARDER_COMMIT=$(scripts/commit-id.sh)   # recorded by --version and larder_build_info
scripts/build-release.sh --scratch-path "$SCRATCH" --product larder-server >&2
scripts/build-release.sh --scratch-path "$SCRATCH" --product larder >&2
BIN=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
log "building the anchor in $ANCHOR_BUILD"
make -s -C "$ANCHOR_DIR" -j2 B="$ANCHOR_BUILD" >&2
WIRE_BUILD=$(mktemp -d /tmp/wire-limit.XXXXXX)
make -s -C Benchmarks/wire-limit B="$WIRE_BUILD" >&2

# --- servers ------------------------------------------------------------------
bench_workdir larder-bench "$WIRE_BUILD"


# start_larder NAME DURABILITY: sets LARDER_PID and LARDER_PORT.
start_larder() {
  taskset -c "$SERVER_CPU" "$BIN/larder-server" --listen 127.0.0.1:0 --db "$WORKDIR/$1.sqlite" \
    --durability "$2" --no-seed 2>"$WORKDIR/$1.log" &
  LARDER_PID=$!
  PIDS+=("$LARDER_PID")
  wait_for_line "$WORKDIR/$1.log" "$LARDER_PID" "event=listening"
  LARDER_PORT=$(sed -n 's/.*event=listening address=[^ ]*:\([0-9][0-9]*\).*/\1/p' "$WORKDIR/$1.log" | head -1)
}

taskset -c "$SERVER_CPU" "$ANCHOR_BUILD/server" --host 127.0.0.1 --port "$ANCHOR_PORT" \
  --db "$WORKDIR/anchor.db" 2>"$WORKDIR/anchor.log" &
ANCHOR_PID=$!
PIDS+=("$ANCHOR_PID")
wait_for_line "$WORKDIR/anchor.log" "$ANCHOR_PID" listening

start_larder normal normal
NORMAL_PID=$LARDER_PID NORMAL_PORT=$LARDER_PORT
start_larder full full
FULL_PID=$LARDER_PID FULL_PORT=$LARDER_PORT

taskset -c "$SERVER_CPU" "$WIRE_BUILD/wire_limit" --listen 127.0.0.1:0 --max-seconds 1800 2>"$WORKDIR/wire.log" &
WIRE_PID=$!
PIDS+=("$WIRE_PID")
wait_for_line "$WORKDIR/wire.log" "$WIRE_PID" "event=listening"
WIRE_PORT=$(sed -n 's/.*address=[^ ]*:\([0-9][0-9]*\).*/\1/p' "$WORKDIR/wire.log" | head -1)

# --- runs ---------------------------------------------------------------------

RESULTS="$WORKDIR/results.jsonl"
: > "$RESULTS"
# record KIND WORKLOAD CONCURRENCY JSON: one tagged line per run.
record() {
  if [[ -z "$4" ]]; then log "no result for $1 $2 c=$3 (see the messages above)"; return 0; fi
  python3 -c 'import json,sys; d=json.loads(sys.argv[4]); d.update(kind=sys.argv[1], wl=sys.argv[2], c=int(sys.argv[3])); print(json.dumps(d))' \
    "$1" "$2" "$3" "$4" >> "$RESULTS"
}
run_anchor() {  # WORKLOAD CONCURRENCY
  local conns=$(( $2 < MAX_CONNS ? $2 : MAX_CONNS ))
  bench_wait_quiet
  log "anchor load: $1 c=$2"
  record anchor "$1" "$2" "$(taskset -c "$CLIENT_CPU" "$ANCHOR_BUILD/load" --target "127.0.0.1:$ANCHOR_PORT" \
    --workload "$1" --conns "$conns" --concurrency "$2" --warmup "$WARMUP" --duration "$DURATION" \
    --server-pid "$ANCHOR_PID")"
}
run_larder() {  # KIND PORT PID WORKLOAD CONCURRENCY
  local conns=$(( $5 < MAX_CONNS ? $5 : MAX_CONNS ))
  bench_wait_quiet
  log "larder bench ($1): $4 c=$5"
  record "$1" "$4" "$5" "$(taskset -c "$CLIENT_CPU" "$BIN/larder" bench --server "127.0.0.1:$2" --workload "$4" \
    --connections "$conns" --concurrency "$5" --warmup "${WARMUP}s" --duration "${DURATION}s" --server-pid "$3" --json)"
}

STARTED=$(date -u +%Y-%m-%dT%H:%MZ)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
  log "round $round of $ROUNDS"
  for wl in $WORKLOADS; do
    for c in $CONCURRENCIES; do
      run_anchor "$wl" "$c"
      run_larder larder "$NORMAL_PORT" "$NORMAL_PID" "$wl" "$c"
      if [[ "$wl" == create ]]; then run_larder larder-full "$FULL_PORT" "$FULL_PID" create "$c"; fi
    done
  done
  for c in $PING_CONCURRENCIES; do
    run_larder larder "$NORMAL_PORT" "$NORMAL_PID" ping "$c"
    run_larder wire-limit "$WIRE_PORT" "$WIRE_PID" ping "$c"
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || { log "a server died during the run (pid $pid)"; exit 1; }; done

# --- report -------------------------------------------------------------------
mkdir -p "$(dirname "$OUT")"
cp "$RESULTS" "${OUT%.md}.jsonl"
MACHINE="$(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), Linux $(uname -r), $(sed -n 's/^PRETTY_NAME="\(.*\)"/\1/p' /etc/os-release)"
SWIFT_VERSION=$(swift --version 2>/dev/null | head -1)
python3 - "$RESULTS" "$OUT" <<PY
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def find(kind, wl, c):
    """Every round's run of one kind, workload and concurrency."""
    return [r for r in rows if r["kind"] == kind and r["wl"] == wl and r["c"] == c]
def norm(runs):
    """The mean over rounds of calls/s, p50 µs, p99 µs, load CPU µs/call, server CPU %; errors summed."""
    if not runs:
        return None
    each = [norm1(r) for r in runs]
    mean = lambda k: sum(e[k] for e in each) / len(each)
    others = [e["others"] for e in each if e.get("others") is not None]
    return dict(rps=mean("rps"), p50=mean("p50"), p99=mean("p99"), cpu=mean("cpu"), srv=mean("srv"),
                err=sum(e["err"] for e in each), others=max(others) if others else None)
def norm1(r):
    if r["kind"] == "anchor":
        calls = r["requests"]
        cpu = r["client_cpu_pct"] / 100 * r["seconds"] * 1e6 / calls if calls else float("nan")
        return dict(rps=r["rps"], p50=r["p50_us"], p99=r["p99_us"], cpu=cpu, srv=r["server_cpu_pct"], err=r["errors"],
                    others=r.get("others_cpu_pct"))
    lat = r["latency_us"]
    return dict(rps=r["calls_per_s"], p50=lat["p50"], p99=lat["p99"], cpu=r["bench_cpu_us_per_call"] or float("nan"),
                srv=r["server_cpu_pct"], err=r["errors"] + r["lost_calls"])
def f0(x): return "–" if x is None else f"{x:,.0f}"
def f1(x): return "–" if x is None else f"{x:,.1f}"
def ratio(a, b): return "–" if not a or not b else f"{a / b:.2f}×"
out = []
out.append("# Benchmarks: Larder vs the gRPC C++ reference\n")
out.append("Written by \`scripts/bench.sh\` on $STARTED. Machine: $MACHINE. $SWIFT_VERSION.\n")
out.append("Each server pinned to CPU $SERVER_CPU (\`taskset\`), each load generator to CPU $CLIENT_CPU; "
           "${WARMUP} s warm-up then ${DURATION} s measured per run, connections = min(concurrency, $MAX_CONNS), "
           "runs alternate reference / Larder, every pair repeated in $ROUNDS rounds; each cell is the mean over the rounds. The reference is driven by its own \`load\` (exact percentiles), "
           "Larder by \`larder bench\` (HDR histogram, 3 significant digits). "
           "Larder runs with \`--durability normal\` unless marked *full*; the reference uses synchronous=NORMAL. "
           "Load average before/after: $LOAD_BEFORE / $LOAD_AFTER (a busy machine skews every number).\n")
out.append("## Reference vs Larder\n")
out.append("Noise: *others CPU %* is the most CPU that every other process on the machine used during a reference run "
           "(from the reference's own \`load\`; 100 = one core). Above ~10 the numbers of that row are not trustworthy.\n")
out.append("| workload | conc | ref calls/s | Larder calls/s | ratio | ref p50 µs | Larder p50 µs | ref p99 µs | Larder p99 µs | p99 ratio | ref server CPU % | Larder server CPU % | errors ref/Larder | others CPU % |")
out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
workloads = [w for w in "$WORKLOADS".split()]
concs = [int(c) for c in "$CONCURRENCIES".split()]
for wl in workloads:
    for c in concs:
        a, l = norm(find("anchor", wl, c)), norm(find("larder", wl, c))
        if a is None or l is None: continue
        out.append(f"| {wl} | {c} | {f0(a['rps'])} | {f0(l['rps'])} | {ratio(l['rps'], a['rps'])} | {f0(a['p50'])} | {f0(l['p50'])} "
                   f"| {f0(a['p99'])} | {f0(l['p99'])} | {ratio(l['p99'], a['p99'])} | {f1(a['srv'])} | {f1(l['srv'])} | {a['err']}/{l['err']} | {f0(a['others'])} |")
        if wl == "create":
            fl = norm(find("larder-full", wl, c))
            if fl:
                out.append(f"| create *full* | {c} | {f0(a['rps'])} | {f0(fl['rps'])} | {ratio(fl['rps'], a['rps'])} | {f0(a['p50'])} | {f0(fl['p50'])} "
                           f"| {f0(a['p99'])} | {f0(fl['p99'])} | {ratio(fl['p99'], a['p99'])} | {f1(a['srv'])} | {f1(fl['srv'])} | {a['err']}/{fl['err']} | {f0(a['others'])} |")
out.append("")
out.append("## Ping: Larder vs the wire-limit C server\n")
out.append("| conc | wire-limit calls/s | Larder calls/s | Larder / wire-limit | wire-limit p50 µs | Larder p50 µs | wire-limit p99 µs | Larder p99 µs | bench CPU µs/call (wire-limit / Larder runs) |")
out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for c in [int(c) for c in "$PING_CONCURRENCIES".split()]:
    w, l = norm(find("wire-limit", "ping", c)), norm(find("larder", "ping", c))
    if w is None or l is None: continue
    out.append(f"| {c} | {f0(w['rps'])} | {f0(l['rps'])} | {ratio(l['rps'], w['rps'])} | {f0(w['p50'])} | {f0(l['p50'])} | {f0(w['p99'])} | {f0(l['p99'])} | {w['cpu']:.2f} / {l['cpu']:.2f} |")
out.append("")
out.append("## Load generators: CPU per call\n")
out.append("Client CPU µs per call over the measurement window (reference: \`client_cpu_pct\` × seconds / calls; "
           "\`larder bench\`: getrusage). Issue 4 asks \`larder bench\` for at most half the reference's.\n")
out.append("| workload | conc | reference \`load\` µs/call | \`larder bench\` µs/call | ratio |")
out.append("|---|---:|---:|---:|---:|")
for wl in workloads:
    for c in concs:
        a, l = norm(find("anchor", wl, c)), norm(find("larder", wl, c))
        if a is None or l is None: continue
        out.append(f"| {wl} | {c} | {a['cpu']:.2f} | {l['cpu']:.2f} | {ratio(l['cpu'], a['cpu'])} |")
out.append("")
out.append("## Issue 4 targets\n")
def check(label, ok):
    out.append(f"- {'✅' if ok else '❌'} {label}")
hi = max(concs)
for wl in ("get", "list"):
    a, l = norm(find("anchor", wl, hi)), norm(find("larder", wl, hi))
    if a and l:
        check(f"{wl} at {hi}: calls/s ≥ 2× reference ({ratio(l['rps'], a['rps'])}) and p99 ≤ ½ ({ratio(l['p99'], a['p99'])})",
              l["rps"] >= 2 * a["rps"] and l["p99"] <= a["p99"] / 2)
a, l, fl = norm(find("anchor", "create", hi)), norm(find("larder", "create", hi)), norm(find("larder-full", "create", hi))
if a and l: check(f"create at {hi}, normal: ≥ 5× reference ({ratio(l['rps'], a['rps'])})", l["rps"] >= 5 * a["rps"])
if a and fl: check(f"create at {hi}, full: ≥ 2× reference at normal ({ratio(fl['rps'], a['rps'])})", fl["rps"] >= 2 * a["rps"])
pings = [c for c in [int(c) for c in "$PING_CONCURRENCIES".split()]]
if pings:
    w, l = norm(find("wire-limit", "ping", max(pings))), norm(find("larder", "ping", max(pings)))
    if w and l: check(f"ping at {max(pings)}: ≥ 60% of wire-limit ({ratio(l['rps'], w['rps'])})", l["rps"] >= 0.6 * w["rps"])
if 1 in concs:
    for wl in workloads:
        a, l = norm(find("anchor", wl, 1)), norm(find("larder", wl, 1))
        if a and l: check(f"{wl} at 1: p50 ≤ reference ({f0(l['p50'])} vs {f0(a['p50'])} µs)", l["p50"] <= a["p50"])
for wl in workloads:
    for c in concs:
        a, l = norm(find("anchor", wl, c)), norm(find("larder", wl, c))
        if a and l: check(f"bench CPU per call ≤ ½ reference load, {wl} at {c} ({l['cpu']:.2f} vs {a['cpu']:.2f} µs)", l["cpu"] <= a["cpu"] / 2)
out.append("")
out.append("Raw JSON lines: \`" + "${OUT%.md}.jsonl".split("/")[-1] + "\` (\`kind\` = anchor, larder, larder-full or wire-limit).")
# Keep the sections other scripts write between their markers (scale.sh: scale,
# bench-backends.sh: backends), in their order.
import os, re
kept = ""
if os.path.exists(sys.argv[2]):
    old = open(sys.argv[2]).read()
    for m in re.finditer(r"<!-- (\w+):begin -->.*?<!-- \1:end -->", old, re.S):
        kept += "\n" + m.group(0) + "\n"
open(sys.argv[2], "w").write("\n".join(out) + "\n" + kept)
PY
log "wrote $OUT"
cat "$OUT"
