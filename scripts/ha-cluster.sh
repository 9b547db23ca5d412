#!/usr/bin/env bash
# A replicated PostgreSQL cluster on this machine, for trying and testing
# failover: one etcd, three PostgreSQL 15 members managed by Patroni with
# synchronous_mode on (a commit is acknowledged only once a standby has it).
# Everything listens on 127.0.0.1 only.
#
#   scripts/ha-cluster.sh start    # starts it, waits for a primary and a sync standby, prints the URL
#   scripts/ha-cluster.sh url      # prints the multi-host URL larder-server connects with
#   scripts/ha-cluster.sh status   # members, roles, timelines (patronictl list)
#   scripts/ha-cluster.sh stop     # stops it and deletes its files
#
# Ports from $LARDER_HA_PORT (default 61400, above the ephemeral range): etcd P and P+1 (peer), PostgreSQL
# P+11..P+13, Patroni's REST API P+21..P+23. Files in $LARDER_HA_DIR (default
# ${TMPDIR:-/tmp}/larder-ha-P). $LARDER_HA_FSYNC=off trades crash safety of
# each member's disk for speed (replication still holds). Patroni refuses to
# run as root: as root, Patroni and PostgreSQL run as the `postgres` user.
# Installs its packages first (scripts/install-ha-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

BASE=${LARDER_HA_PORT:-61400}
DIR=${LARDER_HA_DIR:-${TMPDIR:-/tmp}/larder-ha-$BASE}
FSYNC=${LARDER_HA_FSYNC:-on}
ETCD_PORT=$BASE
MEMBERS=(pg1 pg2 pg3)
pg_port() { echo $((BASE + 11 + $1)); }
api_port() { echo $((BASE + 21 + $1)); }

log() { echo "ha-cluster: $*" >&2; }

url() {
  local hosts=()
  for i in 0 1 2; do hosts+=("127.0.0.1:$(pg_port $i)"); done
  local joined
  joined=$(IFS=,; echo "${hosts[*]}")
  echo "postgres://postgres@$joined/postgres?target_session_attrs=read-write"
}

owner() { if [[ $(id -u) -eq 0 ]]; then echo postgres; else id -un; fi; }

# Prefix that runs a command as the owner; setpriv execs it (no child in between),
# so `"${AS_OWNER[@]}" cmd &` leaves the real pid in $!.
AS_OWNER=()
[[ $(id -u) -eq 0 ]] && AS_OWNER=(setpriv --reuid=postgres --regid=postgres --init-groups --)
as_owner() { "${AS_OWNER[@]}" "$@"; }

bin_dir() { ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1; }

# GET on a Patroni REST endpoint; prints the body, fails on non-2xx.
api() {
  python3 - "$1" <<'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
        sys.stdout.write(r.read().decode())
except Exception:
    sys.exit(1)
PY
}

# True when the cluster has a running leader and a streaming synchronous standby.
healthy() {
  api "http://127.0.0.1:$(api_port 0)/cluster" 2>/dev/null | python3 -c '
import json, sys
members = json.load(sys.stdin).get("members", [])
leader = any(m["role"] == "leader" and m["state"] == "running" for m in members)
sync = any(m["role"] == "sync_standby" and m["state"] in ("streaming", "running") for m in members)
sys.exit(0 if leader and sync else 1)' 2>/dev/null
}

running() { [[ -f "$DIR/etcd.pid" ]] && kill -0 "$(cat "$DIR/etcd.pid")" 2>/dev/null; }

start() {
  if running && healthy; then
    log "already running in $DIR"
    url
    return
  fi
  scripts/install-ha-deps.sh
  stop_quietly
  local bin
  bin=$(bin_dir)
  mkdir -p "$DIR"
  chmod 755 "$DIR"
  log "starting etcd on 127.0.0.1:$ETCD_PORT"
  # Runs as the owner too: nothing here needs root.
  mkdir -p "$DIR/etcd"
  chown "$(owner)" "$DIR/etcd"
  "${AS_OWNER[@]}" etcd --name e1 --data-dir "$DIR/etcd/data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "e1=http://127.0.0.1:$((ETCD_PORT + 1))" --initial-cluster-state new \
    --enable-v2=true >"$DIR/etcd.log" 2>&1 < /dev/null &
  echo $! >"$DIR/etcd.pid"
  for _ in $(seq 100); do
    api "http://127.0.0.1:$ETCD_PORT/health" >/dev/null 2>&1 && break
    sleep 0.1
  done
  api "http://127.0.0.1:$ETCD_PORT/health" >/dev/null || { log "etcd did not come up; its log:"; cat "$DIR/etcd.log" >&2; exit 1; }

  for i in 0 1 2; do
    local name=${MEMBERS[$i]} member=$DIR/${MEMBERS[$i]}
    mkdir -p "$member"
    sed -e "s|@NAME@|$name|g" -e "s|@HOST@|127.0.0.1|g" -e "s|@API_PORT@|$(api_port $i)|g" \
        -e "s|@PG_PORT@|$(pg_port $i)|g" -e "s|@DIR@|$member|g" -e "s|@BIN_DIR@|$bin|g" \
        -e "s|@ETCD_HOSTS@|127.0.0.1:$ETCD_PORT|g" -e "s|@FSYNC@|$FSYNC|g" \
        deploy/patroni.yml.in >"$member/patroni.yml"
    chown -R "$(owner)" "$member"
    chmod 700 "$member"
    # A PGPASSWORD (or other PG*) in Patroni's environment breaks replica bootstrap silently.
    "${AS_OWNER[@]}" env -u PGPASSWORD -u PGUSER -u PGHOST -u PGPORT -u PGDATABASE \
      patroni "$member/patroni.yml" >"$DIR/$name.log" 2>&1 < /dev/null &
    echo $! >"$DIR/$name.pid"
    # The first member bootstraps alone, so it surely becomes the first primary.
    if [[ $i -eq 0 ]]; then
      for _ in $(seq 300); do
        api "http://127.0.0.1:$(api_port 0)/primary" >/dev/null 2>&1 && break
        sleep 0.1
      done
    fi
  done
  for _ in $(seq 600); do
    if healthy; then
      log "up: $(url)"
      url
      return
    fi
    sleep 0.1
  done
  log "no primary with a synchronous standby within 60 s; logs in $DIR:"
  tail -n 20 "$DIR"/pg*.log >&2 || true
  exit 1
}

status() {
  if ! running; then
    log "not running"
    exit 1
  fi
  as_owner patronictl -c "$DIR/pg1/patroni.yml" list
}

# Stops Patroni (which stops its PostgreSQL), then etcd; kills what is left. Deletes the files.
stop_quietly() {
  [[ -d "$DIR" ]] || return 0
  local pids=()
  for name in "${MEMBERS[@]}"; do
    [[ -f "$DIR/$name.pid" ]] && pids+=("$(cat "$DIR/$name.pid")")
  done
  for pid in "${pids[@]}"; do kill -CONT "$pid" 2>/dev/null || true; kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    (( alive == 0 )) && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  # A postmaster left behind (its Patroni was killed): found by its own pid file.
  for name in "${MEMBERS[@]}"; do
    local pidfile=$DIR/$name/data/postmaster.pid
    if [[ -f "$pidfile" ]]; then
      local pid
      pid=$(head -n 1 "$pidfile")
      kill -CONT "$pid" 2>/dev/null || true
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  if [[ -f "$DIR/etcd.pid" ]]; then
    kill -TERM "$(cat "$DIR/etcd.pid")" 2>/dev/null || true
    sleep 0.3
    kill -KILL "$(cat "$DIR/etcd.pid")" 2>/dev/null || true
  fi
  rm -rf "$DIR"
}

case "${1:-}" in
  start) start ;;
  url) url ;;
  status) status ;;
  stop) stop_quietly; log "stopped" ;;
  *) echo "usage: $0 start|url|status|stop" >&2; exit 2 ;;
esac
