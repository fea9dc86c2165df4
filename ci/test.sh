#!/usr/bin/env bash
# The README's test command: installs what is missing, configures, builds and runs every ctest
# suite, then fuzzes the IDX reader for a bounded time (ci/fuzz.sh). Exits non-zero on any
# failure. DLRESET_PRESET picks another preset (e.g. asan) and runs only its suite.
set -euo pipefail
cd "$(dirname "$0")/.."

ci/install-deps.sh
preset="${DLRESET_PRESET:-default}"
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset"
if [ -z "${DLRESET_PRESET:-}" ]; then
  ci/fuzz.sh
fi
