#!/usr/bin/env bash
# Checks the built .debs the way a workshop machine or a CI job would use them, without the
# source tree: unpacks dlreset and dlreset-watch (dpkg-deb -x) into one temporary root, runs the
# packaged `dlreset --version`, `dlreset demo`, `dlreset run --variant buggy --epochs 2
# --limit-train-batches 5` and a run with spawned workers (which re-execute the packaged binary)
# from a temporary directory, checks the counts they print; runs the packaged dlreset-watch on
# the packaged example of Lightning #10389 and its fix (its Python hook found beside the binary),
# checks that it links no LibTorch; and runs lintian on both, which must report no error. The
# workers find the data set where dataset-fashion-mnist puts it, as the installed package would.
#   ci/check-package.sh DEB [WATCH_DEB]   (WATCH_DEB: the dlreset-watch_*.deb beside DEB)
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 1 ] && [ -f "$1" ] || { echo "check-package.sh: give the .deb to check, e.g. out/package/dlreset_0.6.0_amd64.deb." >&2; exit 2; }
deb=$(realpath "$1")
watch_deb=${2:-$(ls "$(dirname "$deb")"/dlreset-watch_*.deb 2>/dev/null | head -n 1)}
[ -n "$watch_deb" ] && [ -f "$watch_deb" ] || { echo "check-package.sh: no dlreset-watch_*.deb beside $deb; give it as the second argument." >&2; exit 2; }
watch_deb=$(realpath "$watch_deb")
ci/install-deps.sh
work=$(mktemp -d /tmp/dlreset-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/root"
dpkg-deb -x "$watch_deb" "$work/root"
dlreset="$work/root/usr/bin/dlreset"
watcher="$work/root/usr/bin/dlreset-watch"
examples="$work/root/usr/share/dlreset/examples"
mkdir "$work/cwd"
cd "$work/cwd"

status=0
# expect <file> <what> <extended regex>: the line must be there, or the check fails.
expect() {
  if ! grep -Eq "$3" "$1"; then
    echo "check-package.sh: $2: no line matches '$3' in:" >&2
    cat "$1" >&2
    status=1
  fi
}

echo "== dlreset --version"
"$dlreset" --version | tee version.txt
expect version.txt "--version" "^dlreset [0-9]+\.[0-9]+\.[0-9]+ \(built with LibTorch [0-9.]+\)$"

echo "== dlreset demo (the packaged binary, its embedded sources, the system's data set)"
"$dlreset" demo --color never >demo.txt
# Step 3 with 2 workers: 7 passes (3 epochs, 3 validations, the sanity check) of 2 workers, then
# the loop's step and its waits at the passes' starts, in seconds.
expect demo.txt "demo step 3" "^ +2 +[0-9.]+ +14 +14 +[0-9.]+ +[0-9.]+$"
# Step 4: the traceback, with file and line from the binary and the code line embedded in it.
expect demo.txt "demo step 4" '^  File "repro/fetching.cpp", line [0-9]+, in repro::DataFetcher::reset'
expect demo.txt "demo step 4" "^    combined_loader->reset\(\);$"
# Step 6: spawns, resets and loads per variant.
expect demo.txt "demo step 6" "^  buggy +[0-9.]+ +6 +8 +5 \+ 2 +14$"
expect demo.txt "demo step 6" "^  fixed +[0-9.]+ +2 +2 +0 \+ 2 +4$"
# Its hints point at what the package installed, not at a build tree.
expect demo.txt "demo hints" "^  Watch the same bug in a plain torch program: dlreset watch -- python3 $work/root/usr/share/dlreset/examples/lightning_10389.py$"
tail -n 8 demo.txt

echo "== dlreset run --variant buggy --epochs 2 --limit-train-batches 5"
"$dlreset" run --variant buggy --epochs 2 --limit-train-batches 5 --no-progress | tee run.txt
# 2 fork workers: train re-spawned each epoch (2 x 2), val for the sanity check and each
# validation (3 x 2); one reset per later pass, one more at teardown.
expect run.txt "buggy run" "^train +4 +1 \+ 1 +4 +4$"
expect run.txt "buggy run" "^val +6 +2 \+ 1 +6 +6$"

echo "== dlreset run --variant fixed --start-method spawn (workers re-execute the packaged binary)"
"$dlreset" run --variant fixed --start-method spawn --epochs 2 --limit-train-batches 5 \
  --limit-val-batches 2 --no-progress | tee spawn.txt
expect spawn.txt "spawn run" "^train +2 +0 \+ 1 +2 +2$"
expect spawn.txt "spawn run" "^val +2 +0 \+ 1 +2 +2$"

echo "== dlreset-watch (no LibTorch; the Python hook found beside the binary)"
# The hook is its bootstrap and the private package beside it: the watcher needs both.
for file in sitecustomize.py _dlreset_hook/__init__.py _dlreset_hook/patches.py; do
  [ -f "$work/root/usr/share/dlreset/python/$file" ] ||
    { echo "check-package.sh: $watch_deb has no usr/share/dlreset/python/$file." >&2; status=1; }
done
"$watcher" --version | tee watch-version.txt
expect watch-version.txt "dlreset-watch --version" "^dlreset-watch [0-9]+\.[0-9]+\.[0-9]+$"
if ldd "$watcher" | grep -Eq 'libtorch|libc10'; then
  echo "check-package.sh: dlreset-watch links LibTorch:" >&2
  ldd "$watcher" >&2
  status=1
fi
watch_status=0
"$watcher" --no-live --expect-clean -- /usr/bin/python3 "$examples/lightning_10389.py" >/dev/null 2>watch-bug.txt ||
  watch_status=$?
tail -n 12 watch-bug.txt
[ "$watch_status" -eq 99 ] || { echo "check-package.sh: the watched bug exited $watch_status, not 99 (a failed gate)." >&2; status=1; }
expect watch-bug.txt "watched bug" "^  2 respawns, all from this stack:$"
expect watch-bug.txt "watched bug" "^      File \".*/lightning_10389.py\", line [0-9]+, in _shutdown_workers_and_reset_iterator$"
"$watcher" --no-live --expect-clean -- /usr/bin/python3 "$examples/lightning_10389.py" --fixed >/dev/null 2>watch-fixed.txt ||
  { echo "check-package.sh: the watched fix failed its gates:" >&2; cat watch-fixed.txt >&2; status=1; }
expect watch-fixed.txt "watched fix" "none was replaced: the workers are persistent\.$"

echo "== lintian"
# Errors fail the check; the tags kept on purpose are listed in docs/packaging.md.
for package in "$deb" "$watch_deb"; do
  lintian_status=0
  lintian --fail-on error "$package" 2>&1 | grep -v '^running with root privileges' || lintian_status=${PIPESTATUS[0]}
  if [ "$lintian_status" -ne 0 ]; then
    echo "check-package.sh: lintian reported an error in $package (exit status $lintian_status)." >&2
    status=1
  fi
done

[ "$status" -eq 0 ] && echo "check-package.sh: $deb and $watch_deb work unpacked, outside the source tree."
exit "$status"
