#!/usr/bin/env bash
# The same gRPC C++ client (grpc-load) on the reference server, a base Larder and a new Larder,
# side by side in one run (issue 13 §6: Larder's server CPU per call against the reference's):
#
#   Benchmarks/ab/grpc_load_ab.sh BASE_BIN_DIR NEW_BIN_DIR > results.jsonl
#
# Each BIN_DIR holds a release larder-server (scripts/build-release.sh --product larder-server).
# The reference (../shared/anchors/grpc-cpp) and grpc_load come built as scripts/bench-grpc.sh
# builds them (ANCHOR_BUILD, TOOLS_BUILD; run `scripts/bench-grpc.sh --smoke` once to build them).
# All three servers run at once, each pinned to SERVER_CPU on a fresh database (Larder with
# --durability normal --no-seed); grpc_load is pinned to CLIENT_CPU and seeds each server itself.
# For each round and workload the three run one after the other, the order rotating every round;
# nothing else of ours runs meanwhile. One JSON line per run on stdout (grpc_load's line plus
# side and round), and on stderr a table of the medians of the server CPU µs per call (from
# /proc/PID/stat, read by grpc_load around its window) with the ratios to the reference and
# new/base, and each round's ratios. Stops only the servers it started, by PID. Every run is
# bounded (WARMUP + DURATION s, grpc_load's --max-seconds).
#
# Env: ROUNDS=3 WORKLOADS="get create" CONCURRENCY=64 CONNS=4 WARMUP=1 DURATION=4
#      RATE=0 (calls per second started by grpc_load --rate, at most CONCURRENCY in flight: the
#      servers compared at one load below what saturates the client; 0: the closed loop)
#      BASE_ARGS="" NEW_ARGS="" (more larder-server flags for one side, e.g. NEW_ARGS="--readers 4";
#      the same directory may then be both sides)
#      SERVER_CPU=0 CLIENT_CPU=1 ANCHOR_BUILD=.build/bench-grpc/anchor TOOLS_BUILD=.build/bench-grpc/tools
set -euo pipefail
(( $# == 2 )) || { echo "usage: $0 BASE_BIN_DIR NEW_BIN_DIR" >&2; exit 2; }
BASE=$1 NEW=$2
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
WORKLOADS=${WORKLOADS:-"get create"}
CONCURRENCY=${CONCURRENCY:-64}
CONNS=${CONNS:-4}
BASE_ARGS=${BASE_ARGS:-}
NEW_ARGS=${NEW_ARGS:-}
WARMUP=${WARMUP:-1}
DURATION=${DURATION:-4}
RATE=${RATE:-0}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
ANCHOR_BUILD=${ANCHOR_BUILD:-.build/bench-grpc/anchor}
TOOLS_BUILD=${TOOLS_BUILD:-.build/bench-grpc/tools}
LOAD=$TOOLS_BUILD/grpc-load/grpc_load
BENCH_NAME=grpc_load_ab.sh
source scripts/lib/bench-common.sh

[[ -x "$ANCHOR_BUILD/server" ]] || die "no reference server at $ANCHOR_BUILD/server (set ANCHOR_BUILD)"
[[ -x "$LOAD" ]] || die "no grpc_load at $LOAD (set TOOLS_BUILD)"
for side in "$BASE" "$NEW"; do [[ -x "$side/larder-server" ]] || die "no larder-server in $side"; done

bench_workdir larder-grpc-ab
declare -A ADDR PID
taskset -c "$SERVER_CPU" "$ANCHOR_BUILD/server" --host 127.0.0.1 --port 0 --db "$WORKDIR/anchor.db" \
  2>"$WORKDIR/reference.log" &
PID[reference]=$!
PIDS+=("${PID[reference]}")
wait_for_line "$WORKDIR/reference.log" "${PID[reference]}" listening
ADDR[reference]=127.0.0.1:$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$WORKDIR/reference.log" | head -1)
declare -A BIN=([base]=$BASE [new]=$NEW)
declare -A EXTRA=([base]=$BASE_ARGS [new]=$NEW_ARGS)
for side in base new; do
  # shellcheck disable=SC2086 # BASE_ARGS / NEW_ARGS are flag lists
  taskset -c "$SERVER_CPU" "${BIN[$side]}/larder-server" --listen 127.0.0.1:0 --db "$WORKDIR/$side.sqlite" \
    --durability normal --no-seed ${EXTRA[$side]} 2>"$WORKDIR/$side.log" &
  PID[$side]=$!
  PIDS+=("${PID[$side]}")
  wait_for_line "$WORKDIR/$side.log" "${PID[$side]}" "event=listening"
  ADDR[$side]=127.0.0.1:$(sed -n 's/.*event=listening address=[^ ]*:\([0-9][0-9]*\).*/\1/p' "$WORKDIR/$side.log" | head -1)
  log "$side: $("${BIN[$side]}/larder-server" --version 2>&1 | head -1) at ${ADDR[$side]}"
done
log "reference at ${ADDR[reference]}"

RESULTS="$WORKDIR/results.jsonl"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
SIDES=(reference base new)
for round in $(seq "$ROUNDS"); do
  shift_by=$(( (round - 1) % 3 ))
  order=("${SIDES[@]:$shift_by}" "${SIDES[@]:0:$shift_by}")
  for wl in $WORKLOADS; do
    for side in "${order[@]}"; do
      log "round $round: $side $wl c=$CONCURRENCY"
      line=$(taskset -c "$CLIENT_CPU" "$LOAD" --target "${ADDR[$side]}" --workload "$wl" --conns "$CONNS" \
        --concurrency "$CONCURRENCY" --warmup "$WARMUP" --duration "$DURATION" --server-pid "${PID[$side]}" \
        --rate "$RATE" --label "$side") || { log "grpc_load failed"; continue; }
      python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(side=sys.argv[2], round=int(sys.argv[3])); print(json.dumps(d))' \
        "$line" "$side" "$round" | tee -a "$RESULTS"
    done
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || die "a server died during the run (pid $pid)"; done
log "load average before / after: $LOAD_BEFORE / $LOAD_AFTER"
python3 - "$RESULTS" <<'PY' >&2
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(side, wl, key):
    v = [r[key] for r in rows if r["side"] == side and r["workload"] == wl and r.get(key) is not None]
    return statistics.median(v) if v else float("nan")
print("| workload | calls/s (reference, base, new) | reference | base | new | base/reference | new/reference (per round) | new/base (per round) | p99 new/reference | errors | others % |")
print("|---|---|---:|---:|---:|---:|---|---|---:|---:|---|")
for wl in dict.fromkeys(r["workload"] for r in rows):
    s = {side: med(side, wl, "server_cpu_us_per_call") for side in ("reference", "base", "new")}
    rounds = {}
    for r in rows:
        if r["workload"] == wl:
            rounds.setdefault(r["round"], {})[r["side"]] = r["server_cpu_us_per_call"]
    full = [v for _, v in sorted(rounds.items()) if len(v) == 3]
    per_ref = ", ".join(f"{v['new'] / v['reference']:.2f}" for v in full)
    per_base = ", ".join(f"{v['new'] / v['base']:.2f}" for v in full)
    p99 = med("new", wl, "p99_us") / med("reference", wl, "p99_us")
    errors = sum(r["errors"] for r in rows if r["workload"] == wl)
    others = [r["others_cpu_pct"] for r in rows if r["workload"] == wl]
    rps = "/".join(f"{med(side, wl, 'rps'):.0f}" for side in ("reference", "base", "new"))
    print(f"| {wl} | {rps} | {s['reference']:.1f} | {s['base']:.1f} | {s['new']:.1f} | {s['base'] / s['reference']:.2f}× "
          f"| {s['new'] / s['reference']:.2f}× ({per_ref}) | {s['new'] / s['base']:.2f}× ({per_base}) | {p99:.2f}× "
          f"| {errors} | {min(others):.0f}–{max(others):.0f} |")
PY
