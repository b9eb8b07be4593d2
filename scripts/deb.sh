#!/usr/bin/env bash
# `make deb`: builds the Debian package (debian/, debhelper's dh) with
# dpkg-buildpackage -us -uc -b on a copy of the tree, so that nothing is
# written next to the checkout (dpkg-buildpackage puts its output in the
# source tree's parent), and runs lintian on it.
#
#   scripts/deb.sh [OUT]      OUT: where the .deb goes (default build)
#
# Leaves OUT/waitroom_VERSION_ARCH.deb and OUT/lintian.txt (lintian's
# output); the copy and its build directory stay in OUT/deb/, so a second
# run rebuilds only what changed. Exits non-zero when the build fails or
# lintian reports an error or a warning (tags explained in
# debian/waitroom.lintian-overrides do not count).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/deb"
src="$work/waitroom"

for tool in dpkg-buildpackage dh lintian; do
  command -v "$tool" >/dev/null || { echo "deb: $tool is missing: scripts/deps.sh installs it (debhelper, lintian, dpkg-dev)" >&2; exit 1; }
done

# The copy: the files git knows plus new ones it does not ignore (so build
# dirs, node_modules and run/ stay out); their times kept, so the kept
# build directory (debian/build) rebuilds only what changed.
mkdir -p "$work"
if [ -d "$src/debian/build" ]; then mv "$src/debian/build" "$work/build.keep"; fi
rm -rf "$src"
mkdir -p "$src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # shellcheck disable=SC2016  # the single-quoted script is sh -c's, expanded there
  (cd "$root" && git ls-files -z --cached --others --exclude-standard \
     | xargs -0 sh -c 'for f; do [ ! -e "$f" ] || printf "%s\0" "$f"; done' sh \
     | tar --null -T - -cf -) | tar -xf - -C "$src"
else # an unpacked source tarball: everything but build output
  (cd "$root" && tar --exclude='./build' --exclude='./build-*' --exclude='./run' \
     --exclude='./demo-out' --exclude='node_modules' -cf - .) | tar -xf - -C "$src"
fi
if [ -d "$work/build.keep" ]; then mv "$work/build.keep" "$src/debian/build"; fi
rm -f "$work"/waitroom_*

# -nc: keep debian/build (clean would start the compile from scratch);
# -J: parallel=N in DEB_BUILD_OPTIONS (dh builds with one job otherwise).
(cd "$src" && dpkg-buildpackage -us -uc -b -nc -J"$(nproc)" >"$work/build.log" 2>&1) || {
  tail -40 "$work/build.log" >&2
  echo "deb: dpkg-buildpackage failed; the whole log: $work/build.log" >&2
  exit 1
}
deb=$(ls "$work"/waitroom_*.deb)
rm -f "$out"/waitroom_*.deb
cp "$deb" "$out/"
deb="$out/$(basename "$deb")"
echo "deb: $deb"

# lintian on the .deb and the .changes (the latter adds the source checks
# that apply to a binary-only upload). --fail-on error,warning: exit 1 on
# either; info and pedantic tags are printed, not failed on.
changes=$(ls "$work"/waitroom_*.changes)
set +e
lintian --display-info --fail-on error,warning "$changes" >"$out/lintian.txt" 2>&1
rc=$?
set -e
if [ -s "$out/lintian.txt" ]; then cat "$out/lintian.txt"; else echo "lintian: no tags"; fi
exit $rc
