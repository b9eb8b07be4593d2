#!/usr/bin/env bash
# CPU time per JOIN: the join-side companion of ../shared/bench/cpu_per_request.sh
# (which measures polls). Fills one paused queue with USERS users, then runs
# wrk -t1 -cCONNS -dSECONDS of joins of users never seen before (POST
# entries, X-User-Id u<USERS+1>, u<USERS+2>, ...) and divides each server's
# own CPU time (utime+stime from /proc/PID/stat) by the joins answered; for
# the Redis store also redis-server's, and the joins per script call (Redis
# INFO commandstats: EVALSHA + EVAL calls during the run).
#
# Usage, from the project root after a release build (build/waitroomd):
#   bench/cpu_per_join.sh [memory|redis] [users] [seconds] [connections]
# WAITROOMD=PATH picks another binary. PUBLIC_LOG=1: the queue keeps its
# public log (publicLog: a leaf, its tree append and a receipt per join;
# on Redis the leaf in the script and the tree by the signer's round). POLLS=1: then SECONDS of polls of random
# filled users too (GET entries/me, as ../shared/bench/cpu_per_request.sh),
# waitroomd_us_per_poll of the same server. Needs wrk, redis-server, curl,
# python3.
set -euo pipefail
kind=${1:-redis}; users=${2:-200000}; secs=${3:-8}; conns=${4:-64}
bin=${WAITROOMD:-build/waitroomd}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
check_backend "$kind"

store=memory; rpid=
if [ "$kind" = redis ]; then
  start_redis
  store=redis://127.0.0.1:$rp
fi
calls() { # script calls Redis has run so far (0 for the embedded store)
  [ -n "$rpid" ] || { echo 0; return; }
  redis-cli -p "$rp" info commandstats | awk -F'[=,:]' '/^cmdstat_eval(sha)?:/ {n += $3} END {print n + 0}'
}
log_field=; [ "${PUBLIC_LOG:-0}" = 1 ] && log_field=',"publicLog":true'
start_waitroomd "$store" '{"enabled":true,"paused":true,"admitPerSecond":1,"maxQueueSize":0'"$log_field}"
# fill the line with users u1..uUSERS
fill_line "$users" "$conns"

# the measured run: newcomers only (numbers above every filled user)
cat >"$work/join.lua" <<LUA
local n = $users + 1000
request = function() n = n + 1
  return wrk.format("POST", "/v1/queues/bench/entries", {["X-User-Id"] = "u" .. n}) end
LUA
w0=$(cpu_ticks "$wpid"); r0=0; [ -n "$rpid" ] && r0=$(cpu_ticks "$rpid"); k0=$(calls); n0=$(waiting)
out=$(wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$work/join.lua" "http://127.0.0.1:$wp/")
w1=$(cpu_ticks "$wpid"); r1=0; [ -n "$rpid" ] && r1=$(cpu_ticks "$rpid"); k1=$(calls); n1=$(waiting)
joins=$(echo "$out" | awk '/requests in/ {print $1}')
p99=$(echo "$out" | awk '/^ +99%/ {print $2}')
poll_us=-
if [ "${POLLS:-0}" = 1 ]; then # the same server's polls of the filled line
  cat >"$work/poll.lua" <<LUA
math.randomseed(42)
request = function()
  return wrk.format("GET", "/v1/queues/bench/entries/me", {["X-User-Id"] = "u" .. math.random(1, $have)}) end
LUA
  p0=$(cpu_ticks "$wpid")
  polls=$(wrk -t1 -c"$conns" -d"${secs}s" -s "$work/poll.lua" "http://127.0.0.1:$wp/" | awk '/requests in/ {print $1}')
  p1=$(cpu_ticks "$wpid")
  poll_us=$(python3 -c "print(round(($p1 - $p0) * 1e6 / $hz / $polls, 2))")
fi
echo -n "public_log=${PUBLIC_LOG:-0} waitroomd_us_per_poll=$poll_us "
python3 - "$kind" "$users" "$joins" "$((n1 - n0))" "$w0" "$w1" "$r0" "$r1" "$k0" "$k1" "$hz" "$p99" <<'PY'
import sys
kind, users, joins, added, w0, w1, r0, r1, k0, k1, hz, p99 = sys.argv[1:]
joins, added = int(joins), int(added)
us = lambda a, b: round((int(b) - int(a)) * 1e6 / int(hz) / joins, 2)
rcpu = us(r0, r1) if kind == "redis" else "-"
per_call = round(joins / max(1, int(k1) - int(k0)), 1) if kind == "redis" else "-"
print(f"store={kind} users={users} joins={joins} added={added} waitroomd_us_per_join={us(w0, w1)} "
      f"redis_us_per_join={rcpu} joins_per_script_call={per_call} p99={p99}")
PY
