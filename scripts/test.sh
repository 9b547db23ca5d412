#!/usr/bin/env bash
# Runs every check and test: generated code in sync with proto/, a build with
# warnings as errors, the Swift suite (unit + end-to-end against the real
# server), and the Python client's tests against the real server.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${LARDER_VENV:-.venv}

scripts/install-deps.sh

echo "== generated code matches proto/" >&2
scripts/gen-proto.sh --check
PYTHON="$PWD/$VENV/bin/python" clients/python/scripts/generate.sh --check

echo "== swift build (warnings are errors)" >&2
swift build --build-tests -Xswiftc -warnings-as-errors

echo "== swift test" >&2
swift test --skip-build

echo "== python client tests" >&2
LARDER_SERVER_BIN="$(swift build --show-bin-path)/larder-server" "$VENV/bin/python" -m pytest -q clients/python/tests
