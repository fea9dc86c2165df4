#!/usr/bin/env bash
# Builds dlreset_<version>_amd64.deb and dlreset-watch_<version>_amd64.deb with CPack's DEB generator from the default preset's build
# (build/; an up-to-date build is only installed again, not rebuilt) into OUTDIR (default
# out/package, where they replace any older ones), and prints the dlreset package's path on its
# last line (dlreset-watch's is beside it). Its Depends are computed by dpkg-shlibdeps from what the binary links;
# cmake/DlresetPackage.cmake has the rest.
#   ci/package.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."

outdir=${1:-out/package}
ci/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
mkdir -p "$outdir"
rm -f "$outdir"/dlreset_*.deb "$outdir"/dlreset-watch_*.deb
# CPack packs what `cmake --install` would install, under /usr.
cpack --config build/CPackConfig.cmake -B "$outdir" >"$outdir/cpack.log" 2>&1 || {
  cat "$outdir/cpack.log" >&2
  echo "package.sh: cpack failed; its log is above (also in $outdir/cpack.log)." >&2
  exit 1
}
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' build/CPackConfig.cmake)
deb="$outdir/dlreset_${version}_$(dpkg --print-architecture).deb"
for package in "$deb" "$outdir/dlreset-watch_${version}_$(dpkg --print-architecture).deb"; do
  [ -f "$package" ] || { echo "package.sh: cpack did not write $package; see $outdir/cpack.log." >&2; exit 1; }
done
echo "$deb"
