#!/usr/bin/env bash
# Joins per second and waitroomd CPU per join with join challenges off and
# on, in the same run (docs/BENCHMARKS.md, "Join challenges"). One
# waitroomd (memory store by default, header identity), two paused queues:
# "off" (challengeBits 0) and "on" (challengeBits BITS). For "on", USERS
# challenges are fetched and solved beforehand (python3), and wrk sends
# each user's join with its solution in the body (cycling: a user's second
# join with the same solution is a join again, checked the same way); for
# "off", plain joins of new users. Each run lasts SECONDS; CPU is the
# server's own utime+stime from /proc/PID/stat divided by the joins
# answered.
#
# Usage, from the project root after a build (build/waitroomd):
#   bench/challenge_joins.sh [memory|redis] [users] [seconds] [connections] [bits]
# Needs wrk, curl, python3 (and redis-server for redis).
set -euo pipefail
kind=${1:-memory}; users=${2:-20000}; secs=${3:-8}; conns=${4:-32}; bits=${5:-8}
bin=${WAITROOMD:-build/waitroomd}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
check_backend "$kind"
store=memory; rpid=
if [ "$kind" = redis ]; then start_redis; store=redis://127.0.0.1:$rp; fi
start_waitroomd "$store" '{"paused":true,"admitPerSecond":1,"maxQueueSize":0}'
for q in off on; do
  b=0; [ "$q" = on ] && b=$bits
  curl -sf -X PUT -H 'Authorization: Bearer cpukey' -H 'Content-Type: application/json' \
    -d "{\"paused\":true,\"admitPerSecond\":1,\"maxQueueSize\":0,\"challengeBits\":$b}" \
    "http://127.0.0.1:$wp/v1/admin/queues/$q" >/dev/null
done

# the solutions: one Lua table entry per user
python3 - "$wp" "$users" "$bits" >"$work/bodies.lua" <<'PY'
import hashlib, http.client, json, sys
port, users, bits = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
conn = http.client.HTTPConnection("127.0.0.1", port)
def zeros(d):
    n = 0
    for b in d:
        if b: return n + 8 - b.bit_length()
        n += 8
    return n
print("bodies = {")
for i in range(1, users + 1):
    conn.request("GET", "/v1/queues/on/challenge", headers={"X-User-Id": "c%d" % i})
    ch = json.loads(conn.getresponse().read())["challenge"]
    n = 0
    while zeros(hashlib.sha256(("%s:%d" % (ch, n)).encode()).digest()) < bits:
        n += 1
    print('"{\\"challenge\\":\\"%s\\",\\"nonce\\":\\"%d\\"}",' % (ch, n))
print("}")
PY
cat >"$work/on.lua" <<LUA
dofile("$work/bodies.lua")
local n = 0
request = function() n = n % $users + 1
  return wrk.format("POST", "/v1/queues/on/entries",
    {["X-User-Id"] = "c" .. n, ["Content-Type"] = "application/json"}, bodies[n]) end
LUA
cat >"$work/off.lua" <<LUA
local n = 0
request = function() n = n + 1
  return wrk.format("POST", "/v1/queues/off/entries", {["X-User-Id"] = "o" .. n}) end
LUA
run() { # $1 = off|on: prints joins/s and us of waitroomd CPU per join
  local w0 w1 out joins non2xx
  w0=$(cpu_ticks "$wpid")
  out=$(wrk -t1 -c"$conns" -d"${secs}s" -s "$work/$1.lua" "http://127.0.0.1:$wp/")
  w1=$(cpu_ticks "$wpid")
  joins=$(echo "$out" | awk '/requests in/ {print $1}')
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  python3 -c "import sys; j=int(sys.argv[2]); print(f'challenges={sys.argv[1]} joins={j} joins_per_s={j/$secs:.0f} waitroomd_us_per_join={(int(sys.argv[4])-int(sys.argv[3]))*1e6/$hz/j:.2f} non2xx={sys.argv[5] or 0}')" \
    "$1" "$joins" "$w0" "$w1" "${non2xx:-0}"
}
echo "store=$kind users=$users seconds=$secs connections=$conns bits=$bits"
run off
run on
run off
