#!/usr/bin/env bash
# The README's test command: installs what is missing, configures, builds, checks the style
# (ci/check-style.sh) and runs every ctest suite; installs the build into a temporary prefix and
# builds and runs examples/own_loop against it (ci/check-install.sh); packs the .debs and checks
# them unpacked, with lintian (ci/package.sh, ci/check-package.sh); and fuzzes the IDX reader for
# a bounded time (ci/fuzz.sh), beside the install and package checks. Exits non-zero on any
# failure. Each step's time is printed as it ends, and all of them at the end (docs/testing.md,
# "CI time", says where the time goes).
#   DLRESET_PRESET=asan   runs only that preset's build and suite instead.
#   DLRESET_FULL_CHECKS=1 adds the ASan + UBSan suite (asan preset), the ThreadSanitizer suite
#                         (tsan preset) and memcheck over a short run (ci/valgrind.sh): what
#                         CI runs (.ci/run). The default build's ctest then runs each suite
#                         as a few shards and leaves out the suites labelled asan, which the
#                         asan preset runs.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
times=()
# step NAME COMMAND...: runs the command and notes how long it took.
step() {
  local name=$1 begin
  shift
  begin=$(date +%s)
  echo "== ci: $name" >&2
  "$@"
  times+=("$(printf '%-26s %5d s' "$name" $(($(date +%s) - begin)))")
  echo "== ci: $name took $(($(date +%s) - begin)) s" >&2
}
# step_beside NAME COMMAND...: starts a step that uses one core beside the steps that follow,
# which leave the other mostly idle; its output goes to a file until join_step prints it.
declare -A beside_pid beside_begin
step_beside() {
  local name=$1
  shift
  echo "== ci: $name (beside the next steps; its output follows when it ends)" >&2
  beside_begin[$name]=$(date +%s)
  setsid "$@" >"$beside_logs/$name.log" 2>&1 &
  beside_pid[$name]=$!
}
# join_step NAME: waits for a step started by step_beside, prints its output and notes its time
# from its start; fails as the step did.
join_step() {
  local name=$1 status=0
  wait "${beside_pid[$name]}" || status=$?
  unset "beside_pid[$name]"
  echo "== ci: $name (its output)" >&2
  cat "$beside_logs/$name.log" >&2
  times+=("$(printf '%-26s %5d s (beside)' "$name" $(($(date +%s) - beside_begin[$name])))")
  echo "== ci: $name took $(($(date +%s) - beside_begin[$name])) s, beside other steps" >&2
  [ "$status" -eq 0 ] || { echo "== ci: $name failed (exit status $status)" >&2; return "$status"; }
}
summary() {
  local status=$? pid
  # A step that failed leaves no step beside it running (each runs in its own process group).
  for pid in "${beside_pid[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  [ -z "${beside_logs:-}" ] || rm -rf "$beside_logs"
  {
    echo "== ci: times (exit status $status)"
    printf '   %s\n' "${times[@]}"
    printf '   %-26s %5d s\n' "all" $(($(date +%s) - started))
  } >&2
}
trap summary EXIT

step "packages" ci/install-deps.sh
preset="${DLRESET_PRESET:-default}"
# CI runs each suite as a few GoogleTest shards, a process each, rather than a process a test
# (DLRESET_TEST_SHARDS, docs/testing.md); otherwise ctest keeps one test a test, so that its
# summary names a failed test.
shards=OFF
[ "${DLRESET_FULL_CHECKS:-0}" = 1 ] && shards=ON
step "configure ($preset)" cmake --preset "$preset" -DDLRESET_TEST_SHARDS=$shards
step "build ($preset)" cmake --build --preset "$preset"
if [ "$preset" = default ]; then
  # Formatting over the whole tree; clang-tidy over the files the last commit changed.
  step "style" ci/check-style.sh build
fi
if [ "${DLRESET_FULL_CHECKS:-0}" = 1 ] && [ "$preset" = default ]; then
  # The suites labelled asan run below under AddressSanitizer and UndefinedBehaviorSanitizer,
  # with the same assertions; CI runs each test once, in the strictest build that can run it.
  step "ctest ($preset, not asan)" ctest --preset "$preset" --label-exclude asan
else
  step "ctest ($preset)" ctest --preset "$preset"
fi
if [ -n "${DLRESET_PRESET:-}" ]; then
  exit 0
fi
beside_logs=$(mktemp -d /tmp/dlreset-ci.XXXXXX)
# The fuzzer keeps one core busy for a fixed time; the install and package checks mostly wait on
# one process at a time, so it runs beside them. memcheck (one process under valgrind) starts
# once nothing else writes to build/ and runs beside what follows.
step_beside "fuzz" ci/fuzz.sh
step "install check" ci/check-install.sh
step "package" ci/package.sh out/package
if [ "${DLRESET_FULL_CHECKS:-0}" = 1 ]; then
  step_beside "memcheck" ci/valgrind.sh
fi
step "package check" ci/check-package.sh out/package/dlreset_*_amd64.deb
join_step "fuzz"
if [ "${DLRESET_FULL_CHECKS:-0}" = 1 ]; then
  for sanitizer in asan tsan; do
    step "configure ($sanitizer)" cmake --preset "$sanitizer"
    step "build ($sanitizer)" cmake --build --preset "$sanitizer"
    step "ctest ($sanitizer)" ctest --preset "$sanitizer"
  done
  join_step "memcheck"
fi
