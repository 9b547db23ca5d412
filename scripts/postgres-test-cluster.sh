#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and benchmarks, from Debian's
# `postgresql` package binaries (/usr/lib/postgresql/<version>/bin).
#
#   scripts/postgres-test-cluster.sh start   # prints the URL, e.g. postgres://larder@127.0.0.1:55432/postgres
#   scripts/postgres-test-cluster.sh url     # prints the URL of the running cluster
#   scripts/postgres-test-cluster.sh stop    # stops it and deletes its files
#
# The cluster listens on 127.0.0.1 only (port $LARDER_PG_PORT, default 55432),
# trusts every local connection (it holds test data only), and lives in
# $LARDER_PG_DIR (default ${TMPDIR:-/tmp}/larder-postgres-$PORT). initdb refuses
# to run as root, so as root the server runs as the `postgres` user that the
# Debian package creates (or a `larder-pg` user created here when it is missing).
#
# LARDER_PG_FSYNC=on keeps PostgreSQL's crash-safe defaults (for benchmarks);
# the default is fsync=off, which makes the many CREATE DATABASEs of the tests fast.
set -euo pipefail

PORT=${LARDER_PG_PORT:-55432}
DIR=${LARDER_PG_DIR:-${TMPDIR:-/tmp}/larder-postgres-$PORT}
FSYNC=${LARDER_PG_FSYNC:-off}
USER_NAME=larder
URL="postgres://$USER_NAME@127.0.0.1:$PORT/postgres"

log() { echo "postgres-test-cluster: $*" >&2; }

bin_dir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [[ -z "$dir" || ! -x "$dir/initdb" ]]; then
    log "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin; run scripts/install-deps.sh (apt package postgresql)"
    exit 1
  fi
  echo "$dir"
}

# Runs a command as the cluster's owner: as-is for a normal user, through runuser as root.
as_owner() {
  if [[ $(id -u) -ne 0 ]]; then
    "$@"
  else
    runuser -u "$OWNER" -- "$@"
  fi
}

pick_owner() {
  OWNER=$(id -un)
  if [[ $(id -u) -eq 0 ]]; then
    if id postgres >/dev/null 2>&1; then
      OWNER=postgres
    else
      id larder-pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin larder-pg
      OWNER=larder-pg
    fi
  fi
}

running() {
  [[ -f "$DIR/data/postmaster.pid" ]] && as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1
}

wait_ready() {
  for _ in $(seq 100); do
    "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" && return 0
    sleep 0.1
  done
  log "the server did not accept connections within 10 s; its log:"
  cat "$DIR/server.log" >&2 || true
  return 1
}

start() {
  if running; then
    log "already running in $DIR"
    echo "$URL"
    return
  fi
  rm -rf "$DIR"
  mkdir -p "$DIR"
  chown "$OWNER" "$DIR"
  chmod 700 "$DIR"
  log "initdb in $DIR (PostgreSQL $("$BIN/postgres" --version | awk '{print $3}'), owner $OWNER)"
  as_owner "$BIN/initdb" -D "$DIR/data" -U "$USER_NAME" --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
    >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
  # Loopback only; the socket lives in the cluster's directory, not /var/run/postgresql.
  as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 -o \
    "-p $PORT -c listen_addresses=127.0.0.1 -k $DIR -c max_connections=400 -c fsync=$FSYNC -c full_page_writes=$FSYNC" \
    start >/dev/null || { cat "$DIR/server.log" >&2; exit 1; }
  wait_ready
  log "listening on 127.0.0.1:$PORT"
  echo "$URL"
}

stop() {
  if [[ -f "$DIR/data/postmaster.pid" ]]; then
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1 || log "pg_ctl stop failed"
  fi
  rm -rf "$DIR"
  log "stopped; removed $DIR"
}

BIN=$(bin_dir)
pick_owner
DIR=$(realpath -m "$DIR")
# The owner may not be able to read the caller's directory; run from one it can.
cd /
case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) running && echo "$URL" || { log "not running"; exit 1; } ;;
  *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
