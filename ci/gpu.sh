#!/usr/bin/env bash
# ci/gpu.sh [--cpu] [OUTDIR]: the GPU figures. Run on the GPU machine, from the repository root,
# with .gpu-deps/ (made by ci/gpu-deps.sh on Debian 12) carried along. That machine has Python
# with torch (CUDA build), CMake, ninja, a C++ compiler and nvcc, but no Debian packages.
#
#   1. checks the carried dependencies and records the machine (nvidia-smi, torch, compilers)
#   2. configures against torch's LibTorch with only the vendored dependencies, and builds
#   3. checks that no system copy of a vendored library slipped into the build
#   4. a short `dlreset run --device cuda` (stops here if LibTorch cannot use the GPU)
#   5. the regression suite (ctest -L regression), which includes the CUDA fit test
#   6. the benchmark families BM_Fit (buggy, fixed, vanilla; 0, 1, 2, 4 fork workers) and
#      BM_ComputeOnly on the GPU -> OUTDIR/bench-gpu.json
#   7. the Markdown tables (plots/report.py, standard library only) -> OUTDIR/results-gpu.md,
#      and the workers plot (plots/plot_workers.py) when matplotlib is importable
#
# OUTDIR defaults to out/gpu. --cpu is a dry run of the same steps on a machine without a GPU
# (Debian's LibTorch stands in when Python has no torch): the model runs on the CPU, nothing
# is written under a GPU name, and OUTDIR defaults to out/gpu-dry-run-cpu.
#
# Environment: PYTHON (default python3), DLRESET_JOBS (build jobs; default all cores),
# DLRESET_GPU_BUILD_DIR (default build-gpu, or build-vendored with --cpu), DLRESET_DEPS_DIR
# (default .gpu-deps), DLRESET_TORCH_PREFIX (LibTorch's CMake prefix, instead of asking torch),
# DLRESET_CUDA_ARCHITECTURES (default 90, the H100/H200 generation), DLRESET_BENCH_REPETITIONS
# (default 1: one fit per point, which keeps the whole script within a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

mode=cuda
outdir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) mode=cpu ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "gpu.sh: unknown option '$1'; the options are --cpu and --help." >&2; exit 2 ;;
    *)
      if [ -n "$outdir" ]; then
        echo "gpu.sh: one OUTDIR only, got '$outdir' and '$1'." >&2
        exit 2
      fi
      outdir=$1 ;;
  esac
  shift
done

python=${PYTHON:-python3}
jobs=${DLRESET_JOBS:-$(nproc)}
cores=$(nproc)
deps=${DLRESET_DEPS_DIR:-$PWD/.gpu-deps}
if [ "$mode" = cuda ]; then
  outdir=${outdir:-out/gpu}
  build=${DLRESET_GPU_BUILD_DIR:-build-gpu}
  tag=gpu
else
  outdir=${outdir:-out/gpu-dry-run-cpu}
  build=${DLRESET_GPU_BUILD_DIR:-build-vendored}
  tag=cpu-dry-run
fi
bench_json="$outdir/bench-$tag.json"

started=$SECONDS
current_step="starting"
step() {
  current_step=$1
  echo
  echo "== gpu.sh [$((SECONDS - started)) s] $1"
}
on_exit() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    echo >&2
    echo "gpu.sh: FAILED in step '$current_step' (exit status $status) after $((SECONDS - started)) s." >&2
    echo "gpu.sh: what the finished steps wrote is in $outdir/." >&2
  fi
}
trap on_exit EXIT
die() { echo "gpu.sh: $*" >&2; exit 1; }

mkdir -p "$outdir"
env_file="$outdir/environment.txt"

# --- 1. dependencies and machine ----------------------------------------------------------------
step "checking the carried dependencies in $deps"
for piece in include googletest benchmark zlib fashion-mnist; do
  [ -f "$deps/$piece/.dlreset-stamp" ] ||
    die "$deps/$piece is missing or incomplete. Run ci/gpu-deps.sh on a Debian 12 machine and carry .gpu-deps/ with the working tree."
done
cat "$deps/MANIFEST"

step "recording the machine"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "mode: $mode"
  echo "machine: $(uname -srm), $cores cores"
  if commit=$(git rev-parse --short HEAD 2>/dev/null); then
    git diff --quiet HEAD 2>/dev/null || commit+=" with local changes"
  else
    commit="unknown (no git repository here)"
  fi
  echo "git: $commit"
  echo "cmake: $(cmake --version | head -n 1)"
  echo "ninja: $(ninja --version)"
  echo "c++: $(c++ --version | head -n 1)"
} >"$env_file"
if [ "$mode" = cuda ]; then
  command -v nvidia-smi >/dev/null || die "nvidia-smi is not on PATH; is this the GPU machine? (--cpu makes a dry run)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv >"$outdir/nvidia-smi.csv" ||
    die "nvidia-smi could not query the GPU; its message is above."
  cat "$outdir/nvidia-smi.csv"
  if command -v nvcc >/dev/null; then echo "nvcc: $(nvcc --version | tail -n 1)" >>"$env_file"; fi
else
  echo "Dry run on the CPU (ci/gpu.sh --cpu): nothing in this folder ran on a GPU." >"$outdir/DRY-RUN.txt"
  cat "$outdir/DRY-RUN.txt"
fi

step "finding LibTorch"
torch_prefix=""
if [ -n "${DLRESET_TORCH_PREFIX:-}" ]; then
  torch_prefix=$DLRESET_TORCH_PREFIX
elif torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
  "$python" -c 'import torch; print("torch:", torch.__version__, "CUDA", torch.version.cuda,
                "available" if torch.cuda.is_available() else "not available")' | tee -a "$env_file"
  if [ "$mode" = cuda ] && [ -z "$("$python" -c 'import torch; print(torch.version.cuda or "")')" ]; then
    die "$python's torch is a CPU build (torch.version.cuda is None); the GPU figures need torch with CUDA."
  fi
elif [ "$mode" = cpu ]; then
  echo "torch: none in $python; the system's LibTorch stands in" | tee -a "$env_file"
else
  die "$python cannot import torch. Set PYTHON to the interpreter that has torch with CUDA, or DLRESET_TORCH_PREFIX to its torch.utils.cmake_prefix_path."
fi
[ -n "$torch_prefix" ] && echo "LibTorch CMake prefix: $torch_prefix"

# --- 2. configure and build ---------------------------------------------------------------------
step "configuring $build"
# RelWithDebInfo, as ci/test.sh builds: the regression suite reads reset traces, which need the
# line tables. Warnings stay warnings here: a compiler or LibTorch version first met on this
# machine must not cost the run; their count is printed after the build.
cmake_args=(-S . -B "$build" -G Ninja
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DDLRESET_VENDORED_DEPS=ON
  -DDLRESET_DEPS_DIR="$deps"
  -DDLRESET_STACKTRACE=execinfo
  -DDLRESET_DATA_DIR="$deps/fashion-mnist"
  -DDLRESET_WARNINGS_AS_ERRORS=OFF)
[ -n "$torch_prefix" ] && cmake_args+=(-DCMAKE_PREFIX_PATH="$torch_prefix")
if [ "$mode" = cuda ]; then
  # Torch's CMake files enable CUDA and pick GPU architectures; dlreset compiles no CUDA code,
  # so naming the H200's generation only spares that detection.
  cmake_args+=(-DCMAKE_CUDA_ARCHITECTURES="${DLRESET_CUDA_ARCHITECTURES:-90}")
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
fi
cmake "${cmake_args[@]}" 2>&1 | tee "$outdir/configure.log"

step "building with $jobs jobs"
cmake --build "$build" -j "$jobs" 2>&1 | tee "$outdir/build.log"
warnings=$(grep -c 'warning:' "$outdir/build.log" || true)
echo "gpu.sh: the build printed $warnings compiler warning(s); see $outdir/build.log"

# --- 3. only the vendored copies ----------------------------------------------------------------
step "checking that the build used only the vendored dependencies"
# Ninja's dependency log lists every header each object read; the link commands name every
# library. A system copy of a vendored library in either means the build would not work on a
# machine without it.
vendored_headers='^[[:space:]]+/usr/(local/)?include/(gtest|gmock|benchmark|CLI|nlohmann|fmt|boost)/|^[[:space:]]+/usr/(local/)?include/z(lib|conf)\.h$'
# Each object's list of headers follows its own line: name the target (CMakeFiles/<target>.dir/)
# that read each leaked header, which says where to look.
leaked=$(ninja -C "$build" -t deps | awk -v pattern="$vendored_headers" '
  /^[^ \t]/ { object = $1; sub(/:$/, "", object); target = object
               if (match(object, /CMakeFiles\/[^\/]+\.dir\//)) target = substr(object, RSTART + 11, RLENGTH - 16)
               next }
  $0 ~ pattern { header = $1; print "target " target " read " header " (" object ")" }' | sort -u || true)
[ -z "$leaked" ] || die "the build read system headers of vendored libraries:
$(echo "$leaked" | head -n 10)
(an include path of the target's put a system directory before DLRESET_DEPS_DIR/include)"
libs='(gtest|gtest_main|gmock|gmock_main|benchmark|benchmark_main|fmt|z|boost_[a-z_]+)'
leaked=$(ninja -C "$build" -t commands |
  grep -oE "/usr/[^ ]*/lib$libs\.(so|a)[^ ]*|(^| )-l$libs( |$)" | sort -u || true)
[ -z "$leaked" ] || die "the build linked system copies of vendored libraries: $(echo "$leaked" | head -n 5 | tr '\n' ' ')"
echo "gpu.sh: no system header or library of GoogleTest, Benchmark, CLI11, nlohmann_json, fmt, zlib or Boost was used"

# --- 4. the model on the device -----------------------------------------------------------------
device=$([ "$mode" = cuda ] && echo cuda || echo cpu)
step "a short fit with --device $device"
"$build/bin/dlreset" run --device "$device" --variant fixed --workers 2 --start-method fork \
  --epochs 1 --limit-train-batches 5 --limit-val-batches 2 --no-progress --json "$outdir/smoke-$tag.json"
ran_on=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["device"])' "$outdir/smoke-$tag.json")
case "$ran_on" in
  "$device"*) echo "gpu.sh: the model ran on $ran_on" ;;
  *) die "dlreset run --device $device reported device '$ran_on'." ;;
esac

# --- 5. the regression suite --------------------------------------------------------------------
step "regression tests (ctest -L regression)"
ctest_jobs=$((cores > 8 ? 8 : cores))
ctest --test-dir "$build" -L regression --output-on-failure -j "$ctest_jobs" --timeout 300 2>&1 |
  tee "$outdir/ctest-regression.log"

# --- 6. the benchmarks --------------------------------------------------------------------------
step "benchmarks BM_Fit (fork workers) and BM_ComputeOnly on $device"
timeout 420 "$build/bin/dlreset_bench" --device="$device" \
  --benchmark_filter='BM_Fit/variant:(0|1|3)/workers:./start:1|BM_ComputeOnly' \
  --benchmark_repetitions="${DLRESET_BENCH_REPETITIONS:-1}" \
  --benchmark_out="$bench_json" --benchmark_out_format=json
ran_on=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["context"]["dlreset_device"])' "$bench_json")
case "$ran_on" in
  "$device"*) echo "gpu.sh: the benchmarks' model ran on $ran_on; JSON in $bench_json" ;;
  *) die "dlreset_bench --device=$device reported device '$ran_on' in $bench_json." ;;
esac

# --- 7. tables and plot -------------------------------------------------------------------------
step "tables (plots/report.py)"
{
  if [ "$mode" = cuda ]; then
    echo "Measured by ci/gpu.sh on $(tail -n +2 "$outdir/nvidia-smi.csv" | head -n 1), $cores CPU cores."
  else
    echo "Dry run of ci/gpu.sh on the CPU ($cores cores): no GPU was used."
  fi
  grep -E '^(date|git|torch):' "$env_file" | sed 's/^/  /'
  echo
  "$python" plots/report.py "$bench_json" --cores "$cores"
} >"$outdir/results-$tag.md"
cat "$outdir/results-$tag.md"

step "plot (plots/plot_workers.py)"
plot_python=""
for candidate in "$python" /usr/bin/python3; do
  if "$candidate" -c 'import matplotlib' >/dev/null 2>&1; then plot_python=$candidate; break; fi
done
if [ -n "$plot_python" ]; then
  MPLCONFIGDIR="$build/mplconfig" "$plot_python" plots/plot_workers.py "$bench_json" \
    --out "$outdir/workers-$tag" | tee "$outdir/workers-$tag.txt"
else
  echo "gpu.sh: matplotlib is not importable here, so no plot was drawn. On any machine with"
  echo "matplotlib (Debian: python3-matplotlib), from the repository root:"
  echo "  /usr/bin/python3 plots/plot_workers.py $bench_json --out $outdir/workers-$tag"
fi

step "done"
echo "gpu.sh: finished in $((SECONDS - started)) s; results in $outdir/:"
ls -l "$outdir"
