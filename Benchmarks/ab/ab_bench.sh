#!/usr/bin/env bash
# A/B of two release builds of Larder on this machine, side by side in one run:
#
#   Benchmarks/ab/ab_bench.sh BEFORE_BIN_DIR AFTER_BIN_DIR > results.jsonl
#
# Each BIN_DIR holds a release larder-server and larder (swift build -c release; see
# docs/BENCHMARKS.md for how the issue-12 A/B built them in `git worktree`s). Both servers
# run at once, each pinned to SERVER_CPU (scripts/bench.sh's convention) on a fresh
# database with --durability normal --no-seed; every `larder bench` is pinned to
# CLIENT_CPU and is the one built with the server it drives. For each round and workload
# the two sides run one after the other, the order flipping every round; nothing else
# runs meanwhile. One JSON line per run on stdout (larder bench --json plus side, round),
# a summary with the after/before ratios of the medians on stderr. Stops only the servers
# it started, by PID. Every run is bounded (WARMUP + DURATION s).
#
# PROTOCOLS="lean grpc" runs each workload over both of `larder bench --protocol`'s transports
# (default: lean only), so an HTTP/2 change is read beside the lean path of the same servers;
# BENCH_CLI=PATH drives both sides with one `larder` (the same client, when the change under
# test is in code the bench shares with the server, e.g. LarderHTTP2).
#
# Env: ROUNDS=3 WORKLOADS="get list create" PROTOCOLS=lean CONCURRENCY=64 CONNS=4 WARMUP=1
#      DURATION=5 SERVER_CPU=0 CLIENT_CPU=1 BENCH_CLI=
set -euo pipefail
(( $# == 2 )) || { echo "usage: $0 BEFORE_BIN_DIR AFTER_BIN_DIR" >&2; exit 2; }
BEFORE=$1 AFTER=$2
ROUNDS=${ROUNDS:-3}
WORKLOADS=${WORKLOADS:-"get list create"}
PROTOCOLS=${PROTOCOLS:-lean}
BENCH_CLI=${BENCH_CLI:-}
CONCURRENCY=${CONCURRENCY:-64}
CONNS=${CONNS:-4}
WARMUP=${WARMUP:-1}
DURATION=${DURATION:-5}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
log() { echo "ab_bench.sh: $(date -u +%H:%M:%S) $*" >&2; }
for side in "$BEFORE" "$AFTER"; do
  [[ -x "$side/larder-server" && -x "$side/larder" ]] || { log "no larder-server and larder in $side"; exit 1; }
done

WORKDIR=$(mktemp -d /tmp/larder-ab.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  done
  rm -rf "$WORKDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A PORT PID BIN=([before]=$BEFORE [after]=$AFTER)
for side in before after; do
  taskset -c "$SERVER_CPU" "${BIN[$side]}/larder-server" --listen 127.0.0.1:0 --db "$WORKDIR/$side.sqlite" \
    --durability normal --no-seed 2>"$WORKDIR/$side.log" &
  PID[$side]=$!
  PIDS+=("${PID[$side]}")
  for _ in $(seq 200); do grep -q "event=listening" "$WORKDIR/$side.log" && break; sleep 0.1; done
  PORT[$side]=$(sed -n 's/.*event=listening address=[^ ]*:\([0-9][0-9]*\).*/\1/p' "$WORKDIR/$side.log" | head -1)
  [[ -n "${PORT[$side]}" ]] || { log "$side server did not start:"; cat "$WORKDIR/$side.log" >&2; exit 1; }
  log "$side: $("${BIN[$side]}/larder-server" --version 2>&1 | head -1) on port ${PORT[$side]}"
done

RESULTS="$WORKDIR/results.jsonl"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
  order=(before after)
  (( round % 2 == 0 )) && order=(after before)
  for wl in $WORKLOADS; do
   for proto in $PROTOCOLS; do
    for side in "${order[@]}"; do
      log "round $round: $side $wl $proto c=$CONCURRENCY"
      # --protocol only when asked for: `larder bench` before issue 13 has no such flag.
      protocol_flag=()
      [[ $PROTOCOLS != lean ]] && protocol_flag=(--protocol "$proto")
      line=$(taskset -c "$CLIENT_CPU" "${BENCH_CLI:-${BIN[$side]}/larder}" bench --server "127.0.0.1:${PORT[$side]}" \
        "${protocol_flag[@]}" --workload "$wl" \
        --connections "$CONNS" --concurrency "$CONCURRENCY" --warmup "${WARMUP}s" --duration "${DURATION}s" \
        --server-pid "${PID[$side]}" --json) || { log "bench failed"; continue; }
      python3 -c 'import json,sys; d=json.loads(sys.argv[1]); [d.pop(k, None) for k in ("timeline", "histogram")]; d.update(side=sys.argv[2], round=int(sys.argv[3]), wl=sys.argv[4] if sys.argv[5] == "lean" else sys.argv[4] + "/" + sys.argv[5], loadavg=open("/proc/loadavg").read().split()[:3]); print(json.dumps(d))' \
        "$line" "$side" "$round" "$wl" "$proto" | tee -a "$RESULTS"
    done
   done
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || { log "a server died during the run (pid $pid)"; exit 1; }; done
log "load average before / after: $LOAD_BEFORE / $LOAD_AFTER"
python3 - "$RESULTS" <<'PY' >&2
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def m(side, wl, f):
    v = [f(r) for r in rows if r["side"] == side and r["wl"] == wl]
    return statistics.median(v) if v else None, v
print("| workload | calls/s before | calls/s after | after/before | p99 µs before | p99 µs after | p99 × | server µs/call before | after | × | bench µs/call before | after |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def srv(r):
    """Server CPU µs per call (older benches report only the percentage)."""
    if r.get("server_cpu_us_per_call") is not None:
        return r["server_cpu_us_per_call"]
    if r.get("server_cpu_pct") is None or not r.get("calls"):
        return float("nan")
    return r["server_cpu_pct"] / 100 * r["seconds"] * 1e6 / r["calls"]
notes = []
for wl in dict.fromkeys(r["wl"] for r in rows):
    (rb, rbv), (ra, rav) = m("before", wl, lambda r: r["calls_per_s"]), m("after", wl, lambda r: r["calls_per_s"])
    (pb, _), (pa, _) = m("before", wl, lambda r: r["latency_us"]["p99"]), m("after", wl, lambda r: r["latency_us"]["p99"])
    (sb, _), (sa, _) = m("before", wl, srv), m("after", wl, srv)
    (cb, _), (ca, _) = m("before", wl, lambda r: r.get("bench_cpu_us_per_call") or float("nan")), m("after", wl, lambda r: r.get("bench_cpu_us_per_call") or float("nan"))
    pairs = {}
    for r in rows:
        if r["wl"] == wl:
            pairs.setdefault(r["round"], {})[r["side"]] = r
    per_round = [p["after"]["calls_per_s"] / p["before"]["calls_per_s"] for p in pairs.values() if len(p) == 2]
    notes.append(f"{wl}: after/before calls/s per round: " + ", ".join(f"{x:.2f}" for x in per_round)
          + "; server µs/call per round: " + ", ".join(f"{srv(p['after']) / srv(p['before']):.2f}" for p in pairs.values() if len(p) == 2))
    print(f"| {wl} | {rb:,.0f} ({min(rbv):,.0f}–{max(rbv):,.0f}) | {ra:,.0f} ({min(rav):,.0f}–{max(rav):,.0f}) | {ra/rb:.2f}× | {pb:,.0f} | {pa:,.0f} | {pa/pb:.2f}× | {sb:.2f} | {sa:.2f} | {sa/sb:.2f}× | {cb:.2f} | {ca:.2f} |")
print()
print("\n".join(notes))
for wl in dict.fromkeys(r["wl"] for r in rows if r["wl"].endswith("/grpc")):
    lean = wl.removesuffix("/grpc")
    if not any(r["wl"] == lean for r in rows):
        continue
    print(f"{lean}: server µs/call HTTP/2 over lean (medians): "
          + ", ".join(f"{side} {m(side, wl, srv)[0] / m(side, lean, srv)[0]:.2f}×" for side in ("before", "after")))
PY
