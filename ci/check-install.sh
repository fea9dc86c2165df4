#!/usr/bin/env bash
# Checks dlreset as a CMake package: installs the default preset's build (build/) into a
# temporary prefix, then configures, builds and runs examples/own_loop, copied out of the
# source tree, against that prefix alone (CMAKE_PREFIX_PATH=<prefix>), and checks that its
# build read nothing from the source tree, that the headers are installed by concept under
# include/dlreset with no internal one among them, and runs the installed dlreset.
set -euo pipefail
cd "$(dirname "$0")/.."

source_dir=$PWD
ci/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
work=$(mktemp -d /tmp/dlreset-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

echo "== cmake --install build --prefix $prefix"
cmake --install build --prefix "$prefix" >"$work/install.log"
for file in lib/cmake/dlreset/dlresetConfig.cmake lib/cmake/dlreset/dlresetConfigVersion.cmake \
            include/dlreset/data.h include/dlreset/testing.h include/dlreset/data/data_loader.h \
            include/dlreset/testing/loader_matchers.h include/dlreset/data/datasets/synthetic_dataset.h \
            bin/dlreset share/man/man1/dlreset.1.gz share/bash-completion/completions/dlreset \
            share/dlreset/plots/plot_workers.py \
            share/dlreset/python/sitecustomize.py share/dlreset/python/_dlreset_hook/__init__.py \
            share/dlreset/python/_dlreset_hook/patches.py \
            share/doc/dlreset/README.md; do
  [ -f "$prefix/$file" ] || { echo "check-install.sh: the install has no $file." >&2; exit 1; }
done
# Only the public headers are installed, by concept (cmake/DlresetInstall.cmake): the worker
# back-ends, the transport and the repository's own folders stay dlreset's own.
internal=$(find "$prefix/include/dlreset" -path '*/harness*' -o -name 'process_worker_pool.h' \
  -o -name 'protocol.h' -o -name 'multi_processing_dataloader_iter.h')
if [ -n "$internal" ]; then
  echo "check-install.sh: the install has headers that are not public:" >&2
  echo "$internal" >&2
  exit 1
fi
# Every installed header includes dlreset's headers by their installed paths.
if grep -rn '#include "harness/' "$prefix/include/dlreset"; then
  echo "check-install.sh: the installed headers above include repository paths; list the header in cmake/DlresetInstall.cmake." >&2
  exit 1
fi
(cd "$work" && "$prefix/bin/dlreset" --version)

echo "== examples/own_loop against $prefix alone"
cp -r examples/own_loop "$work/own_loop"
cmake -S "$work/own_loop" -B "$work/own_loop-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/configure.log" || { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/own_loop-build"
# Every header the build read and every library it linked came from the prefix or the system.
if ninja -C "$work/own_loop-build" -t deps | grep -F "$source_dir/" ||
   ninja -C "$work/own_loop-build" -t commands | grep -F "$source_dir/"; then
  echo "check-install.sh: the example's build used the source tree ($source_dir) above." >&2
  exit 1
fi
ctest --test-dir "$work/own_loop-build" --output-on-failure
echo "check-install.sh: examples/own_loop built and passed against the installed package alone."
