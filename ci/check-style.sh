#!/usr/bin/env bash
# Holds the code to .clang-format and .clang-tidy (Debian's clang-format and clang-tidy, 14).
# clang-format checks every tracked .h and .cpp and changes nothing. clang-tidy checks the
# translation units that build without LibTorch: harness/sys/, harness/trace/, harness/cli/, the
# DataLoader's core (harness/data/core/) and watch/. Those hold the fork, exec, descriptor and
# signal code, where a bug costs most, and take about 6 s a file, where a file that includes
# LibTorch takes 10 to 40 s. By default it checks those of them that the last commit changed, or that differ
# from it in the working tree: all of them take about 5 minutes of one core, more than CI can
# spare at every run. --all checks every one, as a change to .clang-tidy needs.
# Exits non-zero on any file clang-format would change and on any clang-tidy finding, with one
# line that names the fix.
#   ci/check-style.sh [--all] [BUILD_DIR]
#       BUILD_DIR holds the compile_commands.json of a build of this checkout (default: build,
#       which `cmake --preset default` writes)
#   DLRESET_STYLE_BASE=REV   check the units changed since REV instead of since HEAD~1
#   DLRESET_TIDY_JOBS=N      clang-tidy processes at once (default: the number of CPUs)
set -euo pipefail
cd "$(dirname "$0")/.."

all=0
if [ "${1:-}" = --all ]; then
  all=1
  shift
fi
build_dir="${1:-build}"
jobs="${DLRESET_TIDY_JOBS:-$(nproc)}"
for tool in clang-format clang-tidy; do
  if ! command -v "$tool" >/dev/null; then
    echo "check-style: $tool is missing; install Debian's $tool package (apt-get install $tool)." >&2
    exit 1
  fi
done
# Other major versions break some lines differently, and the check would fail on code that
# clang-format 14 accepts.
if ! clang-format --version | grep -q 'version 14\.'; then
  echo "check-style: warning: .clang-format is set for clang-format 14, this is: $(clang-format --version)" >&2
fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
status=0

# (a) Formatting: every tracked C++ file, as clang-format would write it.
mapfile -t sources < <(git ls-files -- '*.h' '*.cpp')
format_status=0
clang-format --dry-run --Werror "${sources[@]}" 2>"$logs/format.txt" || format_status=$?
unformatted=$(sed -n 's/^\([^: ]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
  "$logs/format.txt" | sort -u)
if [ -n "$unformatted" ]; then
  echo "check-style: $(echo "$unformatted" | wc -l) files are not formatted as .clang-format says:" >&2
  echo "$unformatted" | sed 's/^/  /' >&2
  echo "check-style: run clang-format -i on these files (clang-format 14)." >&2
  status=1
elif [ "$format_status" -ne 0 ]; then
  cat "$logs/format.txt" >&2
  echo "check-style: clang-format failed (status $format_status); see its message above." >&2
  status=1
else
  echo "check-style: clang-format: ${#sources[@]} files formatted"
fi

# (b) clang-tidy over the torch-free translation units of the build, found in its compilation
# database by path, so that a file added there is checked with no change here.
if [ ! -f "$build_dir/compile_commands.json" ]; then
  echo "check-style: $build_dir/compile_commands.json is missing; configure first (cmake --preset default)." >&2
  exit 1
fi
# The units to check: all of them, or those changed since the base. A clone without the base
# (a shallow one) checks all of them, rather than none.
base="${DLRESET_STYLE_BASE:-HEAD~1}"
changed=""
if [ "$all" = 0 ]; then
  if git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
    changed=$(git diff --name-only "$base" -- '*.cpp')
    scope="changed since $base"
  else
    echo "check-style: $base is not in this clone; checking every torch-free file." >&2
    all=1
  fi
fi
[ "$all" = 1 ] && scope="all"
mapfile -t units < <(/usr/bin/python3 - "$build_dir/compile_commands.json" "$PWD" "$all" "$changed" <<'EOF'
import json, os, re, sys
root = os.path.realpath(sys.argv[2])
wanted = None if sys.argv[3] == "1" else set(sys.argv[4].split())
torch_free = re.compile(r"^(harness/(sys|trace|cli|data/core)/.*|watch/.*)\.cpp$")
units = set()
for entry in json.load(open(sys.argv[1])):
    path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    relative = os.path.relpath(path, root)
    if torch_free.match(relative) and (wanted is None or relative in wanted):
        units.add(relative)
print("\n".join(sorted(units)))
EOF
)
if [ -z "${units[*]}" ] && [ "$all" = 1 ]; then
  echo "check-style: $build_dir/compile_commands.json names none of this checkout's torch-free files;" \
    "configure $build_dir from this checkout." >&2
  exit 1
elif [ -z "${units[*]}" ]; then
  echo "check-style: clang-tidy: no torch-free file changed since $base"
  exit "$status"
fi
began=$(date +%s)
# A process a file, each with its own log so that parallel runs do not interleave; a file whose
# clang-tidy fails (a finding, or code it cannot parse) leaves a .failed beside its log.
printf '%s\n' "${units[@]}" | xargs -P "$jobs" -I{} sh -c '
  log="$3/tidy-$(echo "$2" | tr / _)"
  clang-tidy -p "$1" --quiet --warnings-as-errors="*" "$2" >"$log.log" 2>&1 || touch "$log.failed"' \
  sh "$build_dir" {} "$logs"
elapsed=$(($(date +%s) - began))
if compgen -G "$logs/tidy-*.failed" >/dev/null; then
  cat "$logs"/tidy-*.log | grep -v -E '^[0-9]+ (warnings?|errors?)( and [0-9]+ errors?)? generated\.$' >&2 || true
  findings=$(cat "$logs"/tidy-*.log |
    sed -n -E "s#^($PWD/)?([^ ]+:[0-9]+):[0-9]+: (warning|error): .*\[([^]]+)\]\$#  \2 [\4]#p" |
    sed 's/,-warnings-as-errors\]$/]/' | sort -t: -k1,1 -k2,2n -u)
  echo "check-style: clang-tidy: $(compgen -G "$logs/tidy-*.failed" | wc -l) of ${#units[@]} files failed" \
    "(${elapsed} s); its findings:" >&2
  echo "${findings:-  (none parsed: see the output of clang-tidy above)}" >&2
  echo "check-style: fix what clang-tidy reports above, or where a finding is wrong, mark the line" \
    "// NOLINT(check-name) with the reason." >&2
  status=1
else
  echo "check-style: clang-tidy: ${#units[@]} files clean ($scope, ${elapsed} s)"
fi
exit "$status"
