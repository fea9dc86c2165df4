#!/usr/bin/env bash
# Fills .gpu-deps/ (git-ignored) with what a GPU machine lacks for ci/gpu.sh, taken from Debian 12
# packages: GoogleTest's sources (googletest), Google Benchmark's and zlib's sources (their Debian
# source packages, through apt-get source), the headers of CLI11, nlohmann_json and fmt, and the
# Fashion-MNIST files. Run it here, on Debian, then carry .gpu-deps/ with the working tree.
#
# Every piece is pinned to the version installed here and stamped with it: a piece whose stamp
# matches is kept, anything else is rebuilt in .gpu-deps/.staging and moved into place only when
# complete, so running it again is cheap and an interrupted run leaves no half-made piece.
# DLRESET_DEPS_DIR puts the folder elsewhere (CMake's cache variable of the same name must then
# point there too).
set -euo pipefail
cd "$(dirname "$0")/.."

deps="${DLRESET_DEPS_DIR:-$PWD/.gpu-deps}"
# The working tree that travels to the GPU machine (tracked files plus carried folders) may not
# exceed 64 MiB; stop well before that.
size_budget_mib=48

step="checking the Debian packages"
work=""
cleanup() {
  local status=$?
  [ -n "$work" ] && rm -rf "$work"
  rm -rf "$deps/.staging"
  if [ "$status" -ne 0 ]; then
    echo "gpu-deps: FAILED while $step (exit status $status); .gpu-deps/ keeps only complete pieces." >&2
  fi
}
trap cleanup EXIT

say() { echo "gpu-deps: $*"; }
die() { echo "gpu-deps: $*" >&2; exit 1; }

# dpkg-dev provides dpkg-source, which unpacks a source package and applies Debian's patches.
ci/install-deps.sh dpkg-dev

source_version() {  # the source package and version a binary package was built from
  dpkg-query -W -f='${source:Package}=${source:Version}' "$1"
}

mkdir -p "$deps"
rm -rf "$deps/.staging"

# needs_update <piece> <stamp>: true when the piece is missing or was made from something else.
needs_update() {
  if [ "$(cat "$deps/$1/.dlreset-stamp" 2>/dev/null)" = "$2" ]; then
    say "$1: $2, up to date"
    return 1
  fi
}

# install_piece <piece> <stamp>: moves the finished .staging/<piece> into place.
install_piece() {
  printf '%s\n' "$2" >"$deps/.staging/$1/.dlreset-stamp"
  rm -rf "${deps:?}/$1"
  mv "$deps/.staging/$1" "$deps/$1"
  say "$1: $2 ($(du -sh "$deps/$1" | cut -f1))"
}

# copy_package_files <package> <path prefix> <destination>: the files <package> installed under
# <prefix>, with their paths below it kept.
copy_package_files() {
  local package=$1 prefix=$2 dest=$3 copied=0 file
  while IFS= read -r file; do
    [ -f "$file" ] && [ ! -L "$file" ] || continue
    mkdir -p "$dest/$(dirname "${file#"$prefix"/}")"
    cp -p "$file" "$dest/${file#"$prefix"/}"
    copied=$((copied + 1))
  done < <(dpkg -L "$package" | grep "^$prefix/")
  [ "$copied" -gt 0 ] || die "$package installed no files under $prefix; reinstall it (apt-get install --reinstall $package)."
}

# Source packages come through apt-get source with a private deb-src list, package lists and
# cache, so the machine's apt configuration is left as it is. apt checks every file's hash
# against the signed index.
apt_opts=()
fetch_source() {  # fetch_source <source>=<version> <destination folder>
  local spec=$1 dest=$2
  if [ -z "$work" ]; then
    work=$(mktemp -d /tmp/dlreset-gpu-deps.XXXXXX)
    mkdir -p "$work/sources.list.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/download"
    echo "deb-src http://deb.debian.org/debian bookworm main" >"$work/sources.list.d/dlreset-src.list"
    apt_opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$work/sources.list.d"
              -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache")
    # apt downloads as the unprivileged _apt user when run as root: let it write here.
    if [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1; then chown -R _apt "$work"; fi
    step="reading Debian's source index (apt-get update with a private deb-src list)"
    apt-get "${apt_opts[@]}" update >"$work/apt.log" 2>&1 ||
      { tail -n 20 "$work/apt.log" >&2; die "apt-get update of the deb-src list failed; its log is above."; }
  fi
  step="downloading the source package $spec"
  (cd "$work/download" && apt-get "${apt_opts[@]}" source --download-only "$spec") >>"$work/apt.log" 2>&1 ||
    { tail -n 20 "$work/apt.log" >&2; die "apt-get source $spec failed; its log is above."; }
  step="unpacking the source package $spec"
  local dsc
  dsc=$(ls "$work/download/${spec%%=*}"_*.dsc)
  dpkg-source -x "$dsc" "$dest" >>"$work/apt.log" 2>&1 ||
    { tail -n 20 "$work/apt.log" >&2; die "dpkg-source -x $dsc failed; its log is above."; }
}

mkdir -p "$deps/.staging"

# --- CLI11, nlohmann_json and fmt: header-only (fmt with FMT_HEADER_ONLY) ---------------------
step="copying the header-only libraries"
stamp="$(source_version libcli11-dev) $(source_version nlohmann-json3-dev) $(source_version libfmt-dev)"
if needs_update include "$stamp"; then
  out="$deps/.staging/include"
  for package in libcli11-dev nlohmann-json3-dev libfmt-dev; do
    copy_package_files "$package" /usr/include "$out"
    mkdir -p "$out/LICENSES"
    cp "/usr/share/doc/$package/copyright" "$out/LICENSES/$package.copyright"
  done
  [ -f "$out/fmt/format-inl.h" ] || die "libfmt-dev lacks fmt/format-inl.h, which header-only fmt needs."
  install_piece include "$stamp"
fi

# --- GoogleTest and GoogleMock: the sources Debian ships in /usr/src/googletest -----------------
step="copying GoogleTest's sources"
stamp=$(source_version googletest)
if needs_update googletest "$stamp"; then
  out="$deps/.staging/googletest"
  mkdir -p "$out"
  cp /usr/src/googletest/CMakeLists.txt "$out/"
  for part in googletest googlemock; do
    mkdir -p "$out/$part"
    cp -r "/usr/src/googletest/$part/CMakeLists.txt" "/usr/src/googletest/$part/cmake" \
          "/usr/src/googletest/$part/include" "/usr/src/googletest/$part/src" "$out/$part/"
  done
  cp /usr/share/doc/googletest/copyright "$out/copyright"
  install_piece googletest "$stamp"
fi

# take_source_piece <piece> <binary package> <name> <path...>: Debian's source package of
# <binary package> (with Debian's patches), trimmed to the paths named (globs allowed) and its
# copyright, as <piece>.
take_source_piece() {
  local piece=$1 package=$2 name=$3 stamp path
  shift 3
  stamp=$(source_version "$package")
  needs_update "$piece" "$stamp" || return 0
  local full="$deps/.staging/$piece-full" out="$deps/.staging/$piece"
  fetch_source "$stamp" "$full"
  step="trimming $name's sources"
  mkdir -p "$out"
  for path in "$@"; do
    # Unquoted on purpose: a glob such as *.c expands inside the unpacked source.
    # shellcheck disable=SC2086
    cp -r "$full"/$path "$out/"
  done
  cp "$full/debian/copyright" "$out/copyright"
  rm -rf "$full"
  install_piece "$piece" "$stamp"
}

# --- Google Benchmark: the library's sources only ----------------------------------------------
take_source_piece benchmark libbenchmark-dev "Google Benchmark" CMakeLists.txt LICENSE cmake include src

# --- zlib: the library's C files and headers ----------------------------------------------------
take_source_piece zlib zlib1g-dev zlib '*.c' '*.h' LICENSE README

# --- Fashion-MNIST: the four IDX files of dataset-fashion-mnist --------------------------------
step="copying the Fashion-MNIST files"
stamp=$(source_version dataset-fashion-mnist)
if needs_update fashion-mnist "$stamp"; then
  out="$deps/.staging/fashion-mnist"
  copy_package_files dataset-fashion-mnist /usr/share/datasets/fashion-mnist "$out"
  for name in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [ -f "$out/$name.gz" ] || die "dataset-fashion-mnist has no $name.gz; reinstall it."
  done
  install_piece fashion-mnist "$stamp"
fi

# --- What came from where, and the size of what travels -----------------------------------------
step="writing the manifest"
{
  echo "# Written by ci/gpu-deps.sh from Debian 12 packages; read by ci/gpu.sh. Piece: package=version."
  for piece in include googletest benchmark zlib fashion-mnist; do
    echo "$piece: $(cat "$deps/$piece/.dlreset-stamp")"
  done
} >"$deps/MANIFEST"

step="checking the size of what travels"
rm -rf "$deps/.staging"
deps_bytes=$(du -sb "$deps" | cut -f1)
tracked_bytes=$(git ls-files -z | xargs -0 cat | wc -c)
total_mib=$(( (deps_bytes + tracked_bytes + 1048575) / 1048576 ))
say "$(basename "$deps")/ holds $(( (deps_bytes + 1048575) / 1048576 )) MiB; with the tracked files, ${total_mib} MiB travel (budget ${size_budget_mib} MiB of the 64 MiB limit)"
if [ "$total_mib" -gt "$size_budget_mib" ]; then
  die "what travels to the GPU machine is ${total_mib} MiB, over the ${size_budget_mib} MiB budget; keep .gpu-deps/ lean (du -sh $deps/*)."
fi
say "ready: carry $(basename "$deps")/ with the working tree and run ci/gpu.sh on the GPU machine"
