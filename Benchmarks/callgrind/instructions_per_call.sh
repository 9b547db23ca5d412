#!/usr/bin/env bash
# User-space instructions larder-server executes per call, counted by valgrind's callgrind:
# the same count for the same binary and load whatever else the machine is doing, so two
# builds compare on a busy machine where CPU-time A/Bs move ±5% from run to run.
#
#   Benchmarks/callgrind/instructions_per_call.sh BIN... > results.jsonl
#
# For each release larder-server BIN: a copy without debug info (valgrind 3.19 cannot read
# the DWARF 5 Swift emits) runs under callgrind on 127.0.0.1:0 with a fresh database
# (--durability normal --no-seed); a warm-up run seeds it; the counters are zeroed; a measured
# run of REQUESTS calls follows; the counters are dumped. One JSON line per BIN on stdout:
# instructions per call = the dump's total / REQUESTS (everything the server ran meanwhile,
# the calls that seeded the measured run included: 10 of them). Kernel time is not counted:
# read the CPU A/Bs (ab/) for that, and for how a faster server's smaller read batches cost
# it more system calls per call.
#
# Env: DRIVER=grpc-load (the gRPC C++ client, .build/bench-grpc/tools; scripts/bench-grpc.sh
#      --smoke builds it) | lean | grpc (`larder bench --protocol`, the larder beside BIN or
#      LARDER_CLI); WORKLOAD=get (get|list|create|ping); REQUESTS=20000; CONCURRENCY=64 on one
#      connection; WARMUP_REQUESTS=2000. Every run is bounded (timeout, --max-seconds).
set -euo pipefail
(( $# >= 1 )) || { echo "usage: $0 LARDER_SERVER_BIN..." >&2; exit 2; }
cd "$(dirname "$0")/../.."
DRIVER=${DRIVER:-grpc-load}
WORKLOAD=${WORKLOAD:-get}
REQUESTS=${REQUESTS:-20000}
CONCURRENCY=${CONCURRENCY:-64}
WARMUP_REQUESTS=${WARMUP_REQUESTS:-2000}
LOAD=${TOOLS_BUILD:-.build/bench-grpc/tools}/grpc-load/grpc_load
command -v valgrind >/dev/null || { echo "$0: valgrind is not installed" >&2; exit 2; }
[[ $DRIVER != grpc-load || -x $LOAD ]] || { echo "$0: no $LOAD (run scripts/bench-grpc.sh --smoke)" >&2; exit 2; }
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
  [[ -n $SERVER_PID ]] && kill -KILL "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# drive PORT REQUESTS SEED_LOCATIONS SEED_MEALS OUT: one closed-loop run of the chosen driver.
drive() {
  local port=$1 requests=$2 locations=$3 meals=$4 out=$5
  if [[ $DRIVER == grpc-load ]]; then
    timeout 600 "$LOAD" --target "127.0.0.1:$port" --workload "$WORKLOAD" --conns 1 --concurrency "$CONCURRENCY" \
      --warmup 0 --requests "$requests" --max-seconds 500 --seed-locations "$locations" --seed-meals "$meals" > "$out"
  else
    timeout 600 "$CLI" bench --server "127.0.0.1:$port" --protocol "$DRIVER" --workload "$WORKLOAD" --connections 1 \
      --concurrency "$CONCURRENCY" --warmup 0s --requests "$requests" --seed-locations "$locations" \
      --seed-meals "$meals" --time-limit 500s --json > "$out" 2>"$WORK/bench.err"
  fi
}

for BIN in "$@"; do
  CLI=${LARDER_CLI:-$(dirname "$BIN")/larder}
  [[ $DRIVER == grpc-load || -x $CLI ]] || { echo "$0: no larder beside $BIN (set LARDER_CLI)" >&2; exit 2; }
  cp "$BIN" "$WORK/server" && strip --strip-debug "$WORK/server"
  rm -f "$WORK"/db.sqlite* "$WORK"/callgrind.out*
  valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.out" \
    "$WORK/server" --listen 127.0.0.1:0 --db "$WORK/db.sqlite" --durability normal --no-seed 2>"$WORK/server.log" &
  SERVER_PID=$!
  port=""
  for _ in $(seq 600); do
    port=$(sed -n 's/.*event=listening [^ ]*address=[^ ]*:\([0-9][0-9]*\).*/\1/p' "$WORK/server.log" | head -1)
    [[ -n $port ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.1
  done
  [[ -n $port ]] || { echo "$0: $BIN did not start under valgrind" >&2; exit 1; }
  drive "$port" "$WARMUP_REQUESTS" 1000 500 "$WORK/warmup.json"
  callgrind_control -z "$SERVER_PID" >/dev/null 2>&1
  drive "$port" "$REQUESTS" 10 1 "$WORK/run.json"
  callgrind_control -d "$SERVER_PID" >/dev/null 2>&1
  kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  dump=$(ls -t "$WORK"/callgrind.out.* | head -1)
  total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
  python3 - "$BIN" "$DRIVER" "$WORKLOAD" "$REQUESTS" "$CONCURRENCY" "$total" "$WORK/run.json" <<'PY'
import json, sys
bin_, driver, workload, requests, concurrency, total, run = sys.argv[1:]
report = json.load(open(run))
print(json.dumps({"bin": bin_, "driver": driver, "workload": workload, "requests": int(requests),
                  "concurrency": int(concurrency), "instructions": int(total),
                  "instructions_per_call": round(int(total) / int(requests)), "errors": report.get("errors")}))
PY
done
