#!/usr/bin/env bash
# Installs what Larder needs, builds it in release mode, starts larder-server
# on its defaults (SQLite file ./larder.sqlite, 127.0.0.1:7411), shows a first
# client call, and keeps the server in the foreground until Ctrl-C.
#
# Extra arguments go to larder-server, e.g. scripts/start.sh --durability normal
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
export LARDER_COMMIT=$(scripts/commit-id.sh)   # for larder --version (Package.swift)
echo "start: swift build -c release" >&2
swift build -c release >&2
BIN=$(swift build -c release --show-bin-path)

"$BIN/larder-server" "$@" &
SERVER=$!
trap 'kill -TERM $SERVER 2>/dev/null; wait $SERVER' INT TERM
for _ in $(seq 50); do
  "$BIN/larder" health >/dev/null 2>&1 && break
  kill -0 $SERVER 2>/dev/null || { echo "start: larder-server exited" >&2; exit 1; }
  sleep 0.1
done

echo
echo "\$ larder health"; "$BIN/larder" health
echo "\$ larder locations list"; "$BIN/larder" locations list
echo
echo "larder-server is running (pid $SERVER). Try: $BIN/larder --help   — Ctrl-C stops it."
wait $SERVER
