#!/usr/bin/env bash
# CI check: proto/ generates cleanly for the languages Larder's users write
# clients in, with each language's options as proto/ sets them (README in
# proto/). A check, not shipped code: everything goes to a temp dir.
#
#   scripts/check-proto-languages.sh          generate (and, where cheap, compile)
#   scripts/check-proto-languages.sh --keep   ... and print the temp dir, not deleted
#
# protoc (Debian protobuf-compiler 3.21) with --fatal_warnings, for every file of
# proto/ at once:
#   C++          --cpp_out, gRPC stubs with grpc_cpp_plugin (protobuf-compiler-grpc)
#   Java         --java_out, gRPC stubs with grpc_java_plugin (protobuf-compiler-grpc-java-plugin)
#   C#           --csharp_out (base_namespace: one directory per namespace)
#   Ruby         --ruby_out, gRPC stubs with grpc_ruby_plugin
#   PHP          --php_out, gRPC stubs with grpc_php_plugin
#   Objective-C  --objc_out
#   Go           protoc-gen-go + protoc-gen-go-grpc (Debian), then `go build` of every
#                package against Debian's google.golang.org/{protobuf,grpc} sources in
#                GOPATH mode (no module downloads)
# and Python with grpcio-tools' protoc from the venv (.venv or $LARDER_VENV):
# --python_out, --pyi_out, --grpc_python_out, then every module of Larder's own
# packages is imported with grpcio (grpc/* only byte-compiled: a generated
# top-level `grpc` package would shadow grpcio's).
# Needs what scripts/install-deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${LARDER_VENV:-.venv}
WKT_DIR=${WKT_DIR:-/usr/include}
mapfile -t PROTOS < <(cd proto && find . -name '*.proto' | sed 's|^\./||' | sort)

tmp=$(mktemp -d)
if [[ "${1:-}" == "--keep" ]]; then echo "check-proto-languages: output in $tmp" >&2; else trap 'rm -rf "$tmp"' EXIT; fi

fail() { echo "check-proto-languages: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || fail "$1 not found; run scripts/install-deps.sh"; }
need protoc
need grpc_cpp_plugin
need grpc_java_plugin
need grpc_ruby_plugin
need grpc_php_plugin
need protoc-gen-go
need protoc-gen-go-grpc
need go
[[ -x "$VENV/bin/python" ]] || fail "no venv at $VENV; run scripts/install-deps.sh"

run_protoc() { # $1 = language label; the rest: protoc's output flags
  local label=$1; shift
  protoc --fatal_warnings --proto_path=proto --proto_path="$WKT_DIR" "$@" "${PROTOS[@]}" \
    || fail "$label: protoc failed"
  echo "check-proto-languages: $label: $(find "$tmp/$label" -type f | wc -l) files" >&2
}

mkdir -p "$tmp"/{cpp,java,csharp,ruby,php,objc,go/src,python}

run_protoc cpp --cpp_out="$tmp/cpp" --grpc_out="$tmp/cpp" --plugin=protoc-gen-grpc="$(command -v grpc_cpp_plugin)"

run_protoc java --java_out="$tmp/java" --grpc-java_out="$tmp/java" --plugin=protoc-gen-grpc-java="$(command -v grpc_java_plugin)"

run_protoc csharp --csharp_out="$tmp/csharp" --csharp_opt=base_namespace=
run_protoc ruby --ruby_out="$tmp/ruby" --grpc_out="$tmp/ruby" --plugin=protoc-gen-grpc="$(command -v grpc_ruby_plugin)"
run_protoc php --php_out="$tmp/php" --grpc_out="$tmp/php" --plugin=protoc-gen-grpc="$(command -v grpc_php_plugin)"
run_protoc objc --objc_out="$tmp/objc"

# Go: output by import path (go_package) into a GOPATH of its own, then built against
# Debian's packaged sources. go_package of grpc/health and grpc/reflection is grpc-go's own
# import path (google.golang.org/grpc/...), which a GOPATH entry of ours would shadow whole,
# so those files are mapped (M) to a path of this check; Larder's files keep their go_package.
go_map=()
for f in "${PROTOS[@]}"; do
  if [[ $f == grpc/* ]]; then
    dir=$(dirname "$f")
    go_map+=("M$f=larder.check/$dir;${dir//\//_}")
  fi
done
go_opts=$(IFS=,; echo "${go_map[*]}")
run_protoc go --go_out="$tmp/go/src" --go_opt="$go_opts" --go-grpc_out="$tmp/go/src" --go-grpc_opt="$go_opts"
mapfile -t GO_PACKAGES < <(cd "$tmp/go/src" && find . -name '*.go' -printf '%h\n' | sed 's|^\./||' | sort -u)
(( ${#GO_PACKAGES[@]} > 0 )) || fail "go: no packages generated"
(cd "$tmp/go/src" && GO111MODULE=off GOPATH="$tmp/go:/usr/share/gocode" GOFLAGS= GOPROXY=off \
   go build "${GO_PACKAGES[@]}") || fail "go: the generated packages do not build"
echo "check-proto-languages: go: built ${#GO_PACKAGES[@]} packages" >&2

# Python: grpcio-tools' protoc (the one users pip-install), its own well-known types.
"$VENV/bin/python" -m grpc_tools.protoc --fatal_warnings --proto_path=proto \
  --python_out="$tmp/python" --pyi_out="$tmp/python" --grpc_python_out="$tmp/python" "${PROTOS[@]}" \
  || fail "python: grpc_tools.protoc failed"
"$VENV/bin/python" - "$tmp/python" <<'PY' || fail "python: the generated modules do not import"
import importlib, pathlib, py_compile, sys
root = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(root))
imported = 0
for path in sorted(root.rglob("*.py")):
    py_compile.compile(str(path), doraise=True)
    name = ".".join(path.relative_to(root).with_suffix("").parts)
    if name.split(".")[0] != "grpc":  # would shadow grpcio's `grpc` package
        importlib.import_module(name)
        imported += 1
print(f"check-proto-languages: python: imported {imported} modules", file=sys.stderr)
PY

echo "check-proto-languages: proto/ generates for C++, Java, C#, Ruby, PHP, Objective-C, Go and Python" >&2
