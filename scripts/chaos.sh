#!/usr/bin/env bash
# chaos.sh - crash-safety run of waitroomd (docs/RELIABILITY.md).
#
# Runs load against 3 waitroomd instances on one Redis (AOF on) while it
# SIGKILLs and restarts instances, SIGSTOPs/SIGCONTs Redis and SIGKILLs and
# restarts Redis; then checks the invariants (tests/chaos/chaos.py says
# which). Loopback only; everything it starts is stopped at the end; the
# whole run is bounded by `timeout` (duration + 120 s).
#
#   scripts/chaos.sh [--waitroomd PATH] [--duration SECONDS] [--seed N] [--keep]
#
# Defaults: build/waitroomd, 60 s, a random seed (printed; pass it back to
# replay the same sequence of faults). Needs python3 and redis-server.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$root/build/waitroomd"
duration=60
args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --waitroomd) bin=$2; shift 2 ;;
    --waitroomd=*) bin=${1#*=}; shift ;;
    --duration) duration=$2; shift 2 ;;
    --duration=*) duration=${1#*=}; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
    esac
done
command -v redis-server >/dev/null || { echo "chaos.sh: redis-server not found" >&2; exit 2; }
command -v python3 >/dev/null || { echo "chaos.sh: python3 not found" >&2; exit 2; }
[ -x "$bin" ] || { echo "chaos.sh: $bin is not executable (build first)" >&2; exit 2; }
limit=$(python3 -c "import sys; print(int(float(sys.argv[1])) + 120)" "$duration")
exec timeout --signal=TERM --kill-after=10 "$limit" \
    python3 "$root/tests/chaos/chaos.py" --waitroomd "$bin" --duration "$duration" "${args[@]+"${args[@]}"}"
