#!/usr/bin/env bash
# gRPC over HTTP/2, side by side on this machine (issue 13 §6): the gRPC C++ reference
# server (../shared/anchors/grpc-cpp), the HTTP/2 wire-limit yardstick (Benchmarks/h2-echo)
# and larder-server, driven by two load generators:
#   - grpc-load (Benchmarks/grpc-load): the stock gRPC C++ client, GenericStub with
#     pre-encoded requests; it costs about as much CPU per call as the reference server,
#     so compare the *server CPU per call* it reports, not its calls/s;
#   - h2load (Debian nghttp2-client) through Benchmarks/h2load/h2load_run.py: a cheap
#     HTTP/2 driver sending the same pre-encoded gRPC bodies; compare calls/s and p99.
#     h2load sees only HTTP 200: every run first makes one call with the same body through
#     `nghttp -v` and reads grpc-status from its trailers, and the servers' own counters
#     are read around the run where a server has them (h2-echo: SIGUSR1 counter; the
#     reference: none, but for create the rows added to its meal_records; Larder: the
#     grpc_server_handled_total metric by grpc_code).
#
# Every server runs pinned to SERVER_CPU on a fresh database, every load generator pinned to
# CLIENT_CPU, one run at a time, loopback only. For each workload and concurrency the
# servers alternate (the order flips every round), each round repeats everything; h2-echo
# answers every call with an empty message, so it runs `ping` (grpc.health.v1 Check) only.
# Larder: LARDER=build (default) builds a release larder-server and larder as scripts/bench.sh does,
# LARDER_BIN=PATH uses that binary instead, LARDER=HOST:PORT drives a server already
# running there (LARDER_PID for its CPU, LARDER_METRICS=http://HOST:PORT/metrics for its
# counters), LARDER=off leaves it out. It listens on one port for both protocols (a server
# that does not speak gRPC over HTTP/2 is probed and its leg skipped with a clear message).
# On the Larder leg `larder bench` also drives the same server twice more: `--protocol grpc`
# (its own HTTP/2 driver, whose client CPU per call the report compares with h2load's) and the
# lean protocol, so the report compares Larder's server CPU per call over HTTP/2 and lean.
#
# Writes one JSON line per run to OUT_JSONL and a Markdown report between
# <!-- grpc:begin --> and <!-- grpc:end --> in OUT (replaced if present, else appended;
# scripts/bench.sh keeps the block). Stops only the servers it started, by PID.
# These are benchmarks, not tests: nothing fails on a slow number.
# `--smoke` (CI): builds, one short round at 4 in flight (smaller seeds), fails on any error
# status or a counter that disagrees with h2load, writes no report (~1 min plus builds).
#
# Env: DURATION=5 WARMUP=1 ROUNDS=2 CONCURRENCIES="1 16 64" WORKLOADS="get list create"
#      DRIVERS="grpc-load h2load" MAX_CONNS=4 SERVER_CPU=0 CLIENT_CPU=1
#      ANCHOR_DIR=../shared/anchors/grpc-cpp (or ../../shared/...) ANCHOR_BUILD=.build/bench-grpc/anchor
#      TOOLS_BUILD=.build/bench-grpc/tools SCRATCH=.build
#      LARDER=build|off|HOST:PORT LARDER_BIN= LARDER_PID= LARDER_METRICS=
#      LARDER_CLI= (a `larder` binary; default: beside LARDER_BIN) for the lean-protocol leg
#      OUT=docs/BENCHMARKS.md OUT_JSONL=docs/BENCHMARKS-grpc.jsonl QUIET_PCT=30 QUIET_WAIT=10
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SMOKE=""
[[ "${1:-}" == "--smoke" ]] && SMOKE=1
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
ROUNDS=${ROUNDS:-2}
CONCURRENCIES=${CONCURRENCIES:-"1 16 64"}
WORKLOADS=${WORKLOADS:-"get list create"}
DRIVERS=${DRIVERS:-"grpc-load h2load"}
SEED=()
if [[ -n "$SMOKE" ]]; then DURATION=1 WARMUP=1 ROUNDS=1 CONCURRENCIES=4 SEED=(--seed-locations 50 --seed-meals 50); fi
MAX_CONNS=${MAX_CONNS:-4}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
if [[ -z "${ANCHOR_DIR:-}" ]]; then  # ../shared from the main checkout, ../../shared from a worktree in wt/
  ANCHOR_DIR=$ROOT/../shared/anchors/grpc-cpp
  [[ -d "$ANCHOR_DIR" ]] || ANCHOR_DIR=$ROOT/../../shared/anchors/grpc-cpp
fi
ANCHOR_BUILD=${ANCHOR_BUILD:-$ROOT/.build/bench-grpc/anchor}
HAVE_ANCHOR=1
if [[ ! -f "$ANCHOR_DIR/Makefile" ]]; then
  # CI without the shared reference: the smoke still builds and runs the tools on h2-echo.
  [[ -n "$SMOKE" ]] || { echo "bench-grpc.sh: no gRPC C++ reference at $ANCHOR_DIR (set ANCHOR_DIR)" >&2; exit 1; }
  echo "bench-grpc.sh: no gRPC C++ reference at $ANCHOR_DIR: the smoke runs against h2-echo only" >&2
  HAVE_ANCHOR=""
fi
TOOLS_BUILD=${TOOLS_BUILD:-$ROOT/.build/bench-grpc/tools}
SCRATCH=${SCRATCH:-.build}
LARDER=${LARDER:-build}
LARDER_BIN=${LARDER_BIN:-}
LARDER_CLI=${LARDER_CLI:-}
OUT=${OUT:-docs/BENCHMARKS.md}
OUT_JSONL=${OUT_JSONL:-docs/BENCHMARKS-grpc.jsonl}
QUIET_PCT=${QUIET_PCT:-30}
QUIET_WAIT=${QUIET_WAIT:-10}

source scripts/lib/bench-common.sh

for tool in taskset python3 h2load nghttp make g++ cc pkg-config; do
  command -v "$tool" >/dev/null || die "needs $tool: run scripts/install-deps.sh"
done
for pc in grpc++ protobuf libnghttp2 sqlite3; do
  pkg-config --exists "$pc" || die "needs the $pc development files: run scripts/install-deps.sh"
done

# --- builds -------------------------------------------------------------------
log "building grpc_load and h2_echo in $TOOLS_BUILD, the reference in $ANCHOR_BUILD"
make -s -C Benchmarks/grpc-load -j2 B="$TOOLS_BUILD/grpc-load" >&2
make -s -C Benchmarks/h2-echo B="$TOOLS_BUILD/h2-echo" >&2
[[ -n "$HAVE_ANCHOR" ]] && make -s -C "$ANCHOR_DIR" -j2 B="$ANCHOR_BUILD" >&2
LOAD="$TOOLS_BUILD/grpc-load/grpc_load"
H2RUN=(python3 "$ROOT/Benchmarks/h2load/h2load_run.py")
if [[ "$LARDER" == build && -z "$LARDER_BIN" ]]; then
  log "building larder-server (release)"
  export LARDER_COMMIT=$(scripts/commit-id.sh)
  scripts/build-release.sh --scratch-path "$SCRATCH" --product larder-server >&2
  scripts/build-release.sh --scratch-path "$SCRATCH" --product larder >&2
  LARDER_BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/larder-server"
fi
# `larder bench` over the lean protocol on the same server, for "HTTP/2 ≤ 1.5× lean" (issue 13 §6).
[[ -z "$LARDER_CLI" && -n "$LARDER_BIN" && -x "$(dirname "$LARDER_BIN")/larder" ]] && LARDER_CLI="$(dirname "$LARDER_BIN")/larder"

# --- servers ------------------------------------------------------------------
bench_workdir larder-bench-grpc

port_of() { sed -n "s/.*$2[^ ]*address=[^ ]*:\([0-9][0-9]*\).*/\1/p" "$1" | head -1; }

if [[ -n "$HAVE_ANCHOR" ]]; then
  taskset -c "$SERVER_CPU" "$ANCHOR_BUILD/server" --host 127.0.0.1 --port 0 \
    --db "$WORKDIR/anchor.db" 2>"$WORKDIR/anchor.log" &
  ANCHOR_PID=$!
  PIDS+=("$ANCHOR_PID")
  wait_for_line "$WORKDIR/anchor.log" "$ANCHOR_PID" listening
  ANCHOR_PORT=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$WORKDIR/anchor.log" | head -1)
  [[ -n "$ANCHOR_PORT" ]] || die "no port in the reference server's log"
fi

taskset -c "$SERVER_CPU" "$TOOLS_BUILD/h2-echo/h2_echo" --listen 127.0.0.1:0 --max-seconds 3600 2>"$WORKDIR/echo.log" &
ECHO_PID=$!
PIDS+=("$ECHO_PID")
wait_for_line "$WORKDIR/echo.log" "$ECHO_PID" "event=listening"
ECHO_PORT=$(port_of "$WORKDIR/echo.log" "event=listening ")

# The Larder leg: started here (LARDER=build or LARDER_BIN) or already running (LARDER=HOST:PORT).
LARDER_ADDR="" LARDER_NOTE=""
LARDER_METRICS=${LARDER_METRICS:-}
if [[ "$LARDER" != off ]]; then
  if [[ -n "$LARDER_BIN" ]]; then
    taskset -c "$SERVER_CPU" "$LARDER_BIN" --listen 127.0.0.1:0 --db "$WORKDIR/larder.sqlite" --durability normal \
      --no-seed --metrics-listen 127.0.0.1:0 2>"$WORKDIR/larder.log" &
    LARDER_PID=$!
    PIDS+=("$LARDER_PID")
    wait_for_line "$WORKDIR/larder.log" "$LARDER_PID" "event=listening"
    LARDER_ADDR="127.0.0.1:$(port_of "$WORKDIR/larder.log" "event=listening ")"
    mport=$(port_of "$WORKDIR/larder.log" "event=metrics_listening ")
    [[ -n "$mport" ]] && LARDER_METRICS="http://127.0.0.1:$mport/metrics"
  else
    LARDER_ADDR=$LARDER
    LARDER_PID=${LARDER_PID:-0}
  fi
  if probe=$("$LOAD" --target "$LARDER_ADDR" --probe --connect-timeout 5 2>/dev/null); then
    log "larder-server at $LARDER_ADDR speaks gRPC over HTTP/2: $probe"
  else
    LARDER_NOTE="larder-server does not speak gRPC over HTTP/2 yet (probe at $LARDER_ADDR: ${probe:-no answer}); the Larder leg is skipped"
    log "$LARDER_NOTE"
    LARDER_ADDR=""
    if [[ -n "$LARDER_BIN" ]]; then kill -TERM "$LARDER_PID" 2>/dev/null || true; wait "$LARDER_PID" 2>/dev/null || true; fi
  fi
fi

# Request bodies for h2load, per server (seeded where the server keeps data).
mkdir -p "$WORKDIR/bodies-anchor" "$WORKDIR/bodies-echo" "$WORKDIR/bodies-larder"
[[ -n "$HAVE_ANCHOR" ]] && "$LOAD" --target "127.0.0.1:$ANCHOR_PORT" --write-bodies "$WORKDIR/bodies-anchor" "${SEED[@]}" >/dev/null
"$LOAD" --target "127.0.0.1:$ECHO_PORT" --write-bodies "$WORKDIR/bodies-echo" --seed-locations 0 --seed-meals 0 >/dev/null
[[ -n "$LARDER_ADDR" ]] && "$LOAD" --target "$LARDER_ADDR" --write-bodies "$WORKDIR/bodies-larder" "${SEED[@]}" >/dev/null

# --- runs ---------------------------------------------------------------------
wait_quiet() { [[ -n "$SMOKE" ]] || bench_wait_quiet; }

# run_bench ROUND WORKLOAD CONCURRENCY PROTOCOL: `larder bench --protocol PROTOCOL --json` on the
# Larder leg, as a row like the others (driver "lean", or "bench-grpc" for --protocol grpc).
run_bench() {
  [[ -n "$LARDER_ADDR" && -n "$LARDER_CLI" ]] || return 0
  local conns=$(( $3 < MAX_CONNS ? $3 : MAX_CONNS )) line="" driver=lean
  [[ $4 == grpc ]] && driver=bench-grpc
  wait_quiet
  log "round $1: larder bench --protocol $4 -> larder $2 c=$3"
  line=$(taskset -c "$CLIENT_CPU" "$LARDER_CLI" bench --server "$LARDER_ADDR" --protocol "$4" --workload "$2" \
    --connections "$conns" --concurrency "$3" --warmup "${WARMUP}s" --duration "${DURATION}s" --server-pid "$LARDER_PID" \
    "${SEED[@]}" --json 2>"$WORKDIR/bench.err") || true
  [[ -n "$line" ]] || sed 's/^/  /' "$WORKDIR/bench.err" >&2
  [[ -n "$line" ]] && line=$(python3 "$ROOT/Benchmarks/grpc-load/lean_row.py" "$line" "$LARDER_ADDR" "$driver") || line=""
  record "$1" "$line"
}
# run_lean ROUND WORKLOAD CONCURRENCY: both `larder bench` rows, the HTTP/2 one first on odd rounds.
run_lean() {
  if (( $1 % 2 == 1 )); then run_bench "$@" grpc; run_bench "$@" lean
  else run_bench "$@" lean; run_bench "$@" grpc; fi
}

RESULTS="$WORKDIR/results.jsonl"
: > "$RESULTS"
FAILURES=0
record() {  # ROUND JSON
  if [[ -z "$2" ]]; then log "no result (see the messages above)"; FAILURES=$((FAILURES + 1)); return 0; fi
  python3 -c 'import json,sys; d=json.loads(sys.argv[2]); d["round"]=int(sys.argv[1]); print(json.dumps(d))' "$1" "$2" >> "$RESULTS"
}
method_of() {
  case $1 in
    get) echo /larder.v1.LocationService/GetLocation ;;
    list) echo /larder.v1.MealRecordService/ListMealRecords ;;
    create) echo /larder.v1.MealRecordService/CreateMealRecord ;;
    ping) echo /grpc.health.v1.Health/Check ;;
  esac
}
# run ROUND SERVER DRIVER WORKLOAD CONCURRENCY
run() {
  local round=$1 server=$2 driver=$3 wl=$4 c=$5 addr pid bodies check=()
  local conns=$(( c < MAX_CONNS ? c : MAX_CONNS ))
  case $server in
    reference) addr="127.0.0.1:$ANCHOR_PORT" pid=$ANCHOR_PID bodies=anchor
               [[ $wl == create ]] && check=(--sqlite-db "$WORKDIR/anchor.db") ;;
    h2-echo) addr="127.0.0.1:$ECHO_PORT" pid=$ECHO_PID bodies=echo check=(--echo-log "$WORKDIR/echo.log") ;;
    larder) addr=$LARDER_ADDR pid=$LARDER_PID bodies=larder
            [[ -n "$LARDER_METRICS" ]] && check=(--metrics "$LARDER_METRICS") ;;
  esac
  wait_quiet
  log "round $round: $driver -> $server $wl c=$c"
  local line=""
  if [[ $driver == grpc-load ]]; then
    local seed=("${SEED[@]}")
    [[ $server == h2-echo ]] && seed=(--seed-locations 0 --seed-meals 0)
    line=$(taskset -c "$CLIENT_CPU" "$LOAD" --target "$addr" --workload "$wl" --conns "$conns" --concurrency "$c" \
      --warmup "$WARMUP" --duration "$DURATION" --server-pid "$pid" --label "$server" "${seed[@]}") || true
  else
    line=$(taskset -c "$CLIENT_CPU" "${H2RUN[@]}" --target "$addr" --path "$(method_of "$wl")" \
      --body "$WORKDIR/bodies-$bodies/$wl.grpc" --workload "$wl" --label "$server" --concurrency "$c" --conns "$conns" \
      --warmup "$WARMUP" --duration "$DURATION" --server-pid "$pid" "${check[@]}") || true
  fi
  record "$round" "$line"
}

SERVERS=()
[[ -n "$HAVE_ANCHOR" ]] && SERVERS+=(reference)
[[ -n "$LARDER_ADDR" ]] && SERVERS+=(larder)
STARTED=$(date -u +%Y-%m-%dT%H:%MZ)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  order=("${SERVERS[@]}")
  (( round % 2 == 0 )) && order=($(printf '%s\n' "${SERVERS[@]}" | tac))
  for wl in $WORKLOADS; do
    for c in $CONCURRENCIES; do
      for driver in $DRIVERS; do
        for server in "${order[@]}"; do run "$round" "$server" "$driver" "$wl" "$c"; done
      done
      run_lean "$round" "$wl" "$c"
    done
  done
  for c in $CONCURRENCIES; do
    for driver in $DRIVERS; do
      pservers=(h2-echo)
      [[ -n "$LARDER_ADDR" ]] && pservers=(h2-echo larder)
      (( round % 2 == 0 )) && pservers=($(printf '%s\n' "${pservers[@]}" | tac))
      for server in "${pservers[@]}"; do run "$round" "$server" "$driver" ping "$c"; done
    done
    run_lean "$round" ping "$c"
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(( $(date +%s) - T0 ))
for pid in "${PIDS[@]}"; do
  [[ -z "$LARDER_ADDR" && "$pid" == "${LARDER_PID:-}" ]] && continue  # stopped above: the leg was skipped
  kill -0 "$pid" 2>/dev/null || die "a server died during the run (pid $pid)"
done

# --- checks and report ----------------------------------------------------------
MACHINE="$(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), Linux $(uname -r)"
COMMAND_LINE="$(for v in DURATION WARMUP ROUNDS CONCURRENCIES WORKLOADS; do printf '%s="%s" ' "$v" "${!v}"; done)scripts/bench-grpc.sh${SMOKE:+ --smoke}"
export COMMAND_LINE STARTED LOAD_BEFORE LOAD_AFTER ELAPSED MACHINE DURATION WARMUP ROUNDS SERVER_CPU CLIENT_CPU MAX_CONNS LARDER_NOTE SMOKE
python3 "$ROOT/Benchmarks/grpc-load/bench_grpc_report.py" "$RESULTS" "$OUT" || FAILURES=$((FAILURES + 1))
if [[ -z "$SMOKE" ]]; then
  cp "$RESULTS" "$OUT_JSONL"
  log "wrote $OUT (block grpc) and $OUT_JSONL"
fi
(( FAILURES == 0 )) || die "$FAILURES run(s) failed or disagreed with the servers' counters"
log "done in ${ELAPSED} s"
