#!/bin/sh
# scripts/fuzz.sh [SECONDS] [BUILD_DIR] [TARGET...]
# Builds the libFuzzer targets of fuzz/ with clang (-DWR_FUZZ=ON: libFuzzer +
# ASan + UBSan) in BUILD_DIR (default build-fuzz) and runs each for SECONDS
# (default 10) on a copy of its committed seed corpus (fuzz/corpus/NAME).
# Exit 0 when no target found a crash, leak, hang or UB; 1 otherwise.
# Without clang it says so and exits 0 (CTest fuzz_short skip-passes).
# The long soak recorded in docs/SECURITY.md: scripts/fuzz.sh 600
set -eu
SECS=${1:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath -m "${2:-$ROOT/build-fuzz}")
shift 2 2>/dev/null || shift $# 2>/dev/null || true
CLANG=$(command -v clang || command -v clang-14 || true)
if [ -z "$CLANG" ]; then
    echo "fuzz: SKIPPED - clang not found (scripts/deps.sh installs it); nothing was fuzzed"
    exit 0
fi
CC=$CLANG cmake -S "$ROOT" -B "$BUILD" -DWR_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
TARGETS=${*:-$(cd "$ROOT/fuzz" && ls fuzz_*.c | sed 's/\.c$//')}
cmake --build "$BUILD" -j2 --target $TARGETS >/dev/null
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wr-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
rc=0
for t in $TARGETS; do
    mkdir -p "$WORK/$t"
    [ -d "$ROOT/fuzz/corpus/$t" ] && cp "$ROOT/fuzz/corpus/$t"/* "$WORK/$t"/ 2>/dev/null || true
    dict=""
    [ -f "$ROOT/fuzz/$t.dict" ] && dict="-dict=$ROOT/fuzz/$t.dict"
    printf '%-14s ' "$t"
    if (cd "$WORK" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$BUILD/$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
            -print_final_stats=1 $dict "$WORK/$t" >"$WORK/$t.log" 2>&1); then
        runs=$(grep -m1 'stat::number_of_executed_units' "$WORK/$t.log" | awk '{print $2}')
        cov=$(grep -E '^#[0-9]+.*(DONE|cov:)' "$WORK/$t.log" | tail -1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
        echo "ok: ${runs:-?} runs in ${SECS}s, coverage ${cov:-?} edges, corpus $(ls "$WORK/$t" | wc -l)"
    else
        echo "FAILED"
        tail -n 60 "$WORK/$t.log"
        mkdir -p "$ROOT/fuzz/crashes"
        cp "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-* "$ROOT/fuzz/crashes/" 2>/dev/null || true
        rc=1
    fi
done
exit $rc
