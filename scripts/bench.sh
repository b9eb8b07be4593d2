#!/usr/bin/env bash
# Benchmarks of docs/BENCHMARKS.md, in one run, on loopback:
#   1. nginx serving a fixed 100-byte JSON (the reference),
#   2. joins (POST entries, unique users) - also fills the line,
#   3. position polls (GET entries/me of random users of the full line),
# against waitroomd on the embedded store and on Redis. wrk -t1 -c64 -d10s.
# This VM's speed drifts by a fifth between minutes, so every waitroomd run
# is paired with an nginx run right before it, the ratio is taken within
# the pair, and the polls are measured in ROUNDS pairs (default 3) whose
# median ratio is reported, with the spread.
# Usage: scripts/bench.sh [USERS]   (default 1000000; WR_BENCH_ROUNDS=N)
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${1:-${WR_BENCH_USERS:-1000000}}
DUR=${WR_BENCH_DURATION:-10s}
ROUNDS=${WR_BENCH_ROUNDS:-3}
WRK="wrk -t1 -c64 -d$DUR --latency"
command -v wrk >/dev/null && command -v nginx >/dev/null || {
  echo "bench: installing wrk and nginx-light" >&2
  WR_DEPS_EXTRA="wrk nginx-light" scripts/deps.sh
}
[ -x build/waitroomd ] || { echo "build first: make"; exit 1; }
tmp=$(mktemp -d /tmp/wr-bench.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
summ() { # wrk output -> "req/s p50 p99"
  awk '/Requests\/sec/ {r=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} END {printf "%s %s %s\n", r, p50, p99}' "$1"
}

# 1. nginx with a fixed 100-byte JSON body
NPORT=$(freeport)
body='{"status":"waiting","position":128,"ahead":127,"waiting":5012,"etaSeconds":45,"retryAfterMs":3000}'
body=${body:0:100}
mkdir -p "$tmp/nginx"
cat > "$tmp/nginx/nginx.conf" <<NGX
worker_processes 1;
daemon off;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx;
  proxy_temp_path $tmp/nginx; fastcgi_temp_path $tmp/nginx; uwsgi_temp_path $tmp/nginx; scgi_temp_path $tmp/nginx;
  server {
    listen 127.0.0.1:$NPORT;
    location / { default_type application/json; add_header Cache-Control no-store; return 200 '$body'; }
  }
}
NGX
nginx -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" & pids+=($!)

start_waitroomd() { # $1 = store URL; sets WPORT
  build/waitroomd --listen 127.0.0.1:0 --store "$1" --admin-key bench --identity header:X-User-Id \
    --token-secret 0123456789abcdef0123456789abcdef0123456789abcdef --log-level warn \
    > "$tmp/w.out" 2> "$tmp/w.err" & pids+=($!)
  for _ in $(seq 50); do grep -q listening "$tmp/w.out" 2>/dev/null && break; sleep 0.1; done
  WPORT=$(sed -n 's/^listening on 127.0.0.1://p' "$tmp/w.out")
  curl -sf -X PUT -H 'Authorization: Bearer bench' -d '{"admitPerSecond":1,"paused":true,"maxQueueSize":0}' \
    "http://127.0.0.1:$WPORT/v1/admin/queues/bench" > /dev/null
}

echo "# waitroom benchmark $(date -u +%FT%TZ)"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(lscpu | sed -n 's/^Model name: *//p')"
echo "wrk: $WRK; line: $USERS users; poll rounds: $ROUNDS (nginx run, then waitroomd run)"
echo
sleep 0.5
nginx_run() { # -> "req/s p50 p99" of one nginx run
  $WRK "http://127.0.0.1:$NPORT/" > "$tmp/nginx.txt"
  summ "$tmp/nginx.txt"
}
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
echo "| target | req/s | p50 | p99 | nginx req/s (paired run) | ratio to nginx |"
echo "|---|---|---|---|---|---|"

for store in memory redis; do
  if [ $store = redis ]; then
    RPORT=$(freeport)
    redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
      --logfile "$tmp/redis.log" & pids+=($!)
    sleep 0.3
    start_waitroomd "redis://127.0.0.1:$RPORT"
  else
    start_waitroomd memory
  fi
  # joins: fill the line (timed), then a fixed-duration join run on top
  # wrk's thread:stop() stops sending but wrk still waits out -d, so the
  # fill runs in the background and is ended once the line is full.
  t0=$(date +%s.%N)
  WR_FILL=$USERS wrk -t1 -c64 -d3600s "http://127.0.0.1:$WPORT/" -s bench/wrk/join.lua > "$tmp/fill.txt" 2> "$tmp/fill.err" &
  fillpid=$!
  last=-1; still=0
  while kill -0 $fillpid 2>/dev/null; do
    w=$(curl -s -H 'Authorization: Bearer bench' "http://127.0.0.1:$WPORT/v1/admin/queues/bench" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("stats", {}).get("waiting", -1))' || echo -1)
    [ "$w" -ge "$USERS" ] && break
    # wrk has stopped sending (a join answered non-200 is not retried)
    if [ "$w" = "$last" ]; then still=$((still + 1)); [ $still -ge 5 ] && break; else still=0; fi
    last=$w
    sleep 0.2
  done
  t1=$(date +%s.%N)
  kill $fillpid 2>/dev/null || true; wait $fillpid 2>/dev/null || true
  read -r n_rps _ _ < <(nginx_run)
  WR_PREFIX=x $WRK -s bench/wrk/join.lua "http://127.0.0.1:$WPORT/" > "$tmp/join.txt" 2> "$tmp/join.err"
  read -r j_rps j_p50 j_p99 < <(summ "$tmp/join.txt")
  echo "| waitroomd ($store) joins | $j_rps | $j_p50 | $j_p99 | $n_rps | $(ratio "$j_rps" "$n_rps") |"
  ratios=(); non2xx=0
  for r in $(seq "$ROUNDS"); do
    read -r n_rps _ _ < <(nginx_run)
    WR_USERS=$USERS $WRK -s bench/wrk/poll.lua "http://127.0.0.1:$WPORT/" > "$tmp/poll.txt" 2>> "$tmp/poll.err"
    read -r p_rps p_p50 p_p99 < <(summ "$tmp/poll.txt")
    non2xx=$(( ${non2xx:-0} + $(awk '/Non-2xx/ {n=$NF} END {print n+0}' "$tmp/poll.txt") ))
    ratios+=("$(ratio "$p_rps" "$n_rps")")
    echo "| waitroomd ($store) polls, round $r | $p_rps | $p_p50 | $p_p99 | $n_rps | ${ratios[-1]} |"
  done
  waiting=$(curl -s -H 'Authorization: Bearer bench' "http://127.0.0.1:$WPORT/v1/admin/queues/bench" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("stats", {}).get("waiting", "?"))' || echo "?")
  rss=$(awk '/VmRSS/ {print $2}' /proc/"${pids[-1]}"/status 2>/dev/null || echo "?")
  med=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "| **waitroomd ($store) polls: median of $ROUNDS paired ratios** (line of $waiting) | | | | | **$med** (min $(printf '%s\n' "${ratios[@]}" | sort -n | head -1), max $(printf '%s\n' "${ratios[@]}" | sort -n | tail -1)) |"
  echo "  ($store: filled $USERS joins in $(python3 -c "print(f'{$t1-$t0:.1f}')") s; waitroomd RSS ${rss} kB; non-2xx answers: joins $(awk '/Non-2xx/ {n=$NF} END {print n+0}' "$tmp/join.txt") polls ${non2xx:-0}; first ones: $(sort "$tmp/join.err" "$tmp/poll.err" | uniq -c | head -3 | tr -s ' \n' ' '))" >&2
  kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true; unset 'pids[-1]'
  if [ $store = redis ]; then kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true; unset 'pids[-1]'; fi
done
