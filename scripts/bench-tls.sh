#!/usr/bin/env bash
# TLS against cleartext on one larder-server (issue 15), side by side in one run:
#   1. get at 64 in flight (4 connections x 16), cleartext and TLS on the same server and port,
#      alternating each round: the lean protocol and gRPC over HTTP/2 through `larder bench`
#      (--tls: ALPN larder / h2), and HTTP/2 through h2load (h2c vs https, ALPN h2). Every
#      driver sends GetLocation for one fixed id, so the work per call is the same; reported:
#      calls/s, p99 and the server's CPU per call (/proc/PID/stat), medians over ROUNDS, and
#      the TLS / cleartext ratio of calls/s per driver (target >= 0.7).
#   2. Full and resumed TLS handshakes (openssl s_time -new / -reuse -www /, TLS 1.3 and 1.2):
#      per second of wall time and per second of the server's CPU (it runs pinned to one core).
#   3. Idle connections (Benchmarks/tls/idle_connections.py), each on a fresh server:
#      IDLE_CLEAR cleartext and IDLE TLS ones, one call each, the server's RSS per connection;
#      while the TLS ones are held, random held connections are probed and `larder bench
#      --tls` runs get at 64 in flight on 4 more connections; then the script checks that
#      none was closed by the server.
#
# The server runs pinned to SERVER_CPU, the load generators to CLIENT_CPU, loopback only,
# certificates made in a temporary directory. Benchmarks, not tests: nothing fails on a slow
# number (the script fails only when a run reports errors). Stops only what it started, by PID.
# Prints a Markdown report on stdout (for docs/BENCHMARKS.md "TLS"), progress on stderr.
#
# Env: BIN_DIR (release larder-server and larder; default: builds them with
#      scripts/build-release.sh unless SKIP_BUILD=1, then `swift build -c release --show-bin-path`)
#      DURATION=10 WARMUP=2 ROUNDS=3 IDLE=10000 IDLE_CLEAR=10000 SERVER_CPU=0 CLIENT_CPU=1
#      PYTHON=python3 QUIET_PCT=30 QUIET_WAIT=20 PARTS="calls handshakes idle" (any of them)
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_NAME=bench-tls
source scripts/lib/bench-common.sh

DURATION=${DURATION:-10} WARMUP=${WARMUP:-2} ROUNDS=${ROUNDS:-3}
IDLE=${IDLE:-10000} IDLE_CLEAR=${IDLE_CLEAR:-$IDLE}
SERVER_CPU=${SERVER_CPU:-0} CLIENT_CPU=${CLIENT_CPU:-1}
PYTHON=${PYTHON:-python3}
PARTS=${PARTS:-calls handshakes idle}
want() { [[ " $PARTS " == *" $1 "* ]]; }
QUIET_PCT=${QUIET_PCT:-30} QUIET_WAIT=${QUIET_WAIT:-20}
for tool in taskset h2load openssl "$PYTHON"; do command -v "$tool" >/dev/null || die "needs $tool"; done

if [[ -z "${BIN_DIR:-}" ]]; then
  if [[ -z "${SKIP_BUILD:-}" ]]; then
    log "building release larder-server and larder"
    export LARDER_COMMIT=$(scripts/commit-id.sh)
    scripts/build-release.sh --product larder-server >&2
    scripts/build-release.sh --product larder >&2
  fi
  BIN_DIR=$(swift build -c release --show-bin-path)
fi
SERVER="$BIN_DIR/larder-server" CLI="$BIN_DIR/larder"
[[ -x "$SERVER" && -x "$CLI" ]] || die "no larder-server and larder in $BIN_DIR"
bench_raise_fd_limit $(( (IDLE > IDLE_CLEAR ? IDLE : IDLE_CLEAR) + 1000 ))
bench_workdir larder-bench-tls

ossl() { openssl "$@" >/dev/null 2>&1; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORKDIR/ca.key" -out "$WORKDIR/ca.pem" \
  -days 2 -subj "/CN=Bench CA"
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORKDIR/server.key"
ossl req -new -key "$WORKDIR/server.key" -out "$WORKDIR/server.csr" -subj /CN=localhost
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$WORKDIR/server.ext"
ossl x509 -req -in "$WORKDIR/server.csr" -CA "$WORKDIR/ca.pem" -CAkey "$WORKDIR/ca.key" -CAcreateserial -days 2 \
  -extfile "$WORKDIR/server.ext" -out "$WORKDIR/server.pem"
TLS=(--tls --ca "$WORKDIR/ca.pem" --server-name localhost)

# start_server NAME [FLAGS...]: a fresh pinned server on a new database; sets PID and PORT.
start_server() {
  local name=$1; shift
  taskset -c "$SERVER_CPU" "$SERVER" --listen 127.0.0.1:0 --db "$WORKDIR/$name.sqlite" --durability normal \
    --tls-cert "$WORKDIR/server.pem" --tls-key "$WORKDIR/server.key" "$@" 2> "$WORKDIR/$name.log" &
  PID=$!
  PIDS+=("$PID")
  wait_for_line "$WORKDIR/$name.log" "$PID" "event=listening" 30
  PORT=$(sed -n 's/.*event=listening address=127.0.0.1:\([0-9]*\).*/\1/p' "$WORKDIR/$name.log" | head -1)
}
stop_server() { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
server_ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
TICK=$(getconf CLK_TCK)

STARTED=$(date -u +%Y-%m-%dT%H:%MZ)
log "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
start_server calls --max-calls-per-connection 4096
ID=$("$CLI" --server "127.0.0.1:$PORT" --json locations add --name bench-tls --color '#123456' |
  "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["id"])')
# The same GetLocationRequest{id} for every driver: h2load's body is its gRPC frame.
"$PYTHON" - "$ID" "$WORKDIR/get.body" <<'PY'
import struct, sys
location_id = sys.argv[1].encode()
message = bytes([0x0A, len(location_id)]) + location_id
open(sys.argv[2], "wb").write(b"\0" + struct.pack(">I", len(message)) + message)
PY
GET=(--call /larder.v1.LocationService/GetLocation -d "{\"id\": \"$ID\"}")
RESULTS="$WORKDIR/results.tsv"  # driver mode round calls_per_s p99_us server_us_per_call

# larder_run PROTOCOL MODE ROUND: one `larder bench` get at 64 in flight.
larder_run() {
  local tls=(); [[ "$2" == tls ]] && tls=("${TLS[@]}")
  local json
  json=$(taskset -c "$CLIENT_CPU" "$CLI" bench --server "127.0.0.1:$PORT" --protocol "$1" "${tls[@]}" "${GET[@]}" \
    --concurrency 64 --connections 4 --warmup "${WARMUP}s" --duration "${DURATION}s" --server-pid "$PID" --json) ||
    die "larder bench $1 $2 failed"
  "$PYTHON" -c '
import json, sys
r = json.loads(sys.argv[1])
if r["errors"] or r["lost_calls"]: sys.exit("errors: %s" % r["errors_by_code"])
tls = r.get("tls") or {}
print("\t".join(map(str, [sys.argv[2], sys.argv[3], sys.argv[4], r["calls_per_s"], r["latency_us"]["p99"],
      r["server_cpu_us_per_call"], tls.get("handshakes", 0), tls.get("resumed", 0)])))' \
    "$json" "larder bench $1" "$2" "$3" >> "$RESULTS"
}

# h2load_run MODE ROUND: h2load get at 64 in flight, h2c or https.
h2load_run() {
  local scheme=http; [[ "$1" == tls ]] && scheme=https
  local url="$scheme://127.0.0.1:$PORT/larder.v1.LocationService/GetLocation"
  local headers=(-H 'content-type: application/grpc' -H 'te: trailers' -d "$WORKDIR/get.body" -c 4 -m 16)
  timeout $(( WARMUP + 30 )) taskset -c "$CLIENT_CPU" h2load -D "$WARMUP" "${headers[@]}" "$url" >/dev/null 2>&1 || true
  local before after out
  before=$(server_ticks)
  out=$(timeout $(( DURATION + 30 )) taskset -c "$CLIENT_CPU" h2load -D "$DURATION" "${headers[@]}" \
    --log-file "$WORKDIR/h2load.log" "$url" 2>&1) || die "h2load $scheme failed: $out"
  after=$(server_ticks)
  local rps succeeded failed p99
  rps=$(sed -n 's/.*finished in .*, \([0-9.]*\) req\/s.*/\1/p' <<<"$out")
  succeeded=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' <<<"$out")
  failed=$(sed -n 's/^requests: .* succeeded, \([0-9]*\) failed.*/\1/p' <<<"$out")
  [[ -n "$succeeded" && "$succeeded" -gt 0 && "$failed" == 0 ]] || die "h2load $scheme: $out"
  p99=$(awk '{print $3}' "$WORKDIR/h2load.log" | sort -n | awk '{v[NR] = $1} END {print v[int(NR * 0.99)]}')
  awk -v m="$1" -v r="$2" -v rps="$rps" -v p="$p99" -v s="$succeeded" -v c="$((after - before))" -v t="$TICK" \
    'BEGIN { printf "h2load\t%s\t%s\t%s\t%s\t%.2f\t0\t0\n", m, r, rps, p, c / t / s * 1e6 }' >> "$RESULTS"
}

touch "$RESULTS"
want calls && for round in $(seq "$ROUNDS"); do
  modes=(clear tls); (( round % 2 == 0 )) && modes=(tls clear)
  for driver in lean grpc h2load; do
    for mode in "${modes[@]}"; do
      bench_wait_quiet
      log "round $round: $driver $mode (load $(cut -d' ' -f1 /proc/loadavg))"
      if [[ "$driver" == h2load ]]; then h2load_run "$mode" "$round"; else larder_run "$driver" "$mode" "$round"; fi
    done
  done
done

# Handshakes: each s_time connection handshakes, sends "GET /" (answered by the lean protocol's
# error frame: not a Larder peer) and closes. The request is what makes TLS 1.3 resumption
# work at all: without reading, s_time never sees the ticket the server sends after the handshake.
HANDSHAKES="$WORKDIR/handshakes.tsv"
touch "$HANDSHAKES"
want handshakes && for version in tls1_3 tls1_2; do
  for mode in new reuse; do
    bench_wait_quiet
    before=$(server_ticks)
    out=$(timeout $(( DURATION + 30 )) taskset -c "$CLIENT_CPU" openssl s_time -connect "127.0.0.1:$PORT" \
      -"$mode" -"$version" -time "$DURATION" -CAfile "$WORKDIR/ca.pem" -www / 2>&1) || true
    after=$(server_ticks)
    count=$(sed -n 's/^\([0-9]*\) connections in [0-9.]*s.*/\1/p' <<<"$out" | head -1)
    real=$(sed -n 's/.*connections in \([0-9]*\) real seconds.*/\1/p' <<<"$out" | head -1)
    log "handshakes $version $mode: ${count:-?} in ${real:-?} s, server $((after - before)) ticks"
    printf '%s\t%s\t%s\t%s\t%s\n' "$version" "$mode" "${count:-0}" "${real:-0}" "$((after - before))" >> "$HANDSHAKES"
  done
done
stop_server

# Idle connections, each kind on a fresh server.
IDLE_OUT="$WORKDIR/idle.jsonl"
touch "$IDLE_OUT"
want idle && for mode in clear tls; do
  count=$IDLE; ca=()
  if [[ "$mode" == clear ]]; then count=$IDLE_CLEAR; else ca=(--ca "$WORKDIR/ca.pem"); fi
  start_server "idle-$mode" --max-connections $(( count + 100 )) --idle-timeout 600 --no-seed
  bench_wait_quiet
  log "idle $mode: opening $count connections"
  rm -f "$WORKDIR/stop"
  taskset -c "$CLIENT_CPU" "$PYTHON" Benchmarks/tls/idle_connections.py --port "$PORT" --pid "$PID" --count "$count" \
    "${ca[@]}" --stop "$WORKDIR/stop" --max-seconds 600 > "$WORKDIR/idle-$mode.out" &
  HOLDER=$!
  PIDS+=("$HOLDER")
  for _ in $(seq 6000); do grep -qs '"phase": "held"' "$WORKDIR/idle-$mode.out" && break; kill -0 "$HOLDER" || break; sleep 0.1; done
  under=""
  if [[ "$mode" == tls ]]; then
    json=$(taskset -c "$CLIENT_CPU" "$CLI" bench --server "127.0.0.1:$PORT" "${TLS[@]}" --workload ping \
      --concurrency 64 --connections 4 --warmup 1s --duration "${DURATION}s" --json) || die "bench under idle load failed"
    under=$("$PYTHON" -c 'import json, sys; r = json.loads(sys.argv[1]); print(r["calls_per_s"], r["latency_us"]["p99"], r["errors"])' "$json")
    log "idle $mode: larder bench --tls ping while held: $under (calls/s p99_us errors)"
  fi
  touch "$WORKDIR/stop"
  wait "$HOLDER" || die "idle_connections.py failed"
  "$PYTHON" -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
held, released = lines[0], lines[-1]
held.update({"released_" + k: v for k, v in released.items()})
held["under_load"] = sys.argv[2]
print(json.dumps(held))' "$WORKDIR/idle-$mode.out" "$under" >> "$IDLE_OUT"
  stop_server
done

# The report.
"$PYTHON" - "$RESULTS" "$HANDSHAKES" "$IDLE_OUT" "$STARTED" "$ROUNDS" "$DURATION" "$TICK" <<'PY'
import json, statistics, sys
results, handshakes, idle, started, rounds, duration, tick = sys.argv[1:8]
rows = [line.rstrip("\n").split("\t") for line in open(results)]
by = {}
for driver, mode, _round, rps, p99, cpu, shakes, resumed in rows:
    by.setdefault((driver, mode), []).append((float(rps), float(p99), float(cpu), int(shakes), int(resumed)))
med = lambda values: statistics.median(values)
print(f"Run {started}, {rounds} rounds x {duration} s per leg, medians; get (one fixed id) at 64 in flight, 4 connections x 16.\n")
print("| driver | cleartext calls/s | TLS calls/s | TLS / cleartext | p99 clear / TLS (µs) | server µs/call clear / TLS | CPU-bound ratio | TLS handshakes (resumed) |")
print("|---|---|---|---|---|---|---|---|")
for driver in ["larder bench lean", "larder bench grpc", "h2load"]:
    clear, tls = by.get((driver, "clear"), []), by.get((driver, "tls"), [])
    if not clear or not tls:
        continue
    c_rps, t_rps = med([r[0] for r in clear]), med([r[0] for r in tls])
    shakes = f"{tls[0][3]} ({tls[0][4]})" if tls[0][3] else "4 (h2load: not reported)"
    print(f"| {driver} | {c_rps:,.0f} | {t_rps:,.0f} | **{t_rps / c_rps:.2f}×** | {med([r[1] for r in clear]):,.0f} / "
          f"{med([r[1] for r in tls]):,.0f} | {med([r[2] for r in clear]):.1f} / {med([r[2] for r in tls]):.1f} | "
          f"{med([r[2] for r in clear]) / med([r[2] for r in tls]):.2f}× | {shakes} |")
print("\nCPU-bound ratio: server µs/call cleartext ÷ TLS, the calls/s ratio of a server that has its core to itself "
      "(on a shared machine the calls/s ratio moves with everyone else's load).")
print("\nPer round (calls/s; a round runs both modes back to back, so their ratio sees about the same load "
      "from the rest of the machine):\n")
print("| driver | mode | " + " | ".join(f"round {i + 1}" for i in range(int(rounds))) + " | median of per-round ratios |")
print("|---|---|" + "---|" * int(rounds) + "---|")
for driver in ["larder bench lean", "larder bench grpc", "h2load"]:
    for mode in ["clear", "tls"]:
        values = by.get((driver, mode), [])
        if not values:
            continue
        ratio = ""
        if mode == "tls" and by.get((driver, "clear")):
            pairs = zip(by[(driver, "clear")], values)
            ratios = [t[0] / c[0] for c, t in pairs if c[0] > 0]
            ratio = f"**{med(ratios):.2f}×** calls/s, {med([c[2] / t[2] for c, t in zip(by[(driver, 'clear')], values) if t[2] > 0]):.2f}× CPU"
        print(f"| {driver} | {mode} | " + " | ".join(f"{v[0]:,.0f}" for v in values) + f" | {ratio} |")
print("\nHandshakes (openssl s_time, one client on one core, server pinned to one core):\n")
print("| protocol | handshake | connections | per second (wall) | per second of server CPU |")
print("|---|---|---|---|---|")
for line in open(handshakes):
    version, mode, count, real, ticks = line.split()
    count, real, ticks = int(count), float(real), int(ticks)
    wall = count / real if real else 0
    cpu = count / (ticks / float(tick)) if ticks else 0
    print(f"| {version.replace('tls1_', 'TLS 1.')} | {'full' if mode == 'new' else 'resumed'} | {count:,} | {wall:,.0f} | {cpu:,.0f} |")
print("\nIdle connections (one call each, then silent; fresh server each):\n")
print("| kind | connections | opened in | server RSS before → after | per connection | probes (p50 / max ms) | closed by server | larder bench --tls ping while held (calls/s, p99 µs, errors) |")
print("|---|---|---|---|---|---|---|---|")
for line in open(idle):
    r = json.loads(line)
    print(f"| {'TLS' if r['tls'] else 'cleartext'} | {r['connections']:,} (failed {r['failed']}) | {r['open_seconds']} s | "
          f"{r['rss_before_kib'] / 1024:.1f} → {r['rss_after_kib'] / 1024:.1f} MiB | {r['kib_per_connection']} KiB | "
          f"{r.get('probes', 0) - r.get('probe_failed', 0)}/{r.get('probes', 0)} ({r.get('probe_p50_ms')} / {r.get('probe_max_ms')}); "
          f"after: {r.get('released_probes', 0) - r.get('released_probe_failed', 0)}/{r.get('released_probes', 0)} | "
          f"{r.get('released_closed_by_server')} | {r.get('under_load') or '—'} |")
PY
log "done (load $(cut -d' ' -f1-3 /proc/loadavg))"
