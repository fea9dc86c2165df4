#!/usr/bin/env bash
# The README's main command: installs what is missing, builds dlreset and runs the same
# Fashion-MNIST fit three ways, so the bug shows in numbers: Lightning 1.5.1 (fixed) with
# persistent workers, the same without persistent workers, and Lightning 1.5.0 (buggy) with
# persistent workers. Each run's JSON report goes to out/.
set -euo pipefail
cd "$(dirname "$0")/.."

ci/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target dlreset
dlreset=build/bin/dlreset
mkdir -p out

# Embedded defaults: 2 fork workers per loader, 3 epochs of 50 training and 10 validation
# batches of 64 images, sanity check on (Lightning's default of 2 batches).
common=(--workers 2 --start-method fork --epochs 3 --limit-train-batches 50
        --limit-val-batches 10 --no-progress)

run() {
  local name=$1; shift
  echo
  echo "== $name"
  "$dlreset" run "${common[@]}" "$@" --json "out/run-$name.json" | tail -n +3
}

run fixed-persistent --variant fixed
run fixed-not-persistent --variant fixed --no-persistent-workers
run buggy-persistent --variant buggy

echo
echo "Reports: out/run-*.json. The buggy run spawns every loader's workers again for every"
echo "pass even though persistent_workers is on; rerun it with --trace-resets to see who does it."
