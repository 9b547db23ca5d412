#!/usr/bin/env bash
# Installs what Larder needs on a Debian machine with Swift: the C libraries
# (protobuf-c, SQLite), the code generators, and the Python test environment.
# Idempotent; skips apt when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# tzdata: the IANA zones SummarizeMealRecords reads (time_zone).
# libnghttp2-dev: the HTTP/2 engine of gRPC over HTTP/2 (Sources/CNghttp2).
# libssl-dev: OpenSSL 3 for TLS (Sources/COpenSSL, LarderTLS); openssl: the CLI the TLS tests make
#   their certificates with (Tests/LarderTestSupport/TestCertificates.swift).
# chromium: headless, for the test that renders `larder bench --format html` reports.
# protobuf-compiler-grpc, protobuf-compiler-grpc-java-plugin, protoc-gen-go, protoc-gen-go-grpc,
# golang-go, golang-google-{protobuf,grpc}-dev: scripts/check-proto-languages.sh (proto/ generates
# and the Go output builds, offline, for the languages of stock gRPC clients).
# libgrpc++-dev, libprotobuf-dev, g++, make: Benchmarks/grpc-load and the gRPC C++ reference
#   server; nghttp2-client: h2load and nghttp for scripts/bench-grpc.sh (--smoke in scripts/test.sh).
APT_PACKAGES=(libprotobuf-c-dev libnghttp2-dev libssl-dev openssl protobuf-c-compiler protobuf-compiler libsqlite3-dev sqlite3 postgresql libpq-dev clang tzdata chromium
  protobuf-compiler-grpc protobuf-compiler-grpc-java-plugin protoc-gen-go protoc-gen-go-grpc
  golang-go golang-google-protobuf-dev golang-google-grpc-dev
  libgrpc++-dev libprotobuf-dev nghttp2-client g++ make)
source scripts/lib/apt-install-missing.sh
apt_install_missing install-deps "${APT_PACKAGES[@]}"

# Python client: a venv with pinned dev requirements.
VENV=${LARDER_VENV:-.venv}
if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check -r clients/python/requirements-dev.txt
"$VENV/bin/pip" install -q --disable-pip-version-check -e clients/python
echo "install-deps: done" >&2
