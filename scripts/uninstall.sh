#!/usr/bin/env bash
# `make uninstall`: removes what `make install` lays down, under the same
# DESTDIR and PREFIX, and nothing else.
#
#   scripts/uninstall.sh BUILD PREFIX [DESTDIR]
#
# The list of files is not taken from BUILD/install_manifest.txt: that file
# is rewritten by every install (a staged `make install DESTDIR=...`, the
# install tests) and names the paths of the LAST one, so removing what it
# lists can hit the real install or miss it. Instead the install rules
# themselves say what they lay down: `cmake --install BUILD --prefix PREFIX`
# into a scratch DESTDIR (the manifest is kept as it was), and each file
# found there is removed from DESTDIR+PREFIX. Then the package's own
# directories (share/doc/waitroom) go when empty; shared ones (bin, man8,
# the unit directory) stay.
set -euo pipefail
build=${1:?usage: scripts/uninstall.sh BUILD PREFIX [DESTDIR]}
prefix=${2:?usage: scripts/uninstall.sh BUILD PREFIX [DESTDIR]}
destdir=${3:-}
[ -f "$build/cmake_install.cmake" ] || { echo "uninstall: $build is not a configured build (run make first)" >&2; exit 1; }
case "$prefix" in /*) ;; *) echo "uninstall: PREFIX must be absolute: $prefix" >&2; exit 1 ;; esac

scratch=$(mktemp -d)
manifest="$build/install_manifest.txt"
saved=""
if [ -f "$manifest" ]; then saved="$scratch.manifest"; cp "$manifest" "$saved"; fi
cleanup() {
  rm -rf "$scratch"
  if [ -n "$saved" ]; then mv -f "$saved" "$manifest"; else rm -f "$manifest"; fi
}
trap cleanup EXIT
DESTDIR="$scratch" cmake --install "$build" --prefix "$prefix" >/dev/null

target="$destdir$prefix"
removed=0
while IFS= read -r -d '' f; do
  rel=${f#"$scratch$prefix"/}
  if [ -e "$target/$rel" ] || [ -L "$target/$rel" ]; then
    rm -f "$target/$rel"
    echo "Removed: $target/$rel"
    removed=$((removed + 1))
  fi
done < <(find "$scratch$prefix" \( -type f -o -type l \) -print0 | sort -z)
# the package's own directories, deepest first, when nothing else is in them
while IFS= read -r -d '' d; do
  rel=${d#"$scratch$prefix"/}
  case "$rel" in share/doc/waitroom | share/doc/waitroom/*)
    [ -d "$target/$rel" ] && rmdir --ignore-fail-on-non-empty "$target/$rel" ;;
  esac
done < <(find "$scratch$prefix" -mindepth 1 -type d -print0 | sort -rz)
echo "uninstall: $removed files removed under $target"
