#!/usr/bin/env bash
# Failover under load, on this machine (127.0.0.1 only), bounded in time:
#   - starts the Patroni cluster (scripts/ha-cluster.sh), two larder-server
#     replicas on its multi-host URL, and HAProxy in front of them (deploy/haproxy.cfg);
#   - runs write and read load through HAProxy (scripts/ha-load.py);
#   - kill -9s the PostgreSQL primary ROUNDS times, waiting for a new primary
#     and for the load to come back each time; then freezes the primary with
#     SIGSTOP for FREEZE seconds (longer than a failover takes); then kill -9s
#     one larder-server replica;
#   - checks that every write acknowledged OK is on the primary afterwards,
#     that the members hold the same rows, and prints per event the seconds
#     without an acknowledged write, the time until the write rate was back,
#     and the failed calls by status. Last line:
#     rounds=N acknowledged=N lost=0 max_unavailable_s=X   (exit 1 when lost > 0)
#
#   scripts/ha-failover.sh [ROUNDS]     # default 3; ROUNDS=1 is the short CI version
#
# Environment: LARDER_HA_PORT (base port, default 61400, above Linux's ephemeral
# ports; uses P..P+41),
# LARDER_HA_FREEZE (seconds, default 20; 0 skips the freeze),
# LARDER_HA_KILL_REPLICA (1 = default, 0 skips), LARDER_SERVER_BIN (default .build/debug/larder-server).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
BASE=${LARDER_HA_PORT:-61400}
FREEZE=${LARDER_HA_FREEZE:-20}
KILL_REPLICA=${LARDER_HA_KILL_REPLICA:-1}
SERVER_BIN=${LARDER_SERVER_BIN:-.build/debug/larder-server}
CLI_BIN=$(dirname "$SERVER_BIN")/larder
PYTHON=${LARDER_VENV:-.venv}/bin/python
export LARDER_HA_PORT=$BASE
export LARDER_HA_DIR=${LARDER_HA_DIR:-${TMPDIR:-/tmp}/larder-ha-$BASE}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/larder-ha-failover.XXXXXX")
EVENTS=$WORK/events.txt
FRONT=127.0.0.1:$((BASE + 40))
REPLICAS=(127.0.0.1:$((BASE + 31)) 127.0.0.1:$((BASE + 32)))
MEMBER_PORTS=$((BASE + 11)),$((BASE + 12)),$((BASE + 13))
SECONDS=0

log() { echo "ha-failover: [${SECONDS}s] $*" >&2; }
die() { log "$*"; exit 1; }

[[ -x "$SERVER_BIN" ]] || die "no $SERVER_BIN: run swift build first"
[[ -x "$PYTHON" ]] || die "no Python venv: run scripts/install-deps.sh"

PIDS=()
cleanup() {
  touch "$WORK/stop"
  for pid in "${PIDS[@]}"; do kill -CONT "$pid" 2>/dev/null || true; kill -KILL "$pid" 2>/dev/null || true; done
  cp "$LARDER_HA_DIR"/*.log "$WORK/" 2>/dev/null || true
  [[ ${LARDER_HA_KEEP:-0} == 1 ]] || scripts/ha-cluster.sh stop >/dev/null 2>&1 || true
  log "logs and results kept in $WORK"
}
trap cleanup EXIT

# The member that is the primary now (its Patroni REST port answers /primary with 200), as an index 0..2.
primary_index() {
  for i in 0 1 2; do
    if "$PYTHON" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$((BASE + 21 + i))/primary', timeout=1)" 2>/dev/null; then
      echo "$i"; return 0
    fi
  done
  return 1
}

# The postmaster and its children of member i: what "the PostgreSQL server" is.
postgres_pids() {
  local pidfile=$LARDER_HA_DIR/pg$(($1 + 1))/data/postmaster.pid pm
  [[ -f "$pidfile" ]] || return 0
  pm=$(head -n 1 "$pidfile")
  echo "$pm"
  pgrep -P "$pm" || true
}

# Waits (up to $2 s) for a primary other than member $1 and a synchronous standby.
wait_new_primary() {
  local old=$1 limit=$2 start=$SECONDS now
  while (( SECONDS - start < limit )); do
    now=$(primary_index || true)
    if [[ -n "$now" && "$now" != "$old" ]]; then echo "$now"; return 0; fi
    sleep 0.2
  done
  return 1
}

# Waits (up to $1 s) until the load's write rate is at least half of $2.
wait_rate() {
  local target=$2 start=$SECONDS rate
  while (( SECONDS - start < $1 )); do
    rate=$(cat "$WORK/rate.txt" 2>/dev/null || echo 0)
    (( rate * 2 >= target && rate > 0 )) && return 0
    sleep 0.25
  done
  return 1
}

# Waits (up to $1 s) for every member to be running again (the old primary rejoined), every
# replica on the leader's timeline with a known lag, and that state held for 5 s: a killed primary that Patroni starts
# shows "running" for a moment on its old timeline before it stops it again to pg_rewind, and
# an event then (a freeze of the rewind's source) left it down for good on a loaded machine.
wait_members() {
  local start=$SECONDS steady_since=-1
  while (( SECONDS - start < $1 )); do
    if "$PYTHON" - "$BASE" <<'PY' 2>/dev/null
import json, sys, urllib.request
base = int(sys.argv[1])
members = json.load(urllib.request.urlopen(f"http://127.0.0.1:{base + 21}/cluster", timeout=1))["members"]
ok = len(members) == 3 and all(m["state"] in ("running", "streaming") for m in members)
replicas = [m for m in members if m["role"] != "leader"]
leader_timeline = next((m.get("timeline") for m in members if m["role"] == "leader"), None)
ok = ok and all(isinstance(m.get("lag"), int) and m.get("timeline") == leader_timeline for m in replicas)
sys.exit(0 if ok and any(m["role"] == "sync_standby" for m in members) else 1)
PY
    then
      (( steady_since < 0 )) && steady_since=$SECONDS
      (( SECONDS - steady_since >= 5 )) && return 0
    else
      steady_since=-1
    fi
    sleep 0.5
  done
  return 1
}

event() { echo "$(date +%s.%N) $1" >>"$EVENTS"; log "event: $1"; }

log "starting the database cluster"
URL=$(scripts/ha-cluster.sh start)
for i in 0 1; do
  "$SERVER_BIN" --listen "${REPLICAS[$i]}" --db "$URL" --log-level info >"$WORK/larder$((i + 1)).log" 2>&1 &
  PIDS+=($!)
done
for i in 0 1; do
  for _ in $(seq 100); do
    "$CLI_BIN" --server "${REPLICAS[$i]}" --timeout 2 health >/dev/null 2>&1 && break
    sleep 0.2
  done
done
export LARDER_FRONT=$FRONT LARDER_REPLICA1=${REPLICAS[0]} LARDER_REPLICA2=${REPLICAS[1]}
export LARDER_PG_FRONT=127.0.0.1:$((BASE + 41))
for i in 1 2 3; do export "LARDER_PG$i=127.0.0.1:$((BASE + 10 + i))" "LARDER_PATRONI$i=$((BASE + 20 + i))"; done
haproxy -q -f deploy/haproxy.cfg >"$WORK/haproxy.log" 2>&1 &
PIDS+=($!)
log "larder-server replicas ${REPLICAS[*]} behind HAProxy at $FRONT"

"$PYTHON" scripts/ha-load.py run --server "$FRONT" --out "$WORK" --stop-file "$WORK/stop" \
  --max-seconds $((60 + ROUNDS * 60 + FREEZE * 2)) 2>"$WORK/load.log" &
LOAD=$!
wait_rate 30 2 || die "the load did not start"
sleep 3
BASELINE=$(cat "$WORK/rate.txt")
log "load running at ~$BASELINE writes/s"

for round in $(seq "$ROUNDS"); do
  old=$(primary_index) || die "no primary before round $round"
  event "kill9-primary-$round"
  kill -KILL $(postgres_pids "$old" | head -n 1)
  new=$(wait_new_primary "$old" 60) || die "no new primary within 60 s in round $round"
  log "round $round: pg$((new + 1)) is the primary"
  wait_rate 60 "$BASELINE" || log "round $round: the write rate did not come back within 60 s"
  wait_members 90 || log "round $round: not every member is back within 90 s"
  sleep 2
done

if (( FREEZE > 0 )); then
  old=$(primary_index) || die "no primary before the freeze"
  frozen=$(postgres_pids "$old" | tr '\n' ' ')
  event "sigstop-primary-${FREEZE}s"
  freeze_start=$SECONDS
  kill -STOP $frozen
  new=$(wait_new_primary "$old" "$FREEZE") && log "freeze: pg$((new + 1)) promoted while pg$((old + 1)) is frozen"
  wait_rate "$FREEZE" "$BASELINE" || log "freeze: the write rate did not come back while the primary was frozen"
  remaining=$(( FREEZE - (SECONDS - freeze_start) ))
  (( remaining > 0 )) && sleep "$remaining"
  kill -CONT $frozen 2>/dev/null || true
  log "freeze: pg$((old + 1)) resumed"
  wait_rate 60 "$BASELINE" || log "freeze: the write rate did not come back"
  wait_members 90 || log "freeze: not every member is back within 90 s"
  sleep 2
fi

if (( KILL_REPLICA == 1 )); then
  event "kill9-larder-replica-1"
  kill -KILL "${PIDS[0]}"
  wait_rate 30 "$BASELINE" || log "the write rate did not come back after the replica was killed"
  sleep 3
fi

touch "$WORK/stop"
wait_members 90 || log "not every member is running at the end"
wait "$LOAD" || die "the load generator failed: $(tail -n 5 "$WORK/load.log")"
cat "$WORK/load.log" >&2
log "verifying"
"$PYTHON" scripts/ha-load.py report --out "$WORK" --events "$EVENTS" --member-ports "$MEMBER_PORTS"
