#!/usr/bin/env bash
# Runs every check and test: generated code in sync with proto/, a build with
# warnings as errors, the Swift suite (unit + end-to-end against the real
# server, on SQLite and on a throwaway PostgreSQL cluster), and the Python
# client's tests against the real server; then the suite under ThreadSanitizer
# and a bounded fuzz run of every libFuzzer target.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${LARDER_VENV:-.venv}

# A test process that dies (a crash, a timeout) leaves the larder-server and larder processes
# it started running: nothing ties a child's life to its parent's, and some are told to run for
# 30 minutes. They would take the CPU from every later step. Killed after each Swift run and
# on exit: whatever runs this checkout's debug binaries, which only tests run (scripts/start.sh
# runs the release build, left alone).
stop_leftover_children() {
  pkill -KILL -f "^$PWD/\.build/([^ ]*/)?debug/larder(-server)?( |\$)" 2>/dev/null || true
}
cleanups=(stop_leftover_children)
trap 'for cleanup in "${cleanups[@]}"; do $cleanup; done' EXIT

scripts/install-deps.sh

echo "== generated code matches proto/" >&2
scripts/gen-proto.sh --check
PYTHON="$PWD/$VENV/bin/python" clients/python/scripts/generate.sh --check
scripts/check-proto-languages.sh

echo "== swift build (warnings are errors)" >&2
# The commit the binaries report (--version, GetServerInfo, larder_build_info): only
# the one C file that holds it is recompiled when it changes (see Package.swift).
export LARDER_COMMIT=$(scripts/commit-id.sh)
swift build --build-tests -Xswiftc -warnings-as-errors
scripts/check-closure-symbols.sh

# The ThreadSanitizer build and the fuzz targets' build (about 5 minutes of compiling) need
# nothing the steps until their own do, so they compile in the background while the plain
# Swift suite, the Python tests and the interop tests run, whose servers and clients leave the
# CPU idle part of the time. The suites are made to pass on a busy machine. An early exit stops
# the whole tree of processes (SwiftPM puts its compilers in process groups of their own, so a
# process group's signal would miss them).
background_log=.build/background-builds.log
(swift build --build-tests --sanitize=thread --scratch-path .build/tsan && scripts/fuzz.sh --build-only) \
  </dev/null >"$background_log" 2>&1 &
background_builds=$!
# SIGSTOPs process $1, then its children, and so on (a stopped process starts no other), and
# prints each one's id.
stop_tree() {
  kill -STOP "$1" 2>/dev/null || return 0
  echo "$1"
  local child
  for child in $(pgrep -P "$1"); do stop_tree "$child"; done
}
stop_background_builds() {
  [[ -n $background_builds ]] || return 0
  local pids
  pids=$(stop_tree "$background_builds")
  background_builds=
  [[ -n $pids ]] || return 0
  # shellcheck disable=SC2086  # one id per word
  kill -TERM $pids 2>/dev/null || true
  # shellcheck disable=SC2086
  kill -CONT $pids 2>/dev/null || true
}
cleanups+=(stop_background_builds)
# Fails the run at once when the background builds have failed already (not 15 minutes later).
check_background_builds() {
  [[ -n $background_builds ]] || return 0
  kill -0 "$background_builds" 2>/dev/null && return 0
  wait_for_background_builds
}
wait_for_background_builds() {
  [[ -n $background_builds ]] || return 0
  local status=0 started=$SECONDS
  wait "$background_builds" || status=$?
  background_builds=
  echo "== background builds (TSan, fuzz targets) done; this step waited $((SECONDS - started)) s for them" >&2
  if [ "$status" -ne 0 ]; then
    echo "== the ThreadSanitizer or fuzz build failed ($status); its errors, then the end of $background_log:" >&2
    grep -E "error:" "$background_log" | head -n 20 >&2 || true
    grep -v "Cannot export local symbol" "$background_log" | tail -n 40 >&2
    exit 1
  fi
}

# The store and end-to-end tests also run on PostgreSQL: a throwaway cluster on
# 127.0.0.1:55432 unless LARDER_TEST_POSTGRES_URL already names a server.
if [[ -z "${LARDER_TEST_POSTGRES_URL:-}" ]]; then
  echo "== PostgreSQL test cluster" >&2
  # A directory and a free port of this run's own, so concurrent runs never share a cluster.
  export LARDER_PG_DIR=${TMPDIR:-/tmp}/larder-postgres-test-$$
  export LARDER_PG_PORT=${LARDER_PG_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
  stop_test_cluster() { scripts/postgres-test-cluster.sh stop; }
  cleanups+=(stop_test_cluster)
  LARDER_TEST_POSTGRES_URL=$(scripts/postgres-test-cluster.sh start)
fi
export LARDER_TEST_POSTGRES_URL

echo "== swift test (SQLite, and PostgreSQL at $LARDER_TEST_POSTGRES_URL)" >&2
# Bounds, not timings (the run takes 2–4 minutes on a loaded 2-core machine): a hung test ends
# the job here, not at CI's 90-minute limit.
timeout --kill-after=30 1800 swift test --skip-build || {
  status=$?
  [ "$status" -eq 124 ] && echo "== swift test did not finish within 30 minutes" >&2
  exit "$status"
}
stop_leftover_children
check_background_builds

echo "== python client: mypy --strict on the package and the README's examples" >&2
"$VENV/bin/python" -m mypy --strict --cache-dir .build/mypy clients/python/src/larder_client clients/python/examples
echo "== python client tests" >&2
LARDER_SERVER_BIN="$(swift build --show-bin-path)/larder-server" "$VENV/bin/python" -m pytest -q clients/python/tests

# The gRPC-over-HTTP/2 benchmark tools (Benchmarks/grpc-load, h2-echo, h2load runner, and
# `larder bench` over HTTP/2 and lean), built and run for a few seconds against the gRPC C++
# reference and larder-server (~1 min plus the C++ builds).
echo "== stock gRPC clients over HTTP/2 (grpcio, grpc-go, grpclib, grpcurl): clients/interop" >&2
LARDER_SERVER_BIN="$(swift build --show-bin-path)/larder-server" "$VENV/bin/python" -m pytest -q clients/interop
check_background_builds
echo "== benchmark tools: scripts/bench-grpc.sh --smoke" >&2
LARDER_BIN="$(swift build --show-bin-path)/larder-server" scripts/bench-grpc.sh --smoke

# The whole suite again under ThreadSanitizer (servers the e2e tests start are built
# with it too, and their reports fail the test). No suppressions (docs/FUZZING.md). The
# 150,000-call backpressure test is skipped here: it checks memory, not concurrency, and
# takes 90 s under TSan; so is the one that checks RSS falls
# after 1,500 stalled TLS handshakes leave (TSan's allocator keeps freed memory whatever
# malloc_trim says), and the one that counts page faults per big reply (TSan's allocator
# ignores mallopt); and the one that answers 20,000 inline HTTP/2 calls to fill the sockets
# before its store reply (it checks a reply is sent, not concurrency; under TSan the 20,000
# took over two minutes). SQLite only, to bound the time (so the
# check that CI provides a PostgreSQL URL is skipped too; the run above made it).
# Also skipped: the suites of the CLI's own output, exit codes and conventions, the
# build information, start script and package checks. Their calls are single and in
# turn, a path every other suite takes; they cost about 45 of the step's 220 s.
# A report of the test process itself goes to its stderr among thousands of lines; it is
# repeated at the end when the run fails, so that the tail of a CI log shows it.
echo "== swift test --sanitize=thread" >&2
wait_for_background_builds
tsan_log=.build/tsan-test.log
tsan_status=0
env -u LARDER_TEST_POSTGRES_URL timeout --kill-after=30 3600 \
  swift test --sanitize=thread --scratch-path .build/tsan --skip-build --skip aClientThatNeverReadsDoesNotGrowServerMemory \
  --skip memoryOfStalledHandshakesIsGivenBackWhenTheyLeave --skip bigRepliesReuseTheHeapInsteadOfFaultingPagesInAgain \
  --skip postgresServerIsReachable --skip replyBehindWaitingOutputIsSent \
  --skip 'LarderEndToEndTests\.(CLIEndToEndTests|CLIOperabilityEndToEndTests|CLIConventionsEndToEndTests|BuildInfoEndToEndTests|StartScriptEndToEndTests|PublicImportsTests|ServerDependenciesTests|TLSClientCertificateCLITests)/' \
  2>&1 | tee "$tsan_log" || tsan_status=$?
stop_leftover_children
if [ "$tsan_status" -ne 0 ]; then
  echo "== swift test --sanitize=thread failed ($tsan_status); its reports and failures again:" >&2
  awk '/WARNING: ThreadSanitizer/,/SUMMARY: ThreadSanitizer/' "$tsan_log" | head -c 20000 >&2
  grep -a "recorded an issue" "$tsan_log" | head -40 >&2 || true
  exit "$tsan_status"
fi

# Failover under load, one kill -9 round plus a 15 s freeze of the primary and a killed
# replica (~2 min): Patroni + etcd + HAProxy on 127.0.0.1 (docs/DEPLOY.md; the full run is
# `scripts/ha-failover.sh 3`). Fails if an acknowledged write is lost.
echo "== HA failover, one round (scripts/ha-failover.sh)" >&2
LARDER_SERVER_BIN="$(swift build --show-bin-path)/larder-server" LARDER_HA_FREEZE=15 scripts/ha-failover.sh 1

echo "== fuzz: each target 20 s (findings: .build/fuzz-runs/<target>/artifacts)" >&2
scripts/fuzz.sh 20
