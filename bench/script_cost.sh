#!/bin/bash
# In-Redis cost of one entry_batch call, by script text (issue 36): joins 700
# users to a queue through WAITROOMD (then stops it), loads each TEXT (a
# whole script as Redis gets it: rows, lib.lua, lib_entry.lua, entry_batch.lua
# concatenated) and runs redis-benchmark EVALSHA of PER status polls from rank
# FROM on (FROM 600: past the first 257, no passed-over count; FROM 100: the
# front), 5 rounds alternating. Prints Redis's usec_per_call (INFO
# commandstats) and redis-server's CPU per call (/proc).
# Usage: WAITROOMD=build/waitroomd FROM=600 PER=1 bench/script_cost.sh a.lua b.lua ...
set -e
work=$(mktemp -d)
rp=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
redis-server --port "$rp" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >/dev/null 2>&1 &
rpid=$!
trap 'kill $rpid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do redis-cli -p "$rp" ping >/dev/null 2>&1 && break; sleep 0.1; done
"${WAITROOMD:-build/waitroomd}" --listen 127.0.0.1:0 --store "redis://127.0.0.1:$rp" --admin-key k \
  --identity header:X-User-Id >"$work/wr.out" 2>"$work/wr.err" &
wpid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/wr.out" && break; sleep 0.1; done
wp=$(grep -m1 "listening on" "$work/wr.out" | sed 's/.*://')
curl -sf -X PUT -H 'Authorization: Bearer k' -H 'Content-Type: application/json' \
  -d '{"enabled":true,"paused":true,"admitPerSecond":1,"maxQueueSize":0}' \
  "http://127.0.0.1:$wp/v1/admin/queues/bench" >/dev/null
for i in $(seq 1 700); do
  curl -sf -X POST -H "X-User-Id: u$i" "http://127.0.0.1:$wp/v1/queues/bench/entries" >/dev/null
done
kill $wpid; wait $wpid 2>/dev/null || true
R="redis-cli -p $rp"
key=$($R --scan --pattern 'wr:*:config' | head -1); tag=${key%:config}
from=${FROM:-600}; per=${PER:-1}
args=$($R hget "$key" version)
for u in $($R zrange "$tag:waiting" "$from" $((from + per - 1))); do args="$args $u 0 0"; done
keys=""
for k in config waiting active tokens state sessions sessjti seen pre held back away; do keys="$keys $tag:$k"; done
declare -A sha
for t in "$@"; do sha[$t]=$($R -x script load <"$t"); done
for round in 1 2 3 4 5; do
  for t in "$@"; do
    $R config resetstat >/dev/null
    c0=$(awk '{print $14+$15}' /proc/$rpid/stat)
    # shellcheck disable=SC2086
    redis-benchmark -p "$rp" -c 2 -n 100000 -q evalsha "${sha[$t]}" 12 $keys $args >/dev/null
    c1=$(awk '{print $14+$15}' /proc/$rpid/stat)
    us=$($R info commandstats | sed -n 's/.*cmdstat_evalsha.*usec_per_call=\([0-9.]*\).*/\1/p')
    cpu=$(python3 -c "print(round(($c1-$c0)*1e6/$(getconf CLK_TCK)/100000,2))")
    echo "round=$round text=$t usec_per_call=$us redis_cpu_us_per_call=$cpu load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
