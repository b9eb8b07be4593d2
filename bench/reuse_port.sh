#!/usr/bin/env bash
# Polls/s of N waitroomd processes sharing one port (--reuse-port, the
# kernel spreading connections) on one redis-server, against one process
# in the same run. Fills queue "bench" (paused, so nobody leaves) with
# USERS users through the first process, then for n = 1 .. N processes
# runs wrk -t1 -cCONNS -dSECONDS of position polls of random users
# (GET entries/me, X-User-Id u1..uUSERS) at the shared port and prints the
# polls answered per second, each process's CPU time per poll (utime+stime
# from /proc/PID/stat over the polls all processes answered) and
# redis-server's. non2xx: 404s, polls of the few users fill_line did not
# get in (it stops within 100 of USERS).
#
# Usage, from the project root after a release build (build/waitroomd):
#   bench/reuse_port.sh [processes] [users] [seconds] [connections]
# WAITROOMD=PATH picks another binary. Needs wrk, redis-server, curl, python3.
set -euo pipefail
procs=${1:-2}; users=${2:-20000}; secs=${3:-8}; conns=${4:-64}
bin=${WAITROOMD:-build/waitroomd}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis
port=$(freeport)
# start_more: one more process on the shared port; appends to wpids
wpids=()
start_more() {
  local i=${#wpids[@]}
  "$bin" --listen "127.0.0.1:$port" --reuse-port --store "redis://127.0.0.1:$rp" \
    --admin-key cpukey --identity header:X-User-Id >"$work/wr$i.out" 2>"$work/wr$i.err" &
  wpids+=("$!"); pids+=("$!")
  for _ in $(seq 100); do grep -q "listening on" "$work/wr$i.out" && break; sleep 0.1; done
  grep -q "listening on" "$work/wr$i.out" || { echo "process $i did not start" >&2; cat "$work/wr$i.err" >&2; exit 1; }
}
start_more
wp=$port wpid=${wpids[0]}
curl -sf -X PUT -H 'Authorization: Bearer cpukey' -H 'Content-Type: application/json' \
  -d '{"enabled":true,"paused":true,"admitPerSecond":1,"maxQueueSize":0}' \
  "http://127.0.0.1:$port/v1/admin/queues/bench" >/dev/null
fill_line "$users" "$conns"

cat >"$work/poll.lua" <<LUA
request = function()
  return wrk.format("GET", "/v1/queues/bench/entries/me", {["X-User-Id"] = "u" .. math.random(1, $users)}) end
LUA
for n in $(seq 1 "$procs"); do
  while [ "${#wpids[@]}" -lt "$n" ]; do start_more; done
  sleep 1 # the new process reads the queue's config
  before=(); for p in "${wpids[@]}"; do before+=("$(cpu_ticks "$p")"); done
  r0=$(cpu_ticks "$rpid")
  out=$(wrk -t1 -c"$conns" -d"${secs}s" -s "$work/poll.lua" "http://127.0.0.1:$port/")
  r1=$(cpu_ticks "$rpid")
  after=(); for p in "${wpids[@]}"; do after+=("$(cpu_ticks "$p")"); done
  polls=$(echo "$out" | awk '/requests in/ {print $1}')
  errs=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  python3 - "$n" "$polls" "$secs" "$hz" "$r0" "$r1" "${errs:-0}" "${before[*]}" "${after[*]}" <<'PY'
import sys
n, polls, secs, hz, r0, r1, errs, b, a = sys.argv[1:]
polls, hz = int(polls), int(hz)
per = [round((int(y) - int(x)) * 1e6 / hz / polls, 2) for x, y in zip(b.split(), a.split())]
print(f"processes={n} polls={polls} polls_per_s={round(polls / float(secs))} non2xx={errs} "
      f"waitroomd_us_per_poll={'+'.join(map(str, per))}={round(sum(per), 2)} "
      f"redis_us_per_poll={round((int(r1) - int(r0)) * 1e6 / hz / polls, 2)}")
PY
done
