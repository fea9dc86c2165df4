#!/usr/bin/env bash
# Installs with apt-get only the Debian 12 packages that are missing; quiet when all are there,
# loud and non-zero when apt-get fails. Safe to run again and again. Extra package names given as
# arguments are checked and installed the same way. dpkg-dev (dpkg-shlibdeps) and file are what
# CPack's DEB generator needs for ci/package.sh, lintian what ci/check-package.sh runs, pyflakes3
# what the lint label runs over the Python, elfutils the eu-stack that reads a hung program's native
# stacks (dlreset watch --hang-timeout).
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  clang libclang-rt-14-dev clang-format clang-tidy valgrind
  libtorch-dev libgloo-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-stacktrace-dev zlib1g-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  python3-matplotlib
  python3-torch
  dataset-fashion-mnist
  dpkg-dev file lintian
  pyflakes3
  elfutils
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run this script as root (or install them with sudo apt-get install)." >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update -qq >/tmp/dlreset-apt.log 2>&1 ||
   ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/dlreset-apt.log 2>&1; then
  echo "install-deps: apt-get failed; its log follows." >&2
  tail -n 40 /tmp/dlreset-apt.log >&2
  exit 1
fi
