#!/bin/sh
# scripts/valgrind.sh [WAITROOMD] [BUILD_DIR]
# Runs a subset of the integration suite (memory store) with every waitroomd
# under valgrind (--leak-check=full; definite/indirect leaks and invalid
# accesses are errors, exit code 1). valgrind cannot run a sanitized binary:
# when WAITROOMD is missing or built with ASan, a plain RelWithDebInfo build
# is made in BUILD_DIR (default build-valgrind). Exit 0 when the subset
# passes and every waitroomd exited 0. Without valgrind it says so, exit 0.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-}
BUILD=$(realpath -m "${2:-$ROOT/build-valgrind}")
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind: SKIPPED - valgrind not installed (apt-get install valgrind)"
    exit 0
fi
if [ -z "$BIN" ] || [ ! -x "$BIN" ] || nm "$BIN" 2>/dev/null | grep -q __asan_init; then
    echo "valgrind: building a non-sanitized waitroomd in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWR_SANITIZE= >/dev/null
    cmake --build "$BUILD" -j2 --target waitroomd >/dev/null
    BIN=$BUILD/waitroomd
fi
export WR_WAITROOMD_WRAPPER="valgrind --error-exitcode=1 --leak-check=full \
--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
--track-fds=no --num-callers=30 --quiet"
# Functional tests (no timing budgets): joins, tokens (K11), cookies,
# conventions (413/400), admin, abuse controls, secrets, hostile inputs.
exec python3 "$ROOT/tests/integration/run.py" --waitroomd "$BIN" --store memory \
    -k Join -k Consume -k Verify -k K11 -k Cookie -k Conventions -k Admin \
    -k JoinRate -k PollPacing -k Secrets -k Garbage -k requests_per_connection \
    -k huge_body -k huge_headers
