#!/usr/bin/env bash
# Fails when the compiler gave two closures of one function the same symbol.
#
# Swift 6.3 numbers a closure inside a macro expansion (#expect, #require) with the
# same discriminator as a closure outside it in the same function; the object file
# then holds both under one name, one of them suffixed ".N", and a call may run the
# other closure's body (seen here: a test's wait ran the previous #expect's condition
# and sat out its 60 s timeout). Such a test checks something other than what it
# says, so the suite refuses to run with one. The fix is in the test: take the closure
# out of the macro's argument (`let x = await f { ... }` then `#expect(x)`).
#
# Only test targets use the macros. Usage: scripts/check-closure-symbols.sh [BUILD_DIR]   (default: swift build's debug bin path)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-$(swift build --show-bin-path)}"
found=0
while IFS= read -r -d '' object; do
    # A Swift closure symbol ($s…fU…) with a ".N" suffix: two closures collided.
    while IFS= read -r symbol; do
        found=1
        echo "check-closure-symbols: $(basename "$object"): $(swift demangle --compact "$symbol" 2>/dev/null || echo "$symbol")" >&2
    done < <(nm "$object" 2>/dev/null | awk '{print $NF}' | grep -E '^\$s.*fU.*\.[0-9]+$' | sort -u || true)
done < <(find "$build_dir" -path '*Test*.build/*.o' -print0)
if [[ $found -ne 0 ]]; then
    echo "check-closure-symbols: closures above share a symbol with another closure of their function; move the closure out of the #expect/#require argument" >&2
    exit 1
fi
echo "check-closure-symbols: no colliding closure symbols in $(find "$build_dir" -path '*Test*.build/*.o' | wc -l) test objects" >&2
