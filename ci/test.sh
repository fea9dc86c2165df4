#!/usr/bin/env bash
# The README's test command: installs what is missing, configures, builds and runs every ctest
# suite; installs the build into a temporary prefix and builds and runs examples/own_loop against
# it (ci/check-install.sh); packs the .deb and checks it unpacked, with lintian
# (ci/package.sh, ci/check-package.sh); then fuzzes the IDX reader for a bounded time
# (ci/fuzz.sh). Exits non-zero on any failure.
#   DLRESET_PRESET=asan   runs only that preset's build and suite instead.
#   DLRESET_FULL_CHECKS=1 adds the ASan + UBSan suite (asan preset), the ThreadSanitizer suite
#                         (tsan preset) and memcheck over a short run (ci/valgrind.sh): what
#                         CI runs (.ci/run); docs/reliability.md has the timings.
set -euo pipefail
cd "$(dirname "$0")/.."

ci/install-deps.sh
preset="${DLRESET_PRESET:-default}"
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset"
if [ -n "${DLRESET_PRESET:-}" ]; then
  exit 0
fi
ci/check-install.sh
ci/package.sh out/package
ci/check-package.sh out/package/dlreset_*_amd64.deb
ci/fuzz.sh
if [ "${DLRESET_FULL_CHECKS:-0}" = 1 ]; then
  for sanitizer in asan tsan; do
    cmake --preset "$sanitizer"
    cmake --build --preset "$sanitizer"
    ctest --preset "$sanitizer"
  done
  ci/valgrind.sh
fi
