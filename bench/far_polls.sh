#!/usr/bin/env bash
# Redis CPU of a long line's polls, for the capacity plan (docs/BENCHMARKS.md,
# "Capacity planning": polls from far back, issue 23). Starts redis-server
# and waitroomd (Redis store, paused queue "bench", idleTimeoutSeconds 120:
# a poll records the person's last-seen time when the last record is older
# than 30 s), fills the line with USERS people (wrk joins), polls each of
# them once in order (u1, u2, ...: those the fill left away come back, not
# measured), then measures redis-server's own CPU time (utime + stime from
# /proc/PID/stat) in:
#   idle       IDLE seconds without a request: the ticks and the away sweep
#              of the line (a fixed cost per second, whatever the polls);
#   recording  SECONDS of polls of u1, u2, ... in order, each person once,
#              their last poll more than 30 s and less than 120 s before
#              (nobody away): every poll records (the far end of a line at
#              the new defaults asks every 60 s);
#   quiet      SECONDS of polls of u1, u2, ... again, each within 30 s of
#              their recorded poll: none records (polls at the 1-5 s bands);
#   reference  redis-benchmark GET of one key, -c 50 -P 1, 200,000 requests:
#              Redis's CPU per plain command on this machine in the same run.
# For each poll run it prints the polls, Redis us per poll with the idle
# cost of the same seconds taken out, and the script calls per poll.
#
# Usage, from the project root after a release build:
#   bench/far_polls.sh [users] [seconds] [connections] [idle-seconds]
#   (default 30000 8 64 32; idle-seconds at least 31, so that every
#   person's last poll is 30 s old when the recording run starts; USERS
#   small enough that the one poll of each takes less than 120 - IDLE s,
#   or the first of them are away again when the recording run asks)
# WAITROOMD=PATH picks another binary. Needs wrk, redis-server,
# redis-benchmark, curl, python3.
set -euo pipefail
bin=${WAITROOMD:-build/waitroomd}
users=${1:-30000}; secs=${2:-8}; conns=${3:-64}; idle=${4:-32}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
start_redis
start_waitroomd "redis://127.0.0.1:$rp" \
  '{"enabled":true,"paused":true,"admitPerSecond":175,"maxQueueSize":0,"idleTimeoutSeconds":120}'
calls() { redis-cli -p "$rp" info commandstats | awk -F'[=,:]' '/^cmdstat_eval(sha)?:/ {n += $3} END {print n + 0}'; }
fill_line "$users" "$conns"
echo "line of $have people; $(redis-cli -p "$rp" info memory | awk -F: '/^used_memory_human:/ {print $2}' | tr -d '\r') used"

cat >"$work/seq.lua" <<LUA
local n = 0
request = function() n = n + 1
  return wrk.format("GET", "/v1/queues/bench/entries/me", {["X-User-Id"] = "u" .. n}) end
LUA
cat >"$work/touch.lua" <<LUA
local n = 0
request = function() n = n + 1
  if n > $users then n = $users end
  return wrk.format("GET", "/v1/queues/bench/entries/me", {["X-User-Id"] = "u" .. n}) end
LUA
t0=$(date +%s)
wrk -t1 -c"$conns" -d"$((users / 500 + 5))s" -s "$work/touch.lua" "http://127.0.0.1:$wp/" >/dev/null
echo "one poll of each person: $(($(date +%s) - t0)) s"

r0=$(cpu_ticks "$rpid"); sleep "$idle"; r1=$(cpu_ticks "$rpid")
idle_us_s=$(python3 -c "print(round(($r1-$r0)*1e6/$hz/$idle, 1))")
echo "idle: Redis ${idle_us_s} us of CPU per second (ticks and the away sweep of a paused line)"

run() { # label: SECONDS of polls of u1, u2, ...
  local c0 k0 c1 k1 out reqs
  c0=$(cpu_ticks "$rpid"); k0=$(calls)
  out=$(wrk -t1 -c"$conns" -d"${secs}s" -s "$work/seq.lua" "http://127.0.0.1:$wp/")
  c1=$(cpu_ticks "$rpid"); k1=$(calls)
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  python3 -c "
reqs, cpu_us = $reqs, ($c1 - $c0) * 1e6 / $hz
print('$1: %d polls (u1..u%d), Redis %.2f us per poll (%.2f with the idle cost of the %d s out), %.1f polls per script call'
      % (reqs, reqs, cpu_us / reqs, (cpu_us - $idle_us_s * $secs) / reqs, $secs, reqs / max(1, $k1 - $k0)))"
}
run recording
run quiet

r0=$(cpu_ticks "$rpid")
redis-benchmark -p "$rp" -q -n 200000 -c 50 -P 1 -t get >/dev/null
r1=$(cpu_ticks "$rpid")
echo "reference: redis-benchmark GET, Redis $(python3 -c "print(round(($r1-$r0)*1e6/$hz/200000, 2))") us per command"
