#!/usr/bin/env bash
# How Larder's cost grows (issue 4, section 3): many connections, many idle
# connections, a big table. Builds release, runs larder-server pinned to
# SERVER_CPU and every load generator pinned to CLIENT_CPU, traffic only on
# 127.0.0.1, and writes Markdown tables into OUT between the markers
# <!-- scale:begin --> and <!-- scale:end --> (replaced if present, else appended;
# scripts/bench.sh keeps that block when it rewrites the rest of the file).
#
#  1. Connections: `larder bench` with MANY_CONNS connections and one call in flight on
#     each vs FEW_CONNS connections / FEW_CONNS in flight, for CONN_WORKLOADS, ROUNDS
#     rounds alternating. Target: calls/s ratio >= 80 %, no errors.
#  2. Idle connections: IDLE_CONNS silent connections held open by
#     Benchmarks/scale/hold_connections.py; a short get and ping run with and without
#     them, the server's RSS (VmRSS) and open descriptors before, while held and after
#     release. Target: responsive, RSS < RSS_LIMIT_MB; bytes per connection reported.
#  3. Table size: fills meal_records through the API (`larder bench --workload create
#     --requests N`, FILL_CONCURRENCY in flight) to each of SIZES and measures get, list
#     and create at 64 in flight. Target: within 20 % of the empty database.
#  4. Idle HTTP/2 connections: scripts/scale-http2.sh runs last (same build, pins and OUT;
#     its own block <!-- scale_http2:... -->); SKIP_HTTP2=1 leaves it out.
#
# These are benchmarks, not tests: nothing here fails on a slow number. The script
# stops only the processes it started, by PID. A full run takes about 3-4 minutes plus the build.
#
# Env: SERVER_CPU=0 CLIENT_CPU=1 SCRATCH=/tmp/build-scale OUT=docs/BENCHMARKS.md SKIP_BUILD=1
#      DURATION=5 WARMUP=1 ROUNDS=3 MANY_CONNS=1000 FEW_CONNS=64 CONN_WORKLOADS="get ping" BENCH_THREADS=1
#      IDLE_CONNS=10000 IDLE_MAX_CONNECTIONS=12000 IDLE_DURATION=3 RSS_LIMIT_MB=200 IDLE_TIMEOUT=300
#      SIZES="0 100000 300000 1000000" SIZE_DURATION=3 SIZE_CONCURRENCY=64 SIZE_CONNS=4
#      FILL_CONCURRENCY=256 FILL_CONNS=4 FILL_CHUNK=250000 FILL_MAX_SECONDS=420
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SCRATCH=${SCRATCH:-/tmp/build-scale}
OUT=${OUT:-docs/BENCHMARKS.md}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
ROUNDS=${ROUNDS:-3}
MANY_CONNS=${MANY_CONNS:-1000}
FEW_CONNS=${FEW_CONNS:-64}
CONN_WORKLOADS=${CONN_WORKLOADS:-"get ping"}
BENCH_THREADS=${BENCH_THREADS:-1}
IDLE_CONNS=${IDLE_CONNS:-10000}
IDLE_MAX_CONNECTIONS=${IDLE_MAX_CONNECTIONS:-12000}
IDLE_DURATION=${IDLE_DURATION:-3}
RSS_LIMIT_MB=${RSS_LIMIT_MB:-200}
IDLE_TIMEOUT=${IDLE_TIMEOUT:-300}
SIZES=${SIZES:-"0 100000 300000 1000000"}
SIZE_DURATION=${SIZE_DURATION:-3}
SIZE_CONCURRENCY=${SIZE_CONCURRENCY:-64}
SIZE_CONNS=${SIZE_CONNS:-4}
FILL_CONCURRENCY=${FILL_CONCURRENCY:-256}
FILL_CONNS=${FILL_CONNS:-4}
FILL_CHUNK=${FILL_CHUNK:-250000}
FILL_MAX_SECONDS=${FILL_MAX_SECONDS:-420}

source scripts/lib/bench-common.sh

for tool in taskset python3 sqlite3; do command -v "$tool" >/dev/null || die "needs $tool (apt-get install util-linux python3 sqlite3)"; done

# --- file descriptors -----------------------------------------------------------
NEED_FDS=$(( (IDLE_CONNS > MANY_CONNS ? IDLE_CONNS : MANY_CONNS) + 1000 ))
bench_raise_fd_limit "$NEED_FDS"
log "ulimit -n $(ulimit -n)"

# --- build ----------------------------------------------------------------------
if [[ -z "${SKIP_BUILD:-}" ]]; then
  log "building Larder (release, scratch $SCRATCH)"
  scripts/build-release.sh --scratch-path "$SCRATCH" --product larder-server >&2
  scripts/build-release.sh --scratch-path "$SCRATCH" --product larder >&2
fi
BIN=$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
[[ -x "$BIN/larder-server" && -x "$BIN/larder" ]] || die "no release binaries in $BIN"

# --- processes --------------------------------------------------------------------
bench_workdir larder-scale


# start_server NAME [extra flags]: sets SERVER_PID, SERVER_PORT, SERVER_DB.
start_server() {
  local name=$1; shift
  SERVER_DB="$WORKDIR/$name.sqlite"
  taskset -c "$SERVER_CPU" "$BIN/larder-server" --listen 127.0.0.1:0 --db "$SERVER_DB" \
    --durability normal --no-seed "$@" 2>"$WORKDIR/$name.log" &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  wait_for_line "$WORKDIR/$name.log" "$SERVER_PID" "event=listening" 10
  SERVER_PORT=$(sed -n 's/.*event=listening address=[^ ]*:\([0-9][0-9]*\).*/\1/p' "$WORKDIR/$name.log" | head -1)
  log "server $name: pid $SERVER_PID port $SERVER_PORT"
}

stop_server() {  # PID
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# Kernel TCP buffer memory in kB (sockstat counts pages), not part of any process's RSS.
tcp_mem_kb() { awk -v page="$(getconf PAGESIZE)" '/^TCP:/{for (i = 1; i < NF; i++) if ($i == "mem") print $(i + 1) * page / 1024}' /proc/net/sockstat; }
rss_parts() { echo "anon=$(status_kb "$1" RssAnon) file=$(status_kb "$1" RssFile)"; }  # PID

# Machine-wide busy jiffies so far (all CPUs), for the "others CPU %" column.
busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }
TICKS=$(getconf CLK_TCK)

RESULTS="$WORKDIR/results.jsonl"
: > "$RESULTS"
# note KEY=VALUE...: one JSON object of strings/numbers tagged kind=note.
note() {
  python3 -c 'import json,sys
d={"kind":"note"}
for a in sys.argv[1:]:
    k,v=a.split("=",1)
    try: v=float(v) if "." in v else int(v)
    except ValueError: pass
    d[k]=v
print(json.dumps(d))' "$@" >> "$RESULTS"
}

# bench TAG KEY=VALUE... -- larder bench flags: runs larder bench against the current
# server on CLIENT_CPU and records its JSON with the tags and the others' CPU %.
bench() {
  local tags=() rc=0 json before after t0 t1
  while [[ "$1" != -- ]]; do tags+=("$1"); shift; done
  shift
  before=$(busy_jiffies); t0=$(date +%s.%N)
  json=$(taskset -c "$CLIENT_CPU" "$BIN/larder" bench --server "127.0.0.1:$SERVER_PORT" --server-pid "$SERVER_PID" \
    --threads "$BENCH_THREADS" --json "$@" 2>"$WORKDIR/bench.err") || rc=$?
  after=$(busy_jiffies); t1=$(date +%s.%N)
  if [[ -z "$json" ]]; then
    log "larder bench $* produced no result (exit $rc):"; cat "$WORKDIR/bench.err" >&2
    json='{}'
  elif (( rc != 0 )); then
    log "larder bench $* exit $rc"; tail -3 "$WORKDIR/bench.err" >&2
  fi
  python3 -c 'import json,sys
d=json.loads(sys.argv[1]); d["kind"]="bench"; d["exit"]=int(sys.argv[2])
wall=float(sys.argv[4]) - float(sys.argv[3]); busy=int(sys.argv[6]) - int(sys.argv[5])
d["wall_s"]=wall; d["machine_busy_pct"]=busy * 100 / int(sys.argv[7]) / wall if wall > 0 else None
for a in sys.argv[8:]:
    k,v=a.split("=",1)
    try: v=int(v)
    except ValueError: pass
    d[k]=v
print(json.dumps(d))' "$json" "$rc" "$t0" "$t1" "$before" "$after" "$TICKS" "${tags[@]}" >> "$RESULTS"
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); l=d.get("latency_us") or {}
print("  -> %.0f calls/s p50 %s us p99 %s us errors %s" % (d.get("calls_per_s") or 0, l.get("p50"), l.get("p99"), d.get("errors")), file=sys.stderr)' "$json"
}

STARTED=$(date -u +%Y-%m-%dT%H:%MZ)
T_START=$(date +%s)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# --- 1. many connections ------------------------------------------------------------
log "part 1: $MANY_CONNS connections x 1 call vs $FEW_CONNS/$FEW_CONNS, $ROUNDS rounds"
start_server conns --max-connections "$IDLE_MAX_CONNECTIONS"
for (( round = 1; round <= ROUNDS; round++ )); do
  for wl in $CONN_WORKLOADS; do
    for conns in "$FEW_CONNS" "$MANY_CONNS"; do
      log "  $wl connections=$conns concurrency=$conns round $round"
      bench part=conns wl="$wl" conns="$conns" round="$round" -- --workload "$wl" --connections "$conns" \
        --concurrency "$conns" --warmup "${WARMUP}s" --duration "${DURATION}s"
    done
  done
done
note part=conns server_rss_kb="$(status_kb "$SERVER_PID" VmRSS)" server_hwm_kb="$(status_kb "$SERVER_PID" VmHWM)"
stop_server "$SERVER_PID"

# --- 2. idle connections --------------------------------------------------------------
log "part 2: $IDLE_CONNS idle connections"
start_server idle --max-connections "$IDLE_MAX_CONNECTIONS" --idle-timeout "$IDLE_TIMEOUT"
IDLE_PID=$SERVER_PID
# Warm the server up (thread pools, statement caches, allocator) before the baseline RSS.
bench part=idle phase=warm wl=get -- --workload get --connections 4 --concurrency 64 --warmup 0s --duration 2s
for wl in get ping; do
  bench part=idle phase=without wl="$wl" -- --workload "$wl" --connections 4 --concurrency 64 \
    --warmup "${WARMUP}s" --duration "${IDLE_DURATION}s"
done
RSS_BEFORE=$(status_kb "$IDLE_PID" VmRSS); FDS_BEFORE=$(fd_count "$IDLE_PID"); TCP_BEFORE=$(tcp_mem_kb)
ANON_BEFORE=$(status_kb "$IDLE_PID" RssAnon)
STOP_FILE="$WORKDIR/release-idle"
HOLD_START=$(date +%s)
taskset -c "$CLIENT_CPU" python3 "$ROOT/Benchmarks/scale/hold_connections.py" --port "$SERVER_PORT" \
  --count "$IDLE_CONNS" --stop "$STOP_FILE" --max-seconds 240 --connect-seconds 90 >"$WORKDIR/hold.log" 2>&1 &
HOLD_PID=$!
PIDS+=("$HOLD_PID")
wait_for_line "$WORKDIR/hold.log" "$HOLD_PID" "event=held" 100
log "  $(grep event=held "$WORKDIR/hold.log")"
# Let the server accept the last ones (bounded: 10 s).
for _ in $(seq 100); do (( $(fd_count "$IDLE_PID") >= FDS_BEFORE + IDLE_CONNS )) && break; sleep 0.1; done
sleep 1
RSS_HELD=$(status_kb "$IDLE_PID" VmRSS); FDS_HELD=$(fd_count "$IDLE_PID"); TCP_HELD=$(tcp_mem_kb)
ANON_HELD=$(status_kb "$IDLE_PID" RssAnon)
for wl in get ping; do
  bench part=idle phase=with wl="$wl" -- --workload "$wl" --connections 4 --concurrency 64 \
    --warmup "${WARMUP}s" --duration "${IDLE_DURATION}s"
done
RSS_HELD_AFTER_LOAD=$(status_kb "$IDLE_PID" VmRSS); FDS_HELD_END=$(fd_count "$IDLE_PID")
touch "$STOP_FILE"
wait_for_line "$WORKDIR/hold.log" "$HOLD_PID" "event=released" 30
wait "$HOLD_PID" 2>/dev/null || true
HOLD_SECONDS=$(( $(date +%s) - HOLD_START ))
log "  $(grep event=released "$WORKDIR/hold.log")"
for _ in $(seq 50); do (( $(fd_count "$IDLE_PID") <= FDS_BEFORE + 10 )) && break; sleep 0.1; done
sleep 1
RSS_RELEASED=$(status_kb "$IDLE_PID" VmRSS); FDS_RELEASED=$(fd_count "$IDLE_PID")
for wl in get ping; do
  bench part=idle phase=after wl="$wl" -- --workload "$wl" --connections 4 --concurrency 64 \
    --warmup "${WARMUP}s" --duration "${IDLE_DURATION}s"
done
HELD_LINE=$(grep event=held "$WORKDIR/hold.log" | head -1)
RELEASED_LINE=$(grep event=released "$WORKDIR/hold.log" | head -1)
note part=idle rss_before_kb="$RSS_BEFORE" rss_held_kb="$RSS_HELD" rss_held_after_load_kb="$RSS_HELD_AFTER_LOAD" \
  rss_released_kb="$RSS_RELEASED" hwm_kb="$(status_kb "$IDLE_PID" VmHWM)" \
  fds_before="$FDS_BEFORE" fds_held="$FDS_HELD" fds_held_end="$FDS_HELD_END" fds_released="$FDS_RELEASED" \
  opened="$(sed -n 's/.*opened=\([0-9]*\).*/\1/p' <<<"$HELD_LINE")" \
  failed="$(sed -n 's/.*failed=\([0-9]*\).*/\1/p' <<<"$HELD_LINE")" \
  connect_s="$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$HELD_LINE")" \
  still_open="$(sed -n 's/.*open=\([0-9]*\).*/\1/p' <<<"$RELEASED_LINE")" \
  closed_by_server="$(sed -n 's/.*closed_by_server=\([0-9]*\).*/\1/p' <<<"$RELEASED_LINE")" \
  tcp_mem_before_kb="$TCP_BEFORE" tcp_mem_held_kb="$TCP_HELD" anon_before_kb="$ANON_BEFORE" anon_held_kb="$ANON_HELD" \
  hold_s="$HOLD_SECONDS" idle_timeout_s="$IDLE_TIMEOUT" \
  server_log_errors="$(grep -ciE 'level=(error|warn)' "$WORKDIR/idle.log" || true)"
stop_server "$IDLE_PID"

# --- 3. table size ------------------------------------------------------------------
log "part 3: table sizes $SIZES"
start_server size --max-connections "$IDLE_MAX_CONNECTIONS"
meal_count() { sqlite3 -readonly "$SERVER_DB" 'SELECT count(*) FROM meal_records;' 2>/dev/null || echo 0; }
file_bytes() { stat -c %s "$1" 2>/dev/null || echo 0; }
FILL_SPENT=0
for size in $SIZES; do
  have=$(meal_count)
  fill_started=$(date +%s)
  chunks=0
  while (( have < size && chunks < size / FILL_CHUNK + 4 )); do
    spent=$(( FILL_SPENT + $(date +%s) - fill_started ))
    if (( spent >= FILL_MAX_SECONDS )); then log "  fill budget of $FILL_MAX_SECONDS s spent at $have records"; break; fi
    want=$(( size - have < FILL_CHUNK ? size - have : FILL_CHUNK ))
    log "  filling: $have -> $(( have + want )) meal records"
    bench part=fill size="$size" -- --workload create --keep-data --requests "$want" --connections "$FILL_CONNS" \
      --concurrency "$FILL_CONCURRENCY" --warmup 0s --time-limit "$(( FILL_MAX_SECONDS - spent + 5 ))s"
    have=$(meal_count)
    chunks=$(( chunks + 1 ))
  done
  FILL_SPENT=$(( FILL_SPENT + $(date +%s) - fill_started ))
  note part=size size="$size" records="$have" fill_s="$(( $(date +%s) - fill_started ))" db_bytes="$(file_bytes "$SERVER_DB")" \
    wal_bytes="$(file_bytes "$SERVER_DB-wal")" \
    rss_kb="$(status_kb "$SERVER_PID" VmRSS)" anon_kb="$(status_kb "$SERVER_PID" RssAnon)" file_kb="$(status_kb "$SERVER_PID" RssFile)"
  for wl in get list create; do
    log "  $wl at $have records"
    bench part=size size="$size" records="$have" wl="$wl" -- --workload "$wl" --connections "$SIZE_CONNS" \
      --concurrency "$SIZE_CONCURRENCY" --warmup "${WARMUP}s" --duration "${SIZE_DURATION}s"
  done
done
note part=size-end records="$(meal_count)" rss_kb="$(status_kb "$SERVER_PID" VmRSS)" \
  anon_kb="$(status_kb "$SERVER_PID" RssAnon)" file_kb="$(status_kb "$SERVER_PID" RssFile)" \
  server_log_errors="$(grep -ciE 'level=(error|warn)' "$WORKDIR/size.log" || true)"
stop_server "$SERVER_PID"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(( $(date +%s) - T_START ))

# --- report ---------------------------------------------------------------------------
MACHINE="$(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), Linux $(uname -r), $(sed -n 's/^PRETTY_NAME="\(.*\)"/\1/p' /etc/os-release)"
COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- Sources 2>/dev/null || echo ' + uncommitted changes under Sources/')"
SECTION="$WORKDIR/section.md"
python3 - "$RESULTS" "$SECTION" <<PY
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
benches = [r for r in rows if r["kind"] == "bench"]
notes = [r for r in rows if r["kind"] == "note"]
def note(part): return next((n for n in notes if n.get("part") == part), {})
def sel(**kv): return [r for r in benches if all(r.get(k) == v for k, v in kv.items())]
def rps(r): return r.get("calls_per_s") or 0.0
def lat(r, q): return (r.get("latency_us") or {}).get(q)
def errs(r): return (r.get("errors") or 0) + (r.get("lost_calls") or 0) + len(r.get("connection_failures") or [])
def others(r):
    b = r.get("machine_busy_pct")
    if b is None: return None
    return max(0.0, b - (r.get("server_cpu_pct") or 0) - (r.get("bench_cpu_pct") or 0))
def spc(r): return r.get("server_cpu_us_per_call")
def f2(x): return "–" if x is None else f"{x:,.2f}"
def f0(x): return "–" if x is None else f"{x:,.0f}"
def f1(x): return "–" if x is None else f"{x:,.1f}"
def pct(x): return "–" if x is None else f"{x * 100:.0f} %"
def mean(xs): xs = [x for x in xs if x is not None]; return sum(xs) / len(xs) if xs else None
def mb(kb): return None if kb in (None, "") else kb / 1024
def mark(ok): return "✅" if ok else "❌"
out, verdicts = [], []
out.append("<!-- scale:begin -->")
out.append("## How cost grows (issue 4, section 3)\n")
out.append("Written by \`scripts/scale.sh\` on $STARTED (took ${ELAPSED} s). Machine: $MACHINE. Commit $COMMIT. "
           "larder-server pinned to CPU $SERVER_CPU with \`--durability normal --no-seed\`, every load generator to CPU $CLIENT_CPU, "
           "loopback only. Load average before/after: $LOAD_BEFORE / $LOAD_AFTER. "
           "*others CPU %* = machine-wide busy CPU during the run minus the server's and the bench's (100 = one core): "
           "the machine is shared, and where it is high the row measures the neighbours too.\n")

# 1
out.append("### 1. $MANY_CONNS connections, one call in flight each\n")
out.append("\`larder bench --connections C --concurrency C --threads $BENCH_THREADS\`, ${WARMUP} s warm-up, ${DURATION} s measured, "
           "$ROUNDS rounds alternating $FEW_CONNS / $MANY_CONNS. Ratio = mean calls/s at $MANY_CONNS over mean at $FEW_CONNS.\n")
out.append("| workload | round | connections = in flight | calls/s | p50 µs | p99 µs | p99.9 µs | errors | server CPU % | server CPU µs/call | bench CPU % | others CPU % |")
out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for wl in "$CONN_WORKLOADS".split():
    for r in sorted(sel(part="conns", wl=wl), key=lambda r: (r["round"], r["conns"])):
        out.append(f"| {wl} | {r['round']} | {r['conns']:,} | {f0(rps(r))} | {f0(lat(r,'p50'))} | {f0(lat(r,'p99'))} | {f0(lat(r,'p999'))} "
                   f"| {errs(r)} | {f1(r.get('server_cpu_pct'))} | {f2(spc(r))} | {f1(r.get('bench_cpu_pct'))} | {f0(others(r))} |")
out.append("")
for wl in "$CONN_WORKLOADS".split():
    few, many = sel(part="conns", wl=wl, conns=$FEW_CONNS), sel(part="conns", wl=wl, conns=$MANY_CONNS)
    if not few or not many: continue
    ratio = mean([rps(r) for r in many]) / (mean([rps(r) for r in few]) or 1)
    e = sum(errs(r) for r in many)
    cpu = (mean([spc(r) for r in many]) or 0) / (mean([spc(r) for r in few]) or 1)
    verdicts.append(f"{mark(ratio >= 0.8 and e == 0)} {wl}: $MANY_CONNS connections give {pct(ratio)} of the $FEW_CONNS-connection calls/s "
                    f"(target ≥ 80 %), {e} errors (target 0); server CPU per call {cpu:.2f}× the $FEW_CONNS-connection runs")
n = note("conns")
if n: out.append(f"Server RSS after part 1: {f1(mb(n.get('server_rss_kb')))} MB (peak {f1(mb(n.get('server_hwm_kb')))} MB).\n")

# 2
n = note("idle")
out.append("### 2. $IDLE_CONNS idle connections\n")
out.append("Benchmarks/scale/hold_connections.py opens the connections and sends nothing; the server runs with "
           "\`--max-connections $IDLE_MAX_CONNECTIONS\` and the default idle timeout. get and ping at 64 in flight over 4 connections, "
           "${WARMUP} s warm-up, ${IDLE_DURATION} s measured, before and while the idle connections are open.\n")
if n:
    opened = n.get("opened") or 0
    per = (n["rss_held_kb"] - n["rss_before_kb"]) * 1024 / opened if opened else None
    out.append("| | value |")
    out.append("|---|---:|")
    out.append(f"| connections opened / failed | {opened:,} / {n.get('failed')} (in {n.get('connect_s')} s) |")
    out.append(f"| server descriptors before / held / end of hold / after release | {n.get('fds_before')} / {n.get('fds_held'):,} / {n.get('fds_held_end'):,} / {n.get('fds_released')} |")
    out.append(f"| server RSS before (warmed up) | {f1(mb(n['rss_before_kb']))} MB |")
    out.append(f"| server RSS with them open | {f1(mb(n['rss_held_kb']))} MB |")
    out.append(f"| server RSS with them open, after the load runs | {f1(mb(n['rss_held_after_load_kb']))} MB |")
    out.append(f"| server RSS after release | {f1(mb(n['rss_released_kb']))} MB |")
    out.append(f"| server peak RSS (VmHWM) | {f1(mb(n['hwm_kb']))} MB |")
    out.append(f"| anonymous RSS (RssAnon) before / held | {f1(mb(n.get('anon_before_kb')))} / {f1(mb(n.get('anon_held_kb')))} MB |")
    out.append(f"| RSS per idle connection | {f0(per)} bytes |")
    out.append(f"| kernel TCP buffer memory (whole machine, /proc/net/sockstat) before / held | {f0(n.get('tcp_mem_before_kb'))} / {f0(n.get('tcp_mem_held_kb'))} kB (not in RSS) |")
    out.append(f"| still open at release / closed by the server | {n.get('still_open')} / {n.get('closed_by_server')} (held {n.get('hold_s')} s; idle timeout {n.get('idle_timeout_s')} s) |")
    out.append(f"| warn/error lines in the server log | {n.get('server_log_errors')} |")
    out.append("")
    out.append("| workload | idle connections | calls/s | p50 µs | p99 µs | p99.9 µs | errors | server CPU % | server CPU µs/call | others CPU % |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for wl in ("get", "ping"):
        for phase, label in (("without", "0 (before)"), ("with", f"{opened:,}"), ("after", "0 (after release)")):
            for r in sel(part="idle", phase=phase, wl=wl):
                out.append(f"| {wl} | {label} | {f0(rps(r))} | {f0(lat(r,'p50'))} | {f0(lat(r,'p99'))} | {f0(lat(r,'p999'))} "
                           f"| {errs(r)} | {f1(r.get('server_cpu_pct'))} | {f2(spc(r))} | {f0(others(r))} |")
    out.append("")
    peak = max(n["rss_held_kb"], n["rss_held_after_load_kb"])
    responsive = all(errs(r) == 0 and rps(r) > 0 for r in sel(part="idle", phase="with"))
    ratios = []
    for wl in ("get", "ping"):
        w, wo = sel(part="idle", phase="with", wl=wl), sel(part="idle", phase="without", wl=wl)
        if w and wo and rps(wo[0]) and spc(wo[0]):
            ratios.append(f"{wl} {pct(rps(w[0]) / rps(wo[0]))} of the calls/s, {(spc(w[0]) or 0) / spc(wo[0]):.2f}× the server CPU per call")
    verdicts.append(f"{mark(opened >= $IDLE_CONNS and n.get('closed_by_server') == 0 and responsive)} {opened:,} idle connections held "
                    f"({n.get('closed_by_server')} closed by the server); while open the server answered with 0 errors: {responsive} "
                    f"(with vs without: {'; '.join(ratios)})")
    cpu_ratios = []
    for wl in ("get", "ping"):
        w, wo = sel(part="idle", phase="with", wl=wl), sel(part="idle", phase="without", wl=wl)
        if w and wo and spc(w[0]) and spc(wo[0]): cpu_ratios.append((wl, spc(w[0]) / spc(wo[0])))
    if cpu_ratios:
        verdicts.append(f"{mark(all(r <= 1.25 for _, r in cpu_ratios))} (a finding, not a stated target) idle connections should cost "
                        f"nothing per call: server CPU per call with them open is "
                        + ", ".join(f"{r:.2f}× for {wl}" for wl, r in cpu_ratios) + " (≤ 1.25× expected)")
    verdicts.append(f"{mark(peak < $RSS_LIMIT_MB * 1024)} server RSS with them open {f1(mb(peak))} MB (target < $RSS_LIMIT_MB MB), "
                    f"{f0(per)} bytes per idle connection")

# 3
out.append("### 3. Table size: 0 to $(echo "$SIZES" | awk '{print $NF}') meal records\n")
out.append("meal_records filled through the API (\`larder bench --workload create --requests N --concurrency $FILL_CONCURRENCY "
           "--connections $FILL_CONNS\`, durability normal). At each size: get (GetLocation by id), list (ListMealRecords, first "
           "page of 50) and create, each $SIZE_CONCURRENCY in flight over $SIZE_CONNS connections, ${WARMUP} s warm-up, ${SIZE_DURATION} s measured. "
           "*records* is counted in the database before the get run (the get/list runs seed 1,000 locations / 500 meals "
           "each, the create run adds its own).\n")
out.append("| target size | records | fill time s | fill calls/s | DB file MB | WAL file MB | server RSS MB (anon + file) |")
out.append("|---:|---:|---:|---:|---:|---:|---|")
sizes = [int(s) for s in "$SIZES".split()]
for s in sizes:
    n = next((x for x in notes if x.get("part") == "size" and x.get("size") == s), {})
    fills = sel(part="fill", size=s)
    calls = sum(r.get("calls") or 0 for r in fills); secs = sum(r.get("seconds") or 0 for r in fills)
    out.append(f"| {s:,} | {n.get('records', 0):,} | {n.get('fill_s', '–')} | {f0(calls / secs) if secs else '–'} "
               f"| {f1((n.get('db_bytes') or 0) / 1e6)} | {f1((n.get('wal_bytes') or 0) / 1e6)} "
               f"| {f1(mb(n.get('rss_kb')))} ({f1(mb(n.get('anon_kb')))} + {f1(mb(n.get('file_kb')))}) |")
n = note("size-end")
fill_total = sum(x.get("fill_s") or 0 for x in notes if x.get("part") == "size")
if n: out.append(f"\nFilling took {fill_total} s in all (plus the records the measurement runs created). At the end: "
                 f"{n.get('records', 0):,} records, server RSS {f1(mb(n.get('rss_kb')))} MB "
                 f"({f1(mb(n.get('anon_kb')))} MB anonymous + {f1(mb(n.get('file_kb')))} MB file-backed: the binary, libraries and the mmap'ed database), "
                 f"{n.get('server_log_errors')} warn/error lines in the server log.")
out.append("")
out.append("| workload | records | calls/s | vs empty | p50 µs | vs empty | p99 µs | vs empty | server CPU µs/call | vs empty | errors | server CPU % | others CPU % |")
out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for wl in ("get", "list", "create"):
    base = next(iter(sel(part="size", wl=wl, size=sizes[0])), None) if sizes else None
    for s in sizes:
        for r in sel(part="size", wl=wl, size=s):
            rel = lambda a, b: "–" if not a or not b else f"{a / b:.2f}×"
            out.append(f"| {wl} | {r['records']:,} | {f0(rps(r))} | {rel(rps(r), base and rps(base))} | {f0(lat(r,'p50'))} "
                       f"| {rel(lat(r,'p50'), base and lat(base,'p50'))} | {f0(lat(r,'p99'))} | {rel(lat(r,'p99'), base and lat(base,'p99'))} "
                       f"| {f2(spc(r))} | {rel(spc(r), base and spc(base))} | {errs(r)} | {f1(r.get('server_cpu_pct'))} | {f0(others(r))} |")
    if base and len(sizes) > 1:
        last = next(iter(sel(part="size", wl=wl, size=sizes[-1])), None)
        if last:
            r_rps = rps(last) / rps(base) if rps(base) else 0
            r_p50 = lat(last, "p50") / lat(base, "p50") if lat(base, "p50") else 0
            r_cpu = (spc(last) or 0) / spc(base) if spc(base) else 0
            cpu_text = f"; server CPU per call {r_cpu:.2f}× (≤ 1.25× means the server does not work harder per call)"
            ob, ol = others(base), others(last)
            if ob is not None and ol is not None and abs(ol - ob) > 25:
                cpu_text += f"; ⚠️ noisy comparison: others CPU {ob:.0f} % vs {ol:.0f} %"
            if wl == "create":
                verdicts.append(f"{mark(r_rps >= 0.8)} create at {last['records']:,} records: {pct(r_rps)} of the empty database's calls/s (target ≥ 80 %){cpu_text}")
            else:
                verdicts.append(f"{mark(r_rps >= 0.8 and r_p50 <= 1.2)} {wl} at {last['records']:,} records: calls/s {pct(r_rps)} and p50 {r_p50:.2f}× "
                                f"of the empty database's (target: calls/s ≥ 80 %, p50 ≤ 1.2×){cpu_text}")
out.append("")
out.append("### Section 3 targets (this run)\n")
out += [f"- {v}" for v in verdicts]
out.append("")
out.append("Throughput on this shared 2-core machine moves by ±20 % between identical runs; compare rows whose *others CPU %* are alike.")
out.append("<!-- scale:end -->")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY

# Replace the block between the markers in OUT, or append it.
mkdir -p "$(dirname "$OUT")"
touch "$OUT"
python3 - "$OUT" "$SECTION" <<'PY'
import sys
path, section = sys.argv[1], open(sys.argv[2]).read().rstrip("\n")
text = open(path).read()
begin, end = "<!-- scale:begin -->", "<!-- scale:end -->"
b, e = text.find(begin), text.find(end)
if 0 <= b < e:
    text = text[:b] + section + text[e + len(end):]
else:
    text = text.rstrip("\n") + ("\n\n" if text.strip() else "") + section + "\n"
open(path, "w").write(text)
PY
log "wrote the scale section of $OUT"
cat "$SECTION"
if [[ -z "${SKIP_HTTP2:-}" ]]; then
  SKIP_BUILD=1 SCRATCH="$SCRATCH" OUT="$OUT" SERVER_CPU="$SERVER_CPU" CLIENT_CPU="$CLIENT_CPU" IDLE_CONNS="$IDLE_CONNS" \
    IDLE_MAX_CONNECTIONS="$IDLE_MAX_CONNECTIONS" IDLE_DURATION="$IDLE_DURATION" WARMUP="$WARMUP" RSS_LIMIT_MB="$RSS_LIMIT_MB" \
    IDLE_TIMEOUT="$IDLE_TIMEOUT" scripts/scale-http2.sh
fi
