#!/usr/bin/env bash
# Makes every figure and table of docs/results.md from scratch on this machine, into OUTDIR
# (default out/figures): a Release build, the benchmark families, the dlreset run sweep, the
# plots (wait.png among them: where each fit's time went, as ci/demo.sh draws it), and report.md
# with the tables and targets. It took 14.5 minutes on a 2-core machine before the shared-memory
# rows and the parity sweep were added; those add to it, and the whole script has not been timed
# since. Plus the Release build the first time. Run it on an otherwise idle machine: ratios are
# measured side by side, but a busy machine still widens every range.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/figures}"

ci/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target dlreset dlreset_bench
bench=build-release/bin/dlreset_bench
python=/usr/bin/python3
mkdir -p "$out"
rm -rf "$out/events"

# Repetitions run in a random order, so no family owns the quiet (or the busy) minutes.
common=(--benchmark_repetitions=3 --benchmark_enable_random_interleaving=true
        --benchmark_out_format=json --benchmark_counters_tabular=true)

echo "== Loader, worker start-up and watched-store benchmarks"
"$bench" "${common[@]}" --benchmark_out="$out/bench-loader.json" \
  --benchmark_filter='BM_LoaderEpoch|BM_LoaderEpochPaired|BM_LoaderBatchSize|BM_LibTorchLoaderEpoch|BM_WorkerStartup|BM_WatchedStore'

echo "== Whole fits and the compute-only floor (5 epochs of 50 + 10 batches)"
"$bench" "${common[@]}" --benchmark_out="$out/bench-fit.json" \
  --benchmark_filter='BM_Fit|BM_ComputeOnly'

echo "== dlreset run sweep (5 epochs of 50 + 10 batches, fork and spawn, 3 repetitions)"
"$python" plots/sweep.py --dlreset build-release/bin/dlreset --variants buggy,fixed,vanilla \
  --workers 0,1,2,4 --start-methods fork,spawn --epochs 5 --limit-train-batches 50 \
  --limit-val-batches 10 --repeat 3 --events-dir "$out/events" --out "$out/sweep.json"

echo "== fixed / vanilla parity (5 epochs of 50 + 10 batches, fork, 8 paired repetitions)"
"$python" plots/sweep.py --dlreset build-release/bin/dlreset --variants fixed,vanilla \
  --workers 2,4 --start-methods fork --epochs 5 --limit-train-batches 50 \
  --limit-val-batches 10 --repeat 8 --out "$out/sweep-parity.json"

echo "== Across ranks: buggy and fixed at 1 and 2 ranks × 1 and 2 fork workers (3 repetitions)"
"$python" plots/sweep.py --dlreset build-release/bin/dlreset --variants buggy,fixed --ranks 1,2 \
  --workers 1,2 --start-methods fork --epochs 5 --limit-train-batches 50 \
  --limit-val-batches 10 --repeat 3 --out "$out/sweep-ranks.json"

echo "== Figures and tables"
"$python" plots/plot_workers.py "$out/sweep.json" --out "$out/workers_vs_time"
"$python" plots/plot_workers.py "$out/bench-fit.json" --out "$out/bench_workers_vs_time"
"$python" plots/plot_epochs.py "$out/sweep.json" --workers 2,4 --out "$out/epochs"
"$python" plots/plot_wait.py "$out/sweep.json" --out "$out/wait"
"$python" plots/plot_ranks.py "$out/sweep-ranks.json" --out "$out/ranks"
for start in fork spawn; do
  "$python" plots/plot_timeline.py "$out/events/events-buggy-$start-w2-r0.json" \
    "$out/events/events-fixed-$start-w2-r0.json" --out "$out/timeline-$start"
done
"$python" plots/report.py --cores "$(nproc)" "$out/bench-loader.json" "$out/bench-fit.json" \
  "$out/sweep.json" "$out/sweep-parity.json" "$out/sweep-ranks.json" > "$out/report.md"
echo "Wrote $out/report.md and the figures in $out/: workers_vs_time, bench_workers_vs_time, epochs, wait,"
echo "ranks, timeline-fork and timeline-spawn (each .png and .svg)."
