#!/usr/bin/env bash
# Installs what Larder needs on a Debian machine with Swift: the C libraries
# (protobuf-c, SQLite), the code generators, and the Python test environment.
# Idempotent; skips apt when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# tzdata: the IANA zones SummarizeMealRecords reads (time_zone).
# chromium: headless, for the test that renders `larder bench --format html` reports.
# libgrpc++-dev, protobuf-compiler-grpc, libprotobuf-dev, g++, make: Benchmarks/grpc-load and the
#   gRPC C++ reference server; libnghttp2-dev: Benchmarks/h2-echo; nghttp2-client: h2load and
#   nghttp for scripts/bench-grpc.sh (its --smoke runs in scripts/test.sh).
APT_PACKAGES=(libprotobuf-c-dev protobuf-c-compiler protobuf-compiler libsqlite3-dev sqlite3 postgresql libpq-dev clang tzdata chromium
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev libnghttp2-dev nghttp2-client g++ make)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if (( ${#missing[@]} > 0 )); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "install-deps: apt-get install ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python client: a venv with pinned dev requirements.
VENV=${LARDER_VENV:-.venv}
if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check -r clients/python/requirements-dev.txt
"$VENV/bin/pip" install -q --disable-pip-version-check -e clients/python
echo "install-deps: done" >&2
