#!/usr/bin/env bash
# Installs what Larder needs, builds it in release mode, starts larder-server
# on its defaults (SQLite file ./larder.sqlite, 127.0.0.1:7411), shows a first
# client call, and keeps the server in the foreground until Ctrl-C.
#
# Extra arguments go to larder-server, e.g. scripts/start.sh --durability normal
# or scripts/start.sh --listen 127.0.0.1:7500 (LARDER_LISTEN works too). The
# client calls go to the address the server itself reports it listens on, so
# they never reach another server. When the address is taken, or the server
# exits or does not answer, it says why and exits non-zero; it never leaves the
# server it started running (Ctrl-C, errors and exits all stop it).
#
# Env: LARDER_START_BIN=DIR  use larder-server and larder from DIR; skip installing and building
#      LARDER_START_WAIT=30  seconds to wait for the server to listen
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "start: $*" >&2; }

# The address asked for: the last --listen among the arguments, else $LARDER_LISTEN, else the default.
LISTEN=${LARDER_LISTEN:-127.0.0.1:7411}
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --listen) LISTEN=${args[i + 1]:-} ;;
    --listen=*) LISTEN=${args[i]#--listen=} ;;
  esac
done

if [[ -n ${LARDER_START_BIN:-} ]]; then
  BIN=$LARDER_START_BIN
else
  scripts/install-deps.sh
  export LARDER_COMMIT=$(scripts/commit-id.sh)   # for larder --version (Package.swift)
  log "scripts/build-release.sh"
  scripts/build-release.sh >&2
  BIN=$(swift build -c release --show-bin-path)
fi

# What a client dials for a listening address: a wildcard host means this machine's loopback.
dial_address() {
  local host=${1%:*} port=${1##*:}
  case $host in
    0.0.0.0 | "") host=127.0.0.1 ;;
    "[::]" | "::") host="[::1]" ;;
  esac
  echo "$host:$port"
}

# Refuse an address another process already listens on (the server would fail too; this says it plainly).
port=${LISTEN##*:}
if [[ $port != 0 ]]; then
  probe=$(dial_address "$LISTEN")
  probe_host=${probe%:*}; probe_host=${probe_host#[}; probe_host=${probe_host%]}
  if (exec 3<>"/dev/tcp/$probe_host/$port") 2>/dev/null; then
    log "$LISTEN is already taken: another process listens on port $port (it is not the server this script starts)."
    log "Stop it, or start on another address: scripts/start.sh --listen 127.0.0.1:PORT"
    exit 1
  fi
fi

SERVER=""
WORK=$(mktemp -d "${TMPDIR:-/tmp}/larder-start.XXXXXX")
stop_server() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n $SERVER ]] && kill -0 "$SERVER" 2>/dev/null; then
    log "stopping larder-server (pid $SERVER)"
    kill -TERM "$SERVER" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$SERVER" 2>/dev/null; then
      log "larder-server did not stop within 10 s; killing it"
      kill -KILL "$SERVER" 2>/dev/null || true
    fi
    wait "$SERVER" 2>/dev/null || true
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The server's log goes to the terminal and to a file this script reads its address from.
LOG=$WORK/server.log
: >"$LOG"
LARDER_LISTEN=$LISTEN "$BIN/larder-server" "$@" 2> >(tee -a "$LOG" >&2) &
SERVER=$!
log "larder-server pid $SERVER"

ADDRESS=""
for _ in $(seq $((${LARDER_START_WAIT:-30} * 10))); do
  ADDRESS=$(sed -n 's/.*event=listening address=\([^ ]*\).*/\1/p' "$LOG" | head -n 1)
  [[ -n $ADDRESS ]] && break
  if ! kill -0 "$SERVER" 2>/dev/null; then
    set +e; wait "$SERVER"; code=$?; set -e
    SERVER=""
    # tee may still be writing the server's last lines: give it up to 5 s to write its error.
    for _ in $(seq 50); do grep -q "level=error\|Address already in use" "$LOG" && break; sleep 0.1; done
    if grep -q "Address already in use" "$LOG"; then
      log "larder-server could not listen on $LISTEN: the address is already taken by another process"
    else
      log "larder-server exited (status $code) before listening on $LISTEN; see its message above"
    fi
    exit 1
  fi
  sleep 0.1
done
if [[ -z $ADDRESS ]]; then
  log "larder-server did not report listening within ${LARDER_START_WAIT:-30} s"
  exit 1
fi
SERVER_ADDRESS=$(dial_address "$ADDRESS")
LARDER=("$BIN/larder" --server "$SERVER_ADDRESS")

if ! "${LARDER[@]}" health >/dev/null 2>&1; then
  sleep 1
  if ! "${LARDER[@]}" health; then
    log "larder-server listens on $ADDRESS but its health check failed"
    exit 1
  fi
fi

echo
echo "\$ larder --server $SERVER_ADDRESS health"; "${LARDER[@]}" health
echo "\$ larder --server $SERVER_ADDRESS locations list"; "${LARDER[@]}" locations list
echo
echo "larder-server is running on $ADDRESS (pid $SERVER). Try: $BIN/larder --server $SERVER_ADDRESS --help   — Ctrl-C stops it."
set +e
wait "$SERVER"
code=$?
set -e
SERVER=""
log "larder-server exited (status $code)"
exit "$code"
