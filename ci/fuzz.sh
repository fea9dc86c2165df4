#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, no LibTorch) and fuzzes each for a
# bounded time, starting from its seed corpus in tests/fuzz/corpus/. Exits non-zero on any
# crash, sanitizer report, leak, timeout or out-of-memory; the input that caused it is kept in
# build-fuzz/artifacts/. DLRESET_FUZZ_SECONDS sets the time per target (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${DLRESET_FUZZ_SECONDS:-60}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
ctest --preset fuzz

artifacts=build-fuzz/artifacts
mkdir -p "$artifacts"
for target in idx_reader; do
  # A scratch corpus: what the fuzzer learns stays out of the source tree.
  work="build-fuzz/corpus-$target"
  mkdir -p "$work"
  echo "fuzz: $target for ${seconds} s"
  build-fuzz/tests/fuzz/${target}_fuzzer -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
    "$work" "tests/fuzz/corpus/$target" 2>&1 | grep -E '^(#[0-9]+ +DONE|stat::|==[0-9]+==|SUMMARY|Done )' || true
  status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $target failed (status $status); the input is in $artifacts/" >&2
    exit "$status"
  fi
done
