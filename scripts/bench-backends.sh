#!/usr/bin/env bash
# Benchmarks larder-server with `larder bench` on SQLite, and on PostgreSQL with
# one and with two replicas sharing one database, and prints a Markdown table
# (the source of the PostgreSQL rows in docs/BENCHMARKS.md).
#
#   scripts/bench-backends.sh                      # workloads mix, create, get; 10 s each
#   WORKLOADS="mix" DURATION=20s CONCURRENCY=128 scripts/bench-backends.sh
#   SERVER_ARGS="--readers 4" WORKLOADS=get scripts/bench-backends.sh   # extra larder-server flags
#
# Everything runs on 127.0.0.1. PostgreSQL is a throwaway cluster from
# scripts/postgres-test-cluster.sh with fsync on (crash-safe defaults); every
# run gets a fresh database (SQLite file or PostgreSQL database), and the
# servers run with their defaults (--durability full). Two replicas are
# measured as a TCP load balancer would spread clients: one `larder bench` per
# replica, each with half the calls in flight, run at the same time; calls/s
# are summed, latency is the worse of the two.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10s}
CONCURRENCY=${CONCURRENCY:-64}
read -r -a SERVER_ARGS <<<"${SERVER_ARGS:-}"
WORKLOADS=${WORKLOADS:-mix create get}
export LARDER_PG_PORT=${LARDER_PG_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
export LARDER_PG_DIR=${LARDER_PG_DIR:-${TMPDIR:-/tmp}/larder-postgres-bench-$$}
export LARDER_PG_FSYNC=on

scripts/build-release.sh --product larder-server >&2
scripts/build-release.sh --product larder >&2
BIN=$(swift build -c release --show-bin-path)
WORK=$(mktemp -d)
SERVERS=()

stop_servers() {
  for pid in "${SERVERS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${SERVERS[@]}"; do wait "$pid" 2>/dev/null || true; done
  SERVERS=()
}
cleanup() {
  stop_servers
  scripts/postgres-test-cluster.sh stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

ADMIN=$(scripts/postgres-test-cluster.sh start)

# start_server DB LOG: starts larder-server on an ephemeral port, sets PORT.
start_server() {
  : >"$2"
  "$BIN/larder-server" --listen 127.0.0.1:0 --db "$1" "${SERVER_ARGS[@]}" >/dev/null 2>"$2" &
  SERVERS+=($!)
  for _ in $(seq 200); do
    PORT=$(sed -n 's/.*event=listening address=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$2" | head -n 1)
    [[ -n "$PORT" ]] && return
    sleep 0.05
  done
  echo "bench-backends: larder-server did not start:" >&2
  cat "$2" >&2
  exit 1
}

# bench PORT CONCURRENCY WORKLOAD OUT: one larder bench run, JSON into OUT.
bench() {
  "$BIN/larder" --server "127.0.0.1:$1" bench --workload "$3" --concurrency "$2" --duration "$DURATION" \
    --warmup 2s --json >"$4" 2>>"$WORK/bench.log" || true
}

summarize() {  # JSON files -> "calls/s | p50 ms | p99 ms | errors"
  python3 - "$@" <<'PY'
import json, sys
runs = [json.load(open(path)) for path in sys.argv[1:]]
rate = sum(r["calls_per_s"] for r in runs)
p50 = max(r["latency_us"]["p50"] for r in runs) / 1000
p99 = max(r["latency_us"]["p99"] for r in runs) / 1000
errors = sum(r["errors"] for r in runs)
# A run that lost calls, left scheduled calls unsent or stopped short did not measure what the
# table says: its row says so (the bench exited 1; the exit status is not checked above).
problems = [f"{n} {what}" for what, n in (
    ("lost", sum(r.get("lost_calls", 0) for r in runs)),
    ("unsent", sum(r.get("unsent_calls", 0) for r in runs))) if n]
problems += [f"stopped: {r['stopped_by']}" for r in runs if r.get("stopped_by")]
note = f" ({'; '.join(problems)})" if problems else ""
print(f"{rate:,.0f} | {p50:.2f} | {p99:.2f} | {errors}{note}")
PY
}

run=0
echo "| workload | backend | calls/s | p50 ms | p99 ms | errors |"
echo "|---|---|---:|---:|---:|---:|"
for workload in $WORKLOADS; do
  run=$((run + 1))
  # SQLite, one server.
  start_server "$WORK/bench-$run.sqlite" "$WORK/sqlite-$run.log"
  bench "$PORT" "$CONCURRENCY" "$workload" "$WORK/sqlite-$run.json"
  stop_servers
  echo "| $workload | SQLite, 1 server | $(summarize "$WORK/sqlite-$run.json") |"

  # PostgreSQL, one replica.
  psql "$ADMIN" -qc "CREATE DATABASE bench_one_$run"
  url="${ADMIN%/*}/bench_one_$run"
  start_server "$url" "$WORK/pg1-$run.log"
  bench "$PORT" "$CONCURRENCY" "$workload" "$WORK/pg1-$run.json"
  stop_servers
  echo "| $workload | PostgreSQL, 1 replica | $(summarize "$WORK/pg1-$run.json") |"

  # PostgreSQL, two replicas on one database, half the load each, at the same time.
  psql "$ADMIN" -qc "CREATE DATABASE bench_two_$run"
  url="${ADMIN%/*}/bench_two_$run"
  start_server "$url" "$WORK/pg2a-$run.log"
  port_a=$PORT
  start_server "$url" "$WORK/pg2b-$run.log"
  port_b=$PORT
  bench "$port_a" $((CONCURRENCY / 2)) "$workload" "$WORK/pg2a-$run.json" &
  first=$!
  bench "$port_b" $((CONCURRENCY / 2)) "$workload" "$WORK/pg2b-$run.json"
  wait "$first"
  stop_servers
  echo "| $workload | PostgreSQL, 2 replicas | $(summarize "$WORK/pg2a-$run.json" "$WORK/pg2b-$run.json") |"
done
