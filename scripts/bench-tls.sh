#!/usr/bin/env bash
# TLS against cleartext on one larder-server (issue 15): get at 64 in flight over gRPC on
# HTTP/2 (h2load, h2c vs https with ALPN h2), full and resumed TLS handshakes per second
# (openssl s_time), and the server's memory per idle connection (Benchmarks/tls/idle_connections.py).
#
# The server runs pinned to SERVER_CPU, the load generators to CLIENT_CPU, loopback only,
# with certificates made in a temporary directory. Benchmarks, not tests: nothing fails on a
# slow number. Prints Markdown rows for docs/BENCHMARKS.md ("TLS").
#
# Env: LARDER_BIN=.build/release/larder-server (scripts/build-release.sh --product larder-server)
#      DURATION=10 WARMUP=2 ROUNDS=2 IDLE=1000 SERVER_CPU=0 CLIENT_CPU=1 VENV=.venv (grpcio, for the id)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${LARDER_BIN:-.build/release/larder-server}
DURATION=${DURATION:-10} WARMUP=${WARMUP:-2} ROUNDS=${ROUNDS:-2} IDLE=${IDLE:-1000}
SERVER_CPU=${SERVER_CPU:-0} CLIENT_CPU=${CLIENT_CPU:-1}
PYTHON=${VENV:-.venv}/bin/python
[[ -x "$BIN" ]] || { echo "bench-tls: no $BIN (scripts/build-release.sh --product larder-server)" >&2; exit 1; }
WORK=$(mktemp -d)
SERVER_PID=
cleanup() { [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"

ossl() { openssl "$@" >/dev/null 2>&1; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.pem" \
  -days 2 -subj "/CN=Bench CA"
ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$WORK/server.key"
ossl req -new -key "$WORK/server.key" -out "$WORK/server.csr" -subj /CN=localhost
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$WORK/server.ext"
ossl x509 -req -in "$WORK/server.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -days 2 \
  -extfile "$WORK/server.ext" -out "$WORK/server.pem"

taskset -c "$SERVER_CPU" "$BIN" --listen 127.0.0.1:0 --db "$WORK/larder.sqlite" --durability normal \
  --tls-cert "$WORK/server.pem" --tls-key "$WORK/server.key" --max-calls-per-connection 4096 2> "$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 600); do grep -q 'event=listening' "$WORK/server.log" && break; sleep 0.1; done
PORT=$(sed -n 's/.*event=listening address=127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/server.log" | head -1)
[[ -n "$PORT" ]] || { cat "$WORK/server.log" >&2; exit 1; }

# A GetLocation body for h2load: the gRPC prefix and GetLocationRequest{id} of a seeded location.
"$PYTHON" - "$PORT" "$WORK/get.body" <<'PY'
import struct, sys, grpc
port, out = sys.argv[1], sys.argv[2]
def enc(s): return bytes([0x0a, len(s)]) + s
channel = grpc.insecure_channel(f"127.0.0.1:{port}")
listed = channel.unary_unary("/larder.v1.LocationService/ListLocations")(b"", timeout=30)
# ListLocationsResponse{1: Location{1: id}}: the first location's id, read by hand.
def field(data, at):
    key, at = data[at], at + 1
    length = shift = 0
    while True:
        byte, at = data[at], at + 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return key, data[at:at + length]
key, location = field(listed, 0)
assert key == 0x0a
key, location_id = field(location, 0)
assert key == 0x0a and len(location_id) == 36
body = enc(location_id)
open(out, "wb").write(b"\0" + struct.pack(">I", len(body)) + body)
PY

cpu() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
h2() {  # $1: http or https
  local before after out
  taskset -c "$CLIENT_CPU" h2load -D "$WARMUP" -c 4 -m 16 -H 'content-type: application/grpc' -H 'te: trailers' \
    -d "$WORK/get.body" "$1://127.0.0.1:$PORT/larder.v1.LocationService/GetLocation" >/dev/null 2>&1
  before=$(cpu)
  out=$(taskset -c "$CLIENT_CPU" h2load -D "$DURATION" -c 4 -m 16 -H 'content-type: application/grpc' \
    -H 'te: trailers' -d "$WORK/get.body" "$1://127.0.0.1:$PORT/larder.v1.LocationService/GetLocation" 2>&1)
  after=$(cpu)
  local rps succeeded
  rps=$(sed -n 's/.*finished in .*, \([0-9.]*\) req\/s.*/\1/p' <<<"$out")
  succeeded=$(sed -n 's/.*requests: .* \([0-9]*\) succeeded.*/\1/p' <<<"$out")
  local tick; tick=$(getconf CLK_TCK)
  awk -v r="$rps" -v s="$succeeded" -v c="$((after - before))" -v t="$tick" \
    'BEGIN { printf "%s calls/s, server %.1f us CPU/call (%s ok)\n", r, (s > 0 ? c / t / s * 1e6 : 0), s }'
}
for round in $(seq "$ROUNDS"); do
  echo "round $round: get, HTTP/2, 64 in flight (4 connections x 16 streams)"
  echo "  h2c:   $(h2 http)"
  echo "  https: $(h2 https)"
done

for mode in new reuse; do
  out=$(taskset -c "$CLIENT_CPU" openssl s_time -connect "127.0.0.1:$PORT" -"$mode" -time "$DURATION" \
    -CAfile "$WORK/ca.pem" 2>&1 | grep -E 'connections/user sec|connections in' | head -2 | tr '\n' ' ')
  echo "handshakes ($mode): $out"
done

for mode in clear tls; do
  ca=(); [[ "$mode" == tls ]] && ca=(--ca "$WORK/ca.pem")
  echo "idle $mode: $(taskset -c "$CLIENT_CPU" "$PYTHON" Benchmarks/tls/idle_connections.py --port "$PORT" \
    --pid "$SERVER_PID" --count "$IDLE" "${ca[@]}")"
done
