#!/usr/bin/env bash
# Idle HTTP/2 connections (issue 13 §6): IDLE_CONNS connections to larder-server that each
# send the HTTP/2 client preface and SETTINGS, acknowledge the server's SETTINGS and then
# stay silent (Benchmarks/scale/hold_connections.py --http2). Measures the server's RSS and
# open descriptors before, while they are held and after release, and checks the server
# still answers calls while they are open: `larder bench` get and ping over gRPC/HTTP/2 and
# over the lean protocol, 64 in flight on 4 connections, before, with and after them.
# Target: RSS < RSS_LIMIT_MB with them open, every call answered, none closed by the server.
#
# Builds release (unless SKIP_BUILD=1), runs larder-server pinned to SERVER_CPU and the load
# generators pinned to CLIENT_CPU, traffic only on 127.0.0.1, and writes a Markdown table
# into OUT between <!-- scale_http2:begin --> and <!-- scale_http2:end --> (replaced if
# present, else appended; scripts/bench.sh keeps the block). scripts/scale.sh runs it last.
# A benchmark, not a test: nothing fails on a number. Stops only what it started, by PID.
# About a minute plus the build.
#
# Env: SERVER_CPU=0 CLIENT_CPU=1 SCRATCH=/tmp/build-scale OUT=docs/BENCHMARKS.md SKIP_BUILD=
#      IDLE_CONNS=10000 IDLE_MAX_CONNECTIONS=12000 IDLE_DURATION=3 WARMUP=1 RSS_LIMIT_MB=200 IDLE_TIMEOUT=300
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SCRATCH=${SCRATCH:-/tmp/build-scale}
OUT=${OUT:-docs/BENCHMARKS.md}
IDLE_CONNS=${IDLE_CONNS:-10000}
IDLE_MAX_CONNECTIONS=${IDLE_MAX_CONNECTIONS:-12000}
IDLE_DURATION=${IDLE_DURATION:-3}
WARMUP=${WARMUP:-1}
RSS_LIMIT_MB=${RSS_LIMIT_MB:-200}
IDLE_TIMEOUT=${IDLE_TIMEOUT:-300}

source scripts/lib/bench-common.sh
for tool in taskset python3; do command -v "$tool" >/dev/null || die "needs $tool"; done

bench_raise_fd_limit $(( IDLE_CONNS + 1000 ))

if [[ -z "${SKIP_BUILD:-}" ]]; then
  log "building Larder (release, scratch $SCRATCH)"
  export LARDER_COMMIT=$(scripts/commit-id.sh)
  scripts/build-release.sh --scratch-path "$SCRATCH" --product larder-server >&2
  scripts/build-release.sh --scratch-path "$SCRATCH" --product larder >&2
fi
BIN=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
[[ -x "$BIN/larder-server" && -x "$BIN/larder" ]] || die "no release binaries in $BIN"

bench_workdir larder-scale-http2

STARTED=$(date -u +%Y-%m-%dT%H:%MZ)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date +%s)
taskset -c "$SERVER_CPU" "$BIN/larder-server" --listen 127.0.0.1:0 --db "$WORKDIR/idle.sqlite" --durability normal \
  --no-seed --max-connections "$IDLE_MAX_CONNECTIONS" --idle-timeout "$IDLE_TIMEOUT" 2>"$WORKDIR/server.log" &
PID=$!
PIDS+=("$PID")
wait_for_line "$WORKDIR/server.log" "$PID" "event=listening" 10
PORT=$(sed -n 's/.*event=listening address=[^ ]*:\([0-9][0-9]*\).*/\1/p' "$WORKDIR/server.log" | head -1)
log "larder-server pid $PID port $PORT"

RESULTS="$WORKDIR/results.jsonl"
: > "$RESULTS"
note() { python3 -c 'import json,sys; print(json.dumps(dict(a.split("=", 1) for a in sys.argv[1:]) | {"kind": "note"}))' "$@" >> "$RESULTS"; }
# bench PHASE PROTOCOL WORKLOAD [DURATION]: one larder bench run, recorded with its tags.
bench() {
  local json rc=0
  json=$(taskset -c "$CLIENT_CPU" "$BIN/larder" bench --server "127.0.0.1:$PORT" --server-pid "$PID" --protocol "$2" \
    --workload "$3" --connections 4 --concurrency 64 --warmup "${WARMUP}s" --duration "${4:-$IDLE_DURATION}s" \
    --json 2>"$WORKDIR/bench.err") || rc=$?
  [[ -n "$json" ]] || { log "larder bench $* produced no result (exit $rc):"; cat "$WORKDIR/bench.err" >&2; json='{}'; }
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(kind="bench", exit=int(sys.argv[2]), phase=sys.argv[3])
print(json.dumps(d))' "$json" "$rc" "$1" >> "$RESULTS"
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); l=d.get("latency_us") or {}
print("  %s: %.0f calls/s p99 %s us errors %s" % (sys.argv[2], d.get("calls_per_s") or 0, l.get("p99"), d.get("errors")), file=sys.stderr)' "$json" "$*"
}
runs() { for wl in get ping; do for proto in grpc lean; do bench "$1" "$proto" "$wl"; done; done; }

bench warm grpc get 2
runs without
RSS_BEFORE=$(status_kb "$PID" VmRSS); ANON_BEFORE=$(status_kb "$PID" RssAnon); FDS_BEFORE=$(fd_count "$PID")
STOP_FILE="$WORKDIR/release"
log "opening $IDLE_CONNS idle HTTP/2 connections"
taskset -c "$CLIENT_CPU" python3 "$ROOT/Benchmarks/scale/hold_connections.py" --http2 --port "$PORT" \
  --count "$IDLE_CONNS" --stop "$STOP_FILE" --max-seconds 240 --connect-seconds 90 >"$WORKDIR/hold.log" 2>&1 &
HOLD=$!
PIDS+=("$HOLD")
wait_for_line "$WORKDIR/hold.log" "$HOLD" "event=held" 120
log "$(grep event=held "$WORKDIR/hold.log")"
for _ in $(seq 100); do (( $(fd_count "$PID") >= FDS_BEFORE + IDLE_CONNS )) && break; sleep 0.1; done
sleep 1
RSS_HELD=$(status_kb "$PID" VmRSS); ANON_HELD=$(status_kb "$PID" RssAnon); FDS_HELD=$(fd_count "$PID")
runs with
RSS_AFTER_LOAD=$(status_kb "$PID" VmRSS)
touch "$STOP_FILE"
wait_for_line "$WORKDIR/hold.log" "$HOLD" "event=released" 60
wait "$HOLD" 2>/dev/null || true
log "$(grep event=released "$WORKDIR/hold.log")"
for _ in $(seq 50); do (( $(fd_count "$PID") <= FDS_BEFORE + 10 )) && break; sleep 0.1; done
sleep 1
RSS_RELEASED=$(status_kb "$PID" VmRSS)
runs after
HELD=$(grep event=held "$WORKDIR/hold.log" | head -1)
RELEASED=$(grep event=released "$WORKDIR/hold.log" | head -1)
note rss_before_kb="$RSS_BEFORE" rss_held_kb="$RSS_HELD" rss_after_load_kb="$RSS_AFTER_LOAD" rss_released_kb="$RSS_RELEASED" \
  anon_before_kb="$ANON_BEFORE" anon_held_kb="$ANON_HELD" hwm_kb="$(status_kb "$PID" VmHWM)" \
  fds_before="$FDS_BEFORE" fds_held="$FDS_HELD" held="$HELD" released="$RELEASED" \
  server_log_problems="$(grep -ciE 'level=(error|warn)' "$WORKDIR/server.log" || true)"
kill -TERM "$PID"; wait "$PID" 2>/dev/null || true

export STARTED LOAD_BEFORE LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)" ELAPSED=$(( $(date +%s) - T0 )) IDLE_CONNS \
  RSS_LIMIT_MB IDLE_MAX_CONNECTIONS IDLE_DURATION WARMUP SERVER_CPU CLIENT_CPU COMMIT="$(scripts/commit-id.sh)"
python3 - "$RESULTS" "$OUT" <<'PY'
import json, os, re, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
n = next(r for r in rows if r["kind"] == "note")
env = os.environ.get
kv = lambda line, key: (re.search(rf"\b{key}=(\d+)", line) or [None, None])[1]
mb = lambda kb: int(kb) / 1024
opened, acked = int(kv(n["held"], "opened") or 0), int(kv(n["held"], "acked") or 0)
still, closed = int(kv(n["released"], "open") or 0), int(kv(n["released"], "closed_by_server") or 0)
held, before = mb(n["rss_held_kb"]), mb(n["rss_before_kb"])
per = (int(n["rss_held_kb"]) - int(n["rss_before_kb"])) * 1024 / opened if opened else None
out = ["<!-- scale_http2:begin -->", f"## {int(env('IDLE_CONNS')):,} idle HTTP/2 connections (issue 13 §6)", ""]
out.append(f"Written by `scripts/scale-http2.sh` on {env('STARTED')} ({env('ELAPSED')} s), commit {env('COMMIT')}; larder-server "
           f"(release, `--max-connections {env('IDLE_MAX_CONNECTIONS')}`) pinned to CPU {env('SERVER_CPU')}, the load to CPU "
           f"{env('CLIENT_CPU')}; load average before / after {env('LOAD_BEFORE')} / {env('LOAD_AFTER')} (the machine is shared: "
           "read the rows against each other). Each connection sends the client preface and SETTINGS, acknowledges the "
           "server's SETTINGS, then nothing (`Benchmarks/scale/hold_connections.py --http2`). Calls: `larder bench` at 64 in "
           f"flight on 4 connections, {env('WARMUP')} s warm-up, {env('IDLE_DURATION')} s measured, before, with and after them.")
out.append("")
out.append("| | |")
out.append("|---|---|")
out.append(f"| opened / SETTINGS acknowledged | {opened:,} / {acked:,} |")
out.append(f"| server RSS before / held / held after the load / released | {before:.1f} / {held:.1f} / "
           f"{mb(n['rss_after_load_kb']):.1f} / {mb(n['rss_released_kb']):.1f} MB (peak {mb(n['hwm_kb']):.1f} MB) |")
out.append(f"| anonymous RSS before / held | {mb(n['anon_before_kb']):.1f} / {mb(n['anon_held_kb']):.1f} MB |")
out.append(f"| RSS per idle HTTP/2 connection | {per:,.0f} bytes |" if per is not None else "| RSS per connection | – |")
out.append(f"| open descriptors before / held | {n['fds_before']} / {n['fds_held']} |")
out.append(f"| still open at release / closed by the server | {still:,} / {closed:,} |")
out.append(f"| warn/error lines in the server log | {n['server_log_problems']} |")
out.append("")
out.append("| phase | protocol | workload | calls/s | p50 µs | p99 µs | errors | server µs/call |")
out.append("|---|---|---|---:|---:|---:|---:|---:|")
benches = [r for r in rows if r["kind"] == "bench" and r["phase"] != "warm"]
for r in benches:
    l = r.get("latency_us") or {}
    errs = (r.get("errors") or 0) + (r.get("lost_calls") or 0)
    spc = r.get("server_cpu_us_per_call")
    out.append(f"| {r['phase']} | {r.get('protocol')} | {r.get('workload')} | {r.get('calls_per_s') or 0:,.0f} | {l.get('p50') or 0:,.0f} "
               f"| {l.get('p99') or 0:,.0f} | {errs} | {'–' if spc is None else f'{spc:.1f}'} |")
answered = all((r.get("calls") or 0) > 0 and not r.get("errors") and not r.get("lost_calls") for r in benches if r["phase"] == "with")
ok = held < float(env("RSS_LIMIT_MB")) and opened == int(env("IDLE_CONNS")) and closed == 0 and answered
out.append("")
out.append(f"{'✅' if ok else '❌'} {opened:,} idle HTTP/2 connections: server RSS {held:.1f} MB while held (target < {env('RSS_LIMIT_MB')} MB), "
           f"{closed} closed by the server, calls over both protocols {'all answered' if answered else 'NOT all answered'} while they were open.")
out.append("<!-- scale_http2:end -->")
section = "\n".join(out)
text = open(sys.argv[2]).read() if os.path.exists(sys.argv[2]) else ""
b, e = text.find("<!-- scale_http2:begin -->"), text.find("<!-- scale_http2:end -->")
if 0 <= b < e:
    text = text[:b] + section + text[e + len("<!-- scale_http2:end -->"):]
else:
    text = text.rstrip("\n") + ("\n\n" if text.strip() else "") + section + "\n"
open(sys.argv[2], "w").write(text)
print(section)
PY
log "wrote the scale_http2 section of $OUT"
