#!/usr/bin/env bash
# How coalescing behaves on the Redis store at a given concurrency: starts a
# redis-server and waitroomd (paused queue "bench"), runs SECONDS of joins of
# newcomers into the empty line, then SECONDS of polls of random people of
# it, both with wrk -t1 -cCONNS, and prints for each run the CPU time per
# request of waitroomd and of redis-server (utime+stime from
# /proc/PID/stat), the requests per script call (EVALSHA + EVAL calls from
# Redis's INFO commandstats), Redis's own time inside the scripts per poll
# (commandstats usec: wall time), the poll latency p50/p99 (wrk --latency)
# and Redis used_memory per waiting person after the joins.
#
# Usage, from the project root after a release build:
#   bench/redis_batch_probe.sh [seconds] [connections]     (default 8 64)
# WAITROOMD=PATH picks another binary; IDLE0=1 sets idleTimeoutSeconds 0 in
# the queue config (no idle sweep; only for builds that know the field).
set -euo pipefail
bin=${WAITROOMD:-build/waitroomd}; secs=${1:-8}; conns=${2:-64}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
start_redis
start_waitroomd "redis://127.0.0.1:$rp" \
  "{\"enabled\":true,\"paused\":true,\"admitPerSecond\":1,\"maxQueueSize\":0${IDLE0:+,\"idleTimeoutSeconds\":0}}"
stat() { redis-cli -p "$rp" info commandstats | awk -F'[=,:]' -v f="$1" '/^cmdstat_eval(sha)?:/ {n += $f} END {print n + 0}'; }
mem() { redis-cli -p "$rp" info memory | awk -F: '/^used_memory:/ {print $2 + 0}'; }
us() { python3 -c "print(round(($2 - $1) * 1e6 / $hz / $3, 2))"; }
m0=$(mem)
cat >"$work/join.lua" <<LUA
local n = 0
request = function() n = n + 1
  return wrk.format("POST", "/v1/queues/bench/entries", {["X-User-Id"] = "u" .. n}) end
LUA
e0=$(stat 3); w0=$(cpu_ticks "$wpid"); r0=$(cpu_ticks "$rpid")
out=$(wrk -t1 -c"$conns" -d"${secs}s" -s "$work/join.lua" "http://127.0.0.1:$wp/")
w1=$(cpu_ticks "$wpid"); r1=$(cpu_ticks "$rpid"); e1=$(stat 3)
n=$(echo "$out" | awk '/requests in/ {print $1}')
echo "joins=$n waitroomd_us_per_join=$(us "$w0" "$w1" "$n") redis_us_per_join=$(us "$r0" "$r1" "$n") joins_per_call=$(python3 -c "print(round($n / max(1, $e1 - $e0), 2))")"
have=$(redis-cli -p "$rp" zcard 'wr:{bench}:waiting')
m1=$(mem)
echo "memory: $(((m1 - m0) / have)) bytes per waiting person ($have people, used_memory $m0 -> $m1)"
cat >"$work/poll.lua" <<LUA
math.randomseed(42)
request = function()
  return wrk.format("GET", "/v1/queues/bench/entries/me", {["X-User-Id"] = "u" .. math.random(1, $have)}) end
LUA
u0=$(stat 5); e0=$(stat 3); w0=$(cpu_ticks "$wpid"); r0=$(cpu_ticks "$rpid")
out=$(wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$work/poll.lua" "http://127.0.0.1:$wp/")
w1=$(cpu_ticks "$wpid"); r1=$(cpu_ticks "$rpid"); e1=$(stat 3); u1=$(stat 5)
n=$(echo "$out" | awk '/requests in/ {print $1}')
echo "polls=$n waitroomd_us_per_poll=$(us "$w0" "$w1" "$n") redis_us_per_poll=$(us "$r0" "$r1" "$n") polls_per_call=$(python3 -c "print(round($n / max(1, $e1 - $e0), 2))") redis_script_us_per_poll=$(python3 -c "print(round(($u1 - $u0) / $n, 2))") p50=$(echo "$out" | awk '/^ +50%/ {print $2}') p99=$(echo "$out" | awk '/^ +99%/ {print $2}')"
