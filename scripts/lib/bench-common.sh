# Shared by the benchmark scripts (scripts/bench.sh, bench-grpc.sh, scale.sh, scale-http2.sh):
# logging, the processes a run starts and stops, waiting for a log line, /proc readings.
# Source it from the repository root; BENCH_NAME names the script in log lines.

BENCH_NAME=${BENCH_NAME:-$(basename "$0")}
log() { echo "$BENCH_NAME: $(date -u +%H:%M:%S) $*" >&2; }
die() { log "$*"; exit 1; }

# bench_workdir PREFIX [EXTRA_PATH...]: makes WORKDIR (/tmp/PREFIX.XXXXXX) and PIDS; on exit,
# every process in PIDS still running gets SIGTERM and is waited for, then WORKDIR (and the
# extra paths) are deleted. Only the processes the script started are ever signalled.
bench_workdir() {
  WORKDIR=$(mktemp -d "/tmp/$1.XXXXXX")
  shift
  BENCH_EXTRA_CLEANUP=("$@")
  PIDS=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}
bench_cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  done
  rm -rf "$WORKDIR" "${BENCH_EXTRA_CLEANUP[@]}"
}

# wait_for_line FILE PID PATTERN [SECONDS=20]: until PATTERN is in FILE; exits (showing FILE)
# when process PID ends first or the time runs out.
wait_for_line() {
  local i
  for (( i = 0; i < ${4:-20} * 10; i++ )); do
    grep -q "$3" "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || { log "process $2 exited:"; cat "$1" >&2; exit 1; }
    sleep 0.1
  done
  log "no \"$3\" from pid $2 within ${4:-20} s:"; cat "$1" >&2; exit 1
}

# bench_raise_fd_limit NEED: raises the soft descriptor limit to NEED, or exits saying why not.
bench_raise_fd_limit() {
  local hard
  hard=$(ulimit -Hn)
  if [[ "$hard" != unlimited ]] && (( hard < $1 )); then
    die "needs ulimit -n >= $1 but the hard limit is $hard (raise it, or ask for fewer connections)"
  fi
  ulimit -n "$1"
}

status_kb() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"; }  # PID FIELD
fd_count() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }      # PID

# busy_pct: machine-wide busy CPU over 0.5 s, in % of one core (from /proc/stat).
busy_pct() {
  local a b t=0 i
  read -ra a < /proc/stat; sleep 0.5; read -ra b < /proc/stat
  for i in 1 2 3 4 5 6 7 8; do t=$(( t + b[i] - a[i] )); done
  local idle=$(( b[4] - a[4] + b[5] - a[5] ))
  (( t > 0 )) || { echo 0; return; }
  echo $(( (t - idle) * 100 * $(nproc) / t ))
}

# bench_wait_quiet: waits (up to QUIET_WAIT s) until the machine is at most QUIET_PCT busy.
bench_wait_quiet() {
  local waited=0 b
  while :; do
    b=$(busy_pct)
    (( b <= QUIET_PCT )) && return 0
    if (( waited >= QUIET_WAIT )); then log "machine still busy (${b}%), running anyway"; return 0; fi
    sleep 1.5; waited=$(( waited + 2 ))
  done
}
