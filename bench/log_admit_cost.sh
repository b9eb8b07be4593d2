#!/usr/bin/env bash
# The public log's cost in the store (issue 38): Redis CPU per admitted
# person and Redis memory per event, with the queue's publicLog on or off.
# Fills a paused queue with USERS joins (wrk, as bench/cpu_per_join.sh),
# then lets them in at RATE a second and measures redis-server's own CPU
# time (utime+stime from /proc) from the unpause until every one is
# admitted and, with the log, until the signed checkpoint covers every
# event (the signer's round hashes the leaves in C: its HMGETs and HSETs
# are Redis CPU too). Memory: Redis INFO used_memory before the joins,
# after them, and at the end, per event (a join, an admission).
#
# Usage, from the project root after a release build (build/waitroomd):
#   PUBLIC_LOG=0|1 bench/log_admit_cost.sh [users] [rate]
# Prints one line of key=value. Needs wrk, redis-server, curl, python3.
set -euo pipefail
users=${1:-20000}; rate=${2:-2000}; conns=64
bin=${WAITROOMD:-build/waitroomd}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

start_redis
used() { redis-cli -p "$rp" info memory | awk -F: '/^used_memory:/ {print $2 + 0}'; }
log_field=; [ "${PUBLIC_LOG:-0}" = 1 ] && log_field=',"publicLog":true'
mem0=$(used)
start_waitroomd "redis://127.0.0.1:$rp" \
  '{"enabled":true,"paused":true,"admitPerSecond":'"$rate"',"maxQueueSize":0,"tokenTtlSeconds":3600,"idleTimeoutSeconds":0'"$log_field}"
fill_line "$users" "$conns"
mem1=$(used)
stat() { # a stat of queue "bench"
  curl -s -H 'Authorization: Bearer cpukey' "http://127.0.0.1:$wp/v1/admin/queues/bench" |
    python3 -c "import json,sys;print(json.load(sys.stdin)['stats']['$1'])"
}
cp_size() { # the signed checkpoint's size (0 without one)
  curl -s "http://127.0.0.1:$wp/v1/queues/bench/log/checkpoint" | sed -n 2p | grep -E '^[0-9]+$' || echo 0
}
r0=$(cpu_ticks "$rpid")
curl -sf -X PATCH -H 'Authorization: Bearer cpukey' -H 'Content-Type: application/json' \
  -d '{"paused":false}' "http://127.0.0.1:$wp/v1/admin/queues/bench" >/dev/null
for _ in $(seq 600); do
  [ "$(stat admittedTotal)" -ge "$have" ] && break
  sleep 0.2
done
admitted=$(stat admittedTotal)
if [ "${PUBLIC_LOG:-0}" = 1 ]; then
  for _ in $(seq 300); do
    [ "$(cp_size)" -ge $((have + admitted)) ] && break
    sleep 0.2
  done
fi
r1=$(cpu_ticks "$rpid")
mem2=$(used)
events=$((have + admitted))
python3 - "$have" "$admitted" "$r0" "$r1" "$hz" "$mem0" "$mem1" "$mem2" "${PUBLIC_LOG:-0}" "$(cp_size)" <<'PY'
import sys
joins, admitted, r0, r1, hz, m0, m1, m2, log, cp = map(int, sys.argv[1:])
print("public_log=%d joins=%d admitted=%d checkpoint=%d redis_us_per_admitted=%.2f "
      "redis_bytes_per_join=%.0f redis_bytes_per_event=%.0f" % (
          log, joins, admitted, cp, (r1 - r0) / hz * 1e6 / max(admitted, 1),
          (m1 - m0) / max(joins, 1), (m2 - m0) / max(joins + admitted, 1)))
PY
