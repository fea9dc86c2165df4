#!/usr/bin/env bash
# The README's main command: installs what is missing, builds dlreset and measures the bug with
# these embedded defaults: Lightning 1.5.0 (buggy), 1.5.1 (fixed) and a plain loop (vanilla),
# each with 0, 1, 2 and 4 fork workers per loader and persistent workers, 3 epochs of 50
# training and 10 validation batches of 64 Fashion-MNIST images. It writes
#   out/workers_vs_time.png/.svg  whole fit time against the number of workers, per variant
#   out/timeline.png/.svg         each worker's life in the buggy and the fixed run (2 workers)
#   out/epochs.png/.svg           seconds per epoch, per variant (2 workers)
#   out/wait.png/.svg             where each fit's time went: the loop's own work, the wait for
#                                 data at the passes' starts and in steady state
#   out/sweep.json, out/events/   the runs the figures were drawn from
# and prints the table behind the first figure. About 2 minutes on a 2-core machine, most of it
# the build; the twelve runs take under a minute.
set -euo pipefail
cd "$(dirname "$0")/.."

ci/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target dlreset

python=/usr/bin/python3  # Debian's interpreter, which has matplotlib
mkdir -p out
rm -rf out/events

echo
echo "== Running the sweep (12 fits; one line each)"
"$python" plots/sweep.py --dlreset build/bin/dlreset --variants buggy,fixed,vanilla \
  --workers 0,1,2,4 --start-methods fork --epochs 3 --limit-train-batches 50 \
  --limit-val-batches 10 --events-dir out/events --out out/sweep.json

echo
echo "== Drawing the figures"
"$python" plots/plot_workers.py out/sweep.json --out out/workers_vs_time >/dev/null
"$python" plots/plot_timeline.py out/events/events-buggy-fork-w2-r0.json \
  out/events/events-fixed-fork-w2-r0.json --out out/timeline
"$python" plots/plot_epochs.py out/sweep.json --workers 2 --out out/epochs >/dev/null

echo
echo "== The anomaly: where the time went (out/wait.png; seconds of each fit)"
"$python" plots/plot_wait.py out/sweep.json --out out/wait

echo
"$python" plots/report.py out/sweep.json
echo "Figures: out/workers_vs_time.png, out/timeline.png, out/epochs.png, out/wait.png (and .svg)."
echo "See who resets the iterators: build/bin/dlreset run --variant buggy --trace-resets"
echo "Walk through the bug: build/bin/dlreset demo --interactive"
