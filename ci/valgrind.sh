#!/usr/bin/env bash
# memcheck over a short `dlreset run` (one fork worker per loader, 2 training batches, 1
# validation batch, sanity check of 1 batch): exits non-zero on any memcheck error or any
# definitely lost block. ci/valgrind.supp holds the one report from outside dlreset (Debian's
# libcpuinfo). Forked workers run under memcheck too; errors they make are printed as they
# happen, but their exit-time summary is cut short: memcheck makes a worker's exit slower than
# the parent's shutdown grace, and the parent then kills it, as it would any straggler.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --build --preset default --target dlreset
valgrind --tool=memcheck --suppressions=ci/valgrind.supp --error-exitcode=99 \
  --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
  build/bin/dlreset run --workers 1 --start-method fork --epochs 1 --limit-train-batches 2 \
  --limit-val-batches 1 --num-sanity-val-steps 1 --batch-size 16 --device cpu --no-progress
