#!/usr/bin/env bash
# Redis CPU per poll on a Redis Cluster against one Redis (the same fill,
# the same polls: ../shared/bench/cpu_per_request.sh's method), and the cost
# of a MOVED storm after a reshard.
#
#   bench/cluster_cpu.sh [redis|redis-cluster] [users] [seconds] [connections]
#
# Fills the paused queue "bench" with USERS people, then wrk -t1 -cCONNS
# -dSECONDS of GET entries/me of random people; prints the CPU time per poll
# of waitroomd and of the redis-server that holds the queue (on a cluster
# of 3 primaries: the owner of the slot of {bench}, and of all 3 nodes).
# redis-cluster then moves the queue's slot to another primary while the
# same polls run (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT
# NODE), and prints what the storm cost: MOVED and ASK replies sent (INFO
# errorstats), CLUSTER SLOTS questions asked (INFO commandstats), polls
# answered degraded, and waitroomd's CPU per poll during the move.
# WAITROOMD=PATH picks another binary. Needs wrk, redis-server, redis-cli.
set -euo pipefail
kind=${1:-redis-cluster}; users=${2:-200000}; secs=${3:-8}; conns=${4:-64}
bin=${WAITROOMD:-build/waitroomd}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
check_backend "$kind"

if [ "$kind" = redis ]; then
  start_redis
  store=redis://127.0.0.1:$rp; owner=$rp; nodes=("$rpid")
else
  start_cluster 3
  store=$cluster_url
  slot=$(redis-cli -p "${cports[0]}" cluster keyslot bench)
  owner=$(redis-cli -p "${cports[0]}" cluster slots | python3 -c "
import sys
v = [l.strip() for l in sys.stdin]
# CLUSTER SLOTS, flattened by redis-cli: start, end, host, port, id, ...
i = 0
while i < len(v):
    a, b, port = int(v[i]), int(v[i + 1]), v[i + 3]
    if a <= $slot <= b: print(port); break
    i += 5")
  nodes=("${cpids[@]}")
fi
rpid_of() { # port -> pid
  if [ "$kind" = redis ]; then echo "$rpid"; return; fi
  for i in "${!cports[@]}"; do if [ "${cports[$i]}" = "$1" ]; then echo "${cpids[$i]}"; fi; done
}
opid=$(rpid_of "$owner")
start_waitroomd "$store" '{"enabled":true,"paused":true,"admitPerSecond":1,"maxQueueSize":0}'

fill_line "$users" "$conns"
cat >"$work/poll.lua" <<LUA
math.randomseed(42)
local degraded = 0
request = function()
  return wrk.format("GET", "/v1/queues/bench/entries/me", {["X-User-Id"] = "u" .. math.random(1, $users)}) end
response = function(status, headers, body)
  if status ~= 200 or string.find(body, '"degraded":true', 1, true) then degraded = degraded + 1 end end
done = function(summary, latency, requests) io.write("degraded ", degraded, "\n") end
LUA
sum_ticks() { local t=0; for p in "${nodes[@]}"; do t=$((t + $(cpu_ticks "$p"))); done; echo "$t"; }
polls() { # runs the polls for $1 s; prints "polls waitroomd_us owner_us all_nodes_us degraded"
  local w0 o0 a0 out n
  w0=$(cpu_ticks "$wpid"); o0=$(cpu_ticks "$opid"); a0=$(sum_ticks)
  out=$(wrk -t1 -c"$conns" -d"$1s" -s "$work/poll.lua" "http://127.0.0.1:$wp/")
  n=$(echo "$out" | awk '/requests in/ {print $1}')
  python3 -c "print($n, round(($(cpu_ticks "$wpid")-$w0)*1e6/$hz/$n, 2), round(($(cpu_ticks "$opid")-$o0)*1e6/$hz/$n, 2), round(($(sum_ticks)-$a0)*1e6/$hz/$n, 2), $(echo "$out" | awk '/^degraded/ {print $2}'))"
}
read -r n wcpu ocpu acpu deg < <(polls "$secs")
echo "store=$kind users=$users polls=$n waitroomd_us_per_poll=$wcpu redis_us_per_poll=$ocpu (all nodes $acpu) degraded=$deg"
[ "$kind" = redis-cluster ] || exit 0

# The MOVED storm: the queue's slot moves to another primary under the polls.
dst=$(for p in "${cports[@]}"; do if [ "$p" != "$owner" ]; then echo "$p"; break; fi; done)
sid=$(redis-cli -p "$owner" cluster myid); did=$(redis-cli -p "$dst" cluster myid)
stat() { # MOVED ASK TRYAGAIN CLUSTER-SLOTS summed over the nodes
  for p in "${cports[@]}"; do redis-cli -p "$p" info all; done | python3 -c "
import re, sys
t = sys.stdin.read()
def s(pat): return sum(int(x) for x in re.findall(pat, t))
print(s(r'errorstat_MOVED:count=(\d+)'), s(r'errorstat_ASK:count=(\d+)'),
      s(r'errorstat_TRYAGAIN:count=(\d+)'), s(r'cmdstat_cluster\|slots:calls=(\d+)'))"
}
read -r m0 k0 t0 c0 < <(stat)
polls 6 >"$work/storm" &
storm=$!
sleep 1
t_start=$(date +%s.%N)
redis-cli -p "$dst" cluster setslot "$slot" importing "$sid" >/dev/null
redis-cli -p "$owner" cluster setslot "$slot" migrating "$did" >/dev/null
while :; do
  keys=$(redis-cli -p "$owner" cluster getkeysinslot "$slot" 100)
  [ -n "$keys" ] || break
  # shellcheck disable=SC2086
  redis-cli -p "$owner" migrate 127.0.0.1 "$dst" "" 0 20000 keys $keys >/dev/null
done
for p in "${cports[@]}"; do redis-cli -p "$p" cluster setslot "$slot" node "$did" >/dev/null; done
t_end=$(date +%s.%N)
wait "$storm"
read -r n wcpu ocpu acpu deg <"$work/storm"
read -r m1 k1 t1 c1 < <(stat)
echo "storm: slot $slot moved $owner -> $dst in $(python3 -c "print(round($t_end-$t_start,2))") s under polls:" \
  "MOVED=$((m1-m0)) ASK=$((k1-k0)) TRYAGAIN=$((t1-t0)) CLUSTER_SLOTS=$((c1-c0))" \
  "polls=$n degraded=$deg waitroomd_us_per_poll=$wcpu (6 s around the move)"
