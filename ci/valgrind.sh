#!/usr/bin/env bash
# memcheck over a short `dlreset run` (one fork worker per loader, 2 training batches, 1
# validation batch, sanity check of 1 batch). Every process gets its own report, the forked
# workers' too: the script fails on any memcheck error, any definitely lost block in the main
# process, any process that valgrind ended with a signal, or any process whose report has no
# summary (a worker killed instead of exiting).
# ci/valgrind.supp holds the one report from outside dlreset (Debian's libcpuinfo).
# On a CPU whose CPUID hides RDTSCP, ci/valgrind-hwy-timer.cpp is preloaded: without it valgrind
# stops every process in libhwy's load-time timer probe, before main (the file says why).
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --build --preset default --target dlreset
logs=build/memcheck
rm -rf "$logs" && mkdir -p "$logs"
preload=()
if ! grep -qw rdtscp /proc/cpuinfo; then
  c++ -std=c++17 -O2 -fPIC -shared -o "$logs/hwy-timer.so" ci/valgrind-hwy-timer.cpp
  preload=(env "LD_PRELOAD=$PWD/$logs/hwy-timer.so")
  echo "memcheck: this CPU hides RDTSCP; libhwy's timer probe is replaced (ci/valgrind-hwy-timer.cpp)"
fi
status=0
"${preload[@]}" valgrind --tool=memcheck --suppressions=ci/valgrind.supp --error-exitcode=99 \
  --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
  --log-file="$logs/memcheck-%p.log" \
  build/bin/dlreset run --workers 1 --start-method fork --epochs 1 --limit-train-batches 2 \
  --limit-val-batches 1 --num-sanity-val-steps 1 --batch-size 16 --device cpu --no-progress ||
  status=$?

reports=0
for log in "$logs"/memcheck-*.log; do
  reports=$((reports + 1))
  summary=$(grep -h "ERROR SUMMARY" "$log" || true)
  role=$(grep -q "Parent PID: $$" "$log" && echo "main process" || echo "worker")
  echo "memcheck: $role $(basename "$log"): ${summary:-no summary}"
  if [ -z "$summary" ] || ! grep -q "ERROR SUMMARY: 0 errors" "$log" ||
    grep -q "Process terminating with default action" "$log"; then
    cat "$log" >&2
    status=1
  fi
done
if [ "$reports" -ne 3 ]; then
  echo "memcheck: expected 3 reports (the main process and one worker per loader), got $reports" >&2
  status=1
fi
exit "$status"
