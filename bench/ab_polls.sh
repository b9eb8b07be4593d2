#!/usr/bin/env bash
# bench/ab_polls.sh - two builds of waitroomd compared on one machine at one
# time: the CPU per position poll of each, measured in alternating short
# rounds, so that the host's drift (on these shared VMs the same binary's
# cost moves by 10-20% within minutes) falls on both alike. Both run side
# by side on the embedded store, each with its own paused line of USERS
# people; each round drives wrk -t1 -c64 with random polls for SECS seconds
# at A, then at B, and reads each server's own CPU (utime + stime).
# Prints every round, the medians and B/A per pair; B/A below 1 = B is
# cheaper. The yardstick against nginx is ../shared/bench/cpu_per_request.sh;
# this one answers "did the change help", which the yardstick's own
# drift (nginx's cost moves too) can hide.
#
# Usage, from the project root:
#   bench/ab_polls.sh BIN_A BIN_B [rounds] [users] [seconds]   (default 16 50000 3)
# Needs: wrk, curl, python3.
set -euo pipefail
bin_a=$1; bin_b=$2; rounds=${3:-16}; users=${4:-50000}; secs=${5:-3}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

start() { # BIN -> "pid port"
  local out="$work/wr.$RANDOM"
  "$1" --listen 127.0.0.1:0 --store memory --admin-key cpukey --identity header:X-User-Id \
    >"$out" 2>/dev/null &
  local pid=$!; pids+=("$pid")
  for _ in $(seq 100); do grep -q "listening on" "$out" && break; sleep 0.1; done
  echo "$pid $(grep -m1 "listening on" "$out" | sed 's/.*://')"
}
fill() { # PORT: the paused line of u1..uUSERS
  local port=$1 have=0
  curl -sf -X PUT -H 'Authorization: Bearer cpukey' -H 'Content-Type: application/json' \
    -d '{"enabled":true,"paused":true,"admitPerSecond":1,"maxQueueSize":0}' \
    "http://127.0.0.1:$port/v1/admin/queues/bench" >/dev/null
  while [ "$have" -lt $((users - 100)) ]; do
    cat >"$work/join.lua" <<LUA
local n = $have
request = function() n = n + 1
  if n > $users then n = $users end
  return wrk.format("POST", "/v1/queues/bench/entries", {["X-User-Id"] = "u" .. n}) end
LUA
    wrk -t1 -c64 -d2s -s "$work/join.lua" "http://127.0.0.1:$port/" >/dev/null
    have=$(curl -s -H 'Authorization: Bearer cpukey' "http://127.0.0.1:$port/v1/admin/queues/bench" |
      python3 -c 'import json,sys;print(json.load(sys.stdin)["stats"]["waiting"])')
  done
}
cat >"$work/poll.lua" <<LUA
math.randomseed(42)
request = function()
  return wrk.format("GET", "/v1/queues/bench/entries/me", {["X-User-Id"] = "u" .. math.random(1, $users)}) end
LUA
measure() { # PID PORT -> us of CPU per poll
  local c0 c1 out reqs
  c0=$(cpu_ticks "$1")
  out=$(wrk -t1 -c64 -d"${secs}s" -s "$work/poll.lua" "http://127.0.0.1:$2/")
  c1=$(cpu_ticks "$1")
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  python3 -c "print(round(($c1 - $c0) * 1e6 / $hz / $reqs, 3))"
}
read -r pa porta < <(start "$bin_a")
read -r pb portb < <(start "$bin_b")
pids+=("$pa" "$pb") # (started in the substitutions' subshells)
fill "$porta"
fill "$portb"
ra=(); rb=()
for _ in $(seq "$rounds"); do
  ra+=("$(measure "$pa" "$porta")")
  rb+=("$(measure "$pb" "$portb")")
done
echo "A us/poll: ${ra[*]}"
echo "B us/poll: ${rb[*]}"
python3 - "$(IFS=,; echo "${ra[*]}")" "$(IFS=,; echo "${rb[*]}")" <<'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split(",")]
b = [float(x) for x in sys.argv[2].split(",")]
pairs = [round(y / x, 3) for x, y in zip(a, b)]
print("median A %.3f  B %.3f  B/A %.3f  median of pair ratios %.3f" %
      (statistics.median(a), statistics.median(b), statistics.median(b) / statistics.median(a),
       statistics.median(pairs)))
print("pairs B/A:", pairs)
PY
