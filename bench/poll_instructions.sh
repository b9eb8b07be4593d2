#!/usr/bin/env bash
# bench/poll_instructions.sh - instructions per poll, counted exactly: the
# noise-free yardstick for a change to the poll's path (on a shared VM the
# CPU-time figures swing by 10% between runs; these do not move).
# waitroomd runs under valgrind's callgrind on the embedded store; a Python
# client puts queue "bench" (paused), makes 1,000 joins, then POLLS polls of
# random members over one keep-alive connection; the same is run with 0
# polls, and the difference divided by POLLS is what one poll costs in user
# space (waitroomd and every library it calls; not the kernel), to about
# 1% from run to run on a loaded machine. The line is
# short, so a quarter of the polls are at its front (passed_ahead's scan).
#
# Usage, from the project root after a build:
#   bench/poll_instructions.sh [polls] [binary]     (default 10000 build/waitroomd)
# JOINS=N makes the line N people long (default 1000) and POLL_FROM=K
# polls only people K..N (default 1): JOINS=4000 POLL_FROM=2001 keeps every
# poll far from the front, as the yardstick's random polls of 200,000 are.
# PUBLIC_LOG=1 gives the queue its public log; STORE=redis runs it on a
# redis-server of its own (valgrind is slow: the store timeout is 60 s and
# the breaker off, so a loaded machine does not time a poll out). Needs
# valgrind, python3 (and redis-server).
set -euo pipefail
polls=${1:-10000}; bin=$(realpath "${2:-build/waitroomd}")
lf=; [ "${PUBLIC_LOG:-0}" = 1 ] && lf=',"publicLog":true'
# Counted only inside the callbacks a request runs in (the connection's read
# and write events, the embedded store's deferred answers): the timers
# (admission ticks, the loop-lag tick, the reporter) run per second of wall
# time, which valgrind stretches by load, not per poll. TOGGLE= counts all.
toggle="--toggle-collect=on_read --toggle-collect=on_write --toggle-collect=wr_store_memory__on_defer"
# STORE=redis: waitroomd on a redis-server of its own (the batch's flush and
# the Redis connection's read callback counted too; Redis's own work is not)
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
store=memory
if [ "${STORE:-memory}" = redis ]; then
  start_redis
  store=redis://127.0.0.1:$rp
  toggle="$toggle --toggle-collect=wr_store_redis__on_flush --toggle-collect=read_cb"
fi
run() {
  local d port vp n=$1
  d=$(mktemp -d "$work/run.XXXXXX")
  port=$(freeport)
  valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" ${TOGGLE-$toggle} "$bin" --listen "127.0.0.1:$port" \
    --store "$store" --store-timeout-ms 60000 --breaker off --admin-key cpukey --identity header:X-User-Id \
    >"$d/out" 2>"$d/err" &
  vp=$!
  for _ in $(seq 600); do grep -q "listening on" "$d/out" 2>/dev/null && break; sleep 0.1; done
  [ "$store" = memory ] || redis-cli -p "$rp" flushall >/dev/null
  python3 - "$port" "$n" "$lf" "${JOINS:-1000}" "${POLL_FROM:-1}" <<'PY'
import http.client, random, sys
port, polls, lf = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
joins, first = int(sys.argv[4]), int(sys.argv[5])
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("PUT", "/v1/admin/queues/bench",
          '{"enabled":true,"paused":true,"admitPerSecond":1,"maxQueueSize":0,"idleTimeoutSeconds":0%s}' % lf,
          {"Authorization": "Bearer cpukey", "Content-Type": "application/json"})
assert c.getresponse().read() is not None
for i in range(1, joins + 1):
    c.request("POST", "/v1/queues/bench/entries", headers={"X-User-Id": "u%d" % i})
    c.getresponse().read()
random.seed(42)
for _ in range(polls):
    c.request("GET", "/v1/queues/bench/entries/me", headers={"X-User-Id": "u%d" % random.randint(first, joins)})
    r = c.getresponse()
    r.read()
    assert r.status == 200, r.status
PY
  kill -TERM "$vp"
  while kill -0 "$vp" 2>/dev/null; do sleep 0.2; done
  if [ -n "${KEEP:-}" ]; then cp "$d/cg.out" "$KEEP.$n"; fi
  awk '/^summary:|^totals:/ {print $2; exit}' "$d/cg.out"
}
base=$(run 0); total=$(run "$polls")
python3 -c "import sys; b,t,n=map(int,sys.argv[1:]); print('polls=%d instructions_per_poll=%d' % (n, (t-b)//n))" \
  "$base" "$total" "$polls"
