#!/usr/bin/env bash
# bench/cpu_split.sh - issue 39's yardstick taken apart: the CPU per request
# of waitroomd (position polls of random people in a paused line, as
# ../shared/bench/cpu_per_request.sh) and of nginx (its fixed ~100-byte
# JSON), each split into user and system time (/proc/PID/stat utime,
# stime), and nginx measured twice: with wrk plain (as the yardstick does)
# and with wrk running the same Lua request script as the polls (a random
# X-User-Id per request), so the load generator's own pace is the same on
# both sides. Rounds alternate, all in one run.
#
# Usage, from the project root after a release build (build/waitroomd):
#   bench/cpu_split.sh [memory|redis] [users] [seconds] [rounds]
# Prints one line per measurement: "who user_us sys_us total_us requests".
set -euo pipefail
kind=${1:-memory}; users=${2:-50000}; secs=${3:-5}; rounds=${4:-3}
bin=${WAITROOMD:-build/waitroomd}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
store=memory
if [ "$kind" = redis ]; then start_redis; store=redis://127.0.0.1:$rp; fi
start_waitroomd "$store" '{"enabled":true,"paused":true,"admitPerSecond":1,"maxQueueSize":0}'
fill_line "$users" 64
cat >"$work/poll.lua" <<LUA
math.randomseed(42)
request = function()
  return wrk.format("GET", "/v1/queues/bench/entries/me", {["X-User-Id"] = "u" .. math.random(1, $users)}) end
LUA
np=$(freeport); mkdir -p "$work/ngx/logs"
cat >"$work/ngx/nginx.conf" <<NGX
worker_processes 1; daemon off; pid $work/ngx/nginx.pid; error_log $work/ngx/logs/error.log warn;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  server { listen 127.0.0.1:$np backlog=4096;
    location / { default_type application/json;
      return 200 '{"status":"waiting","position":123456,"ahead":123455,"waiting":1000000,"etaSeconds":706,"retryAfterMs":5000}'; } } }
NGX
nginx -c "$work/ngx/nginx.conf" -p "$work/ngx" &
pids+=("$!"); sleep 0.5
nworker=$(pgrep -P "$(cat "$work/ngx/nginx.pid")" | head -1)
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }
measure() { # who pid url [wrk args...]
  local who=$1 pid=$2 url=$3 a b out reqs; shift 3
  a=$(ticks "$pid")
  out=$(wrk -t1 -c64 -d"${secs}s" "$@" "$url")
  b=$(ticks "$pid")
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  python3 -c "a='$a'.split(); b='$b'.split(); r=$reqs; k=1e6/$hz/r
u=(int(b[0])-int(a[0]))*k; s=(int(b[1])-int(a[1]))*k
print('$who', round(u, 2), round(s, 2), round(u + s, 2), r)"
}
echo "# who user_us sys_us total_us requests ($kind, $users people, ${secs}s, load $(cut -d' ' -f1 /proc/loadavg))"
for _ in $(seq "$rounds"); do
  measure waitroomd "$wpid" "http://127.0.0.1:$wp/" -s "$work/poll.lua"
  measure nginx_plain "$nworker" "http://127.0.0.1:$np/"
  measure nginx_script "$nworker" "http://127.0.0.1:$np/" -s "$work/poll.lua"
done
