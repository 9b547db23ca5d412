#!/usr/bin/env bash
# Builds the libFuzzer targets under Fuzz/ (frames, envelope, payload, http2) with
# AddressSanitizer and runs each for SECONDS (default 20), starting from the
# committed corpus Fuzz/corpus/<target> and past findings Fuzz/regressions/<target>.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   fuzz; exit 1 if any target crashed, hung or broke a property
#   scripts/fuzz.sh --write-seeds           regenerate Fuzz/corpus/* from FuzzSeeds.swift
#   scripts/fuzz.sh --build-only            build every target and stop (scripts/test.sh does this early)
#
# Everything a run produces stays in $LARDER_FUZZ_OUT (default .build/fuzz-runs):
# <target>/log, <target>/corpus (inputs found), <target>/artifacts (crash-*, timeout-*, oom-*).
# Targets run LARDER_FUZZ_JOBS at a time (default: one per core).
# Reproduce a finding: .build/fuzz/release/larder-fuzz-<target> <artifact>.
# A fixed finding goes into Fuzz/regressions/<target>/, which the normal test suite replays.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TARGETS=(frames envelope payload http2)

if [[ ${1:-} == --write-seeds ]]; then
  for target in "${ALL_TARGETS[@]}"; do
    swift build --product "larder-fuzz-$target" >/dev/null
    rm -f "Fuzz/corpus/$target"/*
    "$(swift build --show-bin-path)/larder-fuzz-$target" --write-seeds "Fuzz/corpus/$target"
  done
  exit 0
fi

BUILD_ONLY=false
if [[ ${1:-} == --build-only ]]; then
  BUILD_ONLY=true
  shift
fi
DURATION=${1:-20}
shift || true
TARGETS=("$@")
(( ${#TARGETS[@]} > 0 )) || TARGETS=("${ALL_TARGETS[@]}")
SCRATCH=.build/fuzz
OUT=${LARDER_FUZZ_OUT:-.build/fuzz-runs}
# libFuzzer's driver is looked up with dlsym by Fuzz/Sources/LarderFuzzTargets/FuzzDriver.swift.
# ld.gold dies with an internal error on these release objects; lld links them.
BUILD=(swift build -c release --scratch-path "$SCRATCH" -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
       -Xlinker --export-dynamic-symbol=LLVMFuzzerRunDriver)

echo "== fuzz: building ${TARGETS[*]}" >&2
for target in "${TARGETS[@]}"; do
  mkdir -p "$OUT"
  if ! "${BUILD[@]}" --product "larder-fuzz-$target" >"$OUT/build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$OUT/build.log" >&2
    exit 1
  fi
done
$BUILD_ONLY && exit 0
BIN=$("${BUILD[@]}" --show-bin-path)

# Let libFuzzer see crashes directly (no Swift backtracer), and keep leak checks on.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}

# One libFuzzer process per target, as many at once as the machine has cores
# (LARDER_FUZZ_JOBS): each runs for DURATION seconds, so two at once on two cores
# halve the step's time (on a busy machine each then makes fewer executions).
JOBS=${LARDER_FUZZ_JOBS:-$(nproc)}
(( JOBS >= 1 )) || JOBS=1

fuzz_one() {
  local target=$1 dir="$OUT/$1"
  mkdir -p "$dir/corpus" "$dir/artifacts" "Fuzz/regressions/$target"
  # The first directory receives new inputs; the committed ones are only read.
  "$BIN/larder-fuzz-$target" "$dir/corpus" "Fuzz/corpus/$target" "Fuzz/regressions/$target" \
    -max_total_time="$DURATION" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -artifact_prefix="$dir/artifacts/" -print_final_stats=1 >"$dir/log" 2>&1
}

# A fuzzer still running when this script ends early (an error, Ctrl-C) is stopped with it.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
failed=()
for (( first = 0; first < ${#TARGETS[@]}; first += JOBS )); do
  batch=("${TARGETS[@]:first:JOBS}")
  pids=()
  for target in "${batch[@]}"; do
    echo "== fuzz: $target for ${DURATION}s (log: $OUT/$target/log)" >&2
    fuzz_one "$target" &
    pids+=($!)
  done
  for index in "${!batch[@]}"; do
    target=${batch[$index]}
    dir="$OUT/$target"
    if wait "${pids[$index]}"; then
      grep -E "^#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::peak_rss_mb" "$dir/log" | tail -3 \
        | sed "s/^/$target: /" >&2 || true
    else
      echo "fuzz: $target FAILED; artifacts in $dir/artifacts, log tail:" >&2
      tail -40 "$dir/log" >&2 || true
      failed+=("$target")
    fi
  done
done

if (( ${#failed[@]} > 0 )); then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: no findings" >&2
