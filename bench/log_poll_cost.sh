#!/usr/bin/env bash
# The public log's cost per poll on Redis, or with STORE=memory on the
# embedded store (issue 38: "nothing per poll"): waitroomd's and (Redis)
# redis-server's own CPU time (utime+stime from /proc) per
# poll (GET entries/me of a random person of a paused line of USERS, as
# ../shared/bench/cpu_per_request.sh), with the queue's publicLog on or
# off. With the log, every poll answers a receipt (docs/API.md 1.3); the
# polls start once the signed checkpoint covers every join, so every join
# leaf is hashed (the receipt's common case: lib_log.lua log_receipt reads
# the stored leaf hash). Also the polls per script call (Redis INFO
# commandstats: EVALSHA + EVAL calls during the run: the batching).
#
# Usage, from the project root after a release build (build/waitroomd):
#   [STORE=memory] PUBLIC_LOG=0|1 bench/log_poll_cost.sh [users] [seconds] [connections]
# WAITROOMD=PATH picks another binary (e.g. main's, for a paired run).
# Prints one line of key=value. Needs wrk, redis-server, curl, python3.
set -euo pipefail
users=${1:-50000}; secs=${2:-8}; conns=${3:-64}
bin=${WAITROOMD:-build/waitroomd}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "${STORE:-redis}" = memory ]; then
  store=memory; rpid=$$ # (no Redis: its CPU reads as this shell's, about 0)
  calls() { echo 0; }
else
  start_redis; store=redis://127.0.0.1:$rp
  calls() { redis-cli -p "$rp" info commandstats | awk -F'[=,:]' '/^cmdstat_eval(sha)?:/ {n += $3} END {print n + 0}'; }
fi
log_field=; [ "${PUBLIC_LOG:-0}" = 1 ] && log_field=',"publicLog":true'
start_waitroomd "$store" \
  '{"enabled":true,"paused":true,"admitPerSecond":1,"maxQueueSize":0,"idleTimeoutSeconds":0'"$log_field}"
fill_line "$users" "$conns"
if [ "${PUBLIC_LOG:-0}" = 1 ]; then # every join leaf hashed (the checkpoint covers them)
  for _ in $(seq 300); do
    cp=$(curl -s "http://127.0.0.1:$wp/v1/queues/bench/log/checkpoint" | sed -n 2p | grep -E '^[0-9]+$' || echo 0)
    [ "$cp" -ge "$have" ] && break
    sleep 0.2
  done
fi
# one poll's answer: has it a receipt? (u1 is not always in: wrk's first
# request; its polls are the few non-2xx answers)
receipt=$(curl -s -H 'X-User-Id: u100' "http://127.0.0.1:$wp/v1/queues/bench/entries/me" |
  python3 -c 'import json,sys;print(1 if "receipt" in json.load(sys.stdin) else 0)')
cat >"$work/poll.lua" <<LUA
math.randomseed(42)
request = function()
  return wrk.format("GET", "/v1/queues/bench/entries/me", {["X-User-Id"] = "u" .. math.random(1, $have)}) end
LUA
w0=$(cpu_ticks "$wpid"); r0=$(cpu_ticks "$rpid"); k0=$(calls)
out=$(wrk -t1 -c"$conns" -d"${secs}s" -s "$work/poll.lua" "http://127.0.0.1:$wp/")
w1=$(cpu_ticks "$wpid"); r1=$(cpu_ticks "$rpid"); k1=$(calls)
polls=$(echo "$out" | awk '/requests in/ {print $1}')
non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
python3 - "${PUBLIC_LOG:-0}" "$have" "$polls" "${non2xx:-0}" "$receipt" "$w0" "$w1" "$r0" "$r1" \
  "$k0" "$k1" "$hz" <<'PY'
import sys
log, users, polls, non2xx, receipt, w0, w1, r0, r1, k0, k1, hz = map(int, sys.argv[1:])
us = lambda a, b: (b - a) * 1e6 / hz / polls
print("public_log=%d users=%d polls=%d non2xx=%d receipt=%d waitroomd_us_per_poll=%.2f "
      "redis_us_per_poll=%.2f polls_per_script_call=%.1f" % (
          log, users, polls, non2xx, receipt, us(w0, w1), us(r0, r1),
          polls / max(1, k1 - k0)))
PY
