# shellcheck shell=bash disable=SC2034,SC2154 # sets variables for, and reads bin of, the script
# bench/lib.sh - what the bench scripts share, sourced (after set -euo
# pipefail) by cpu_per_join.sh, redis_batch_probe.sh and far_polls.sh: a
# temp dir $work removed at exit with every process started here (pids),
# free ports, a process's CPU ticks, the start of redis-server and of
# waitroomd (${bin}) with the queue "bench", and the filling of its line.

work=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
freeport() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# check_backend KIND: KIND must be a backend of the store registry, as the
# contract suite lists them (build/test_store_contract --list-backends);
# stops the script otherwise. The bench scripts bring up each backend's
# server themselves (start_redis), as tests/integration/run.py does.
check_backend() {
  local lister=${WR_BACKENDS_FROM:-$(dirname "$bin")/test_store_contract}
  if [ -x "$lister" ] && ! "$lister" --list-backends | grep -qx "$1"; then
    echo "unknown store backend '$1' (the registry has: $("$lister" --list-backends | tr '\n' ' '))" >&2
    exit 2
  fi
}

# start_redis: a redis-server without persistence on a free port, ready
# for commands; sets rp (its port) and rpid.
start_redis() {
  rp=$(freeport)
  redis-server --port "$rp" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >/dev/null 2>&1 &
  rpid=$!; pids+=("$rpid")
  for _ in $(seq 50); do redis-cli -p "$rp" ping >/dev/null 2>&1 && break; sleep 0.1; done
}

# start_waitroomd STORE CONFIG: $bin on a free port (admin key cpukey,
# identity header X-User-Id, logs in $work/wr.out and wr.err), then CONFIG
# (JSON) put as the config of queue "bench"; sets wpid and wp (its port).
start_waitroomd() {
  "$bin" --listen 127.0.0.1:0 --store "$1" --admin-key cpukey --identity header:X-User-Id \
    >"$work/wr.out" 2>"$work/wr.err" &
  wpid=$!; pids+=("$wpid")
  for _ in $(seq 100); do grep -q "listening on" "$work/wr.out" && break; sleep 0.1; done
  wp=$(grep -m1 "listening on" "$work/wr.out" | sed 's/.*://')
  sleep 0.3
  curl -sf -X PUT -H 'Authorization: Bearer cpukey' -H 'Content-Type: application/json' \
    -d "$2" "http://127.0.0.1:$wp/v1/admin/queues/bench" >/dev/null
}

# waiting: the length of queue "bench"'s line (asked again, up to 30 times a
# second apart, while a busy store answers without stats).
waiting() {
  local n
  for _ in $(seq 30); do
    n=$(curl -s -H 'Authorization: Bearer cpukey' "http://127.0.0.1:$wp/v1/admin/queues/bench" |
      python3 -c 'import json,sys;print(json.load(sys.stdin)["stats"]["waiting"])' 2>/dev/null) &&
      { echo "$n"; return; }
    sleep 1
  done
  echo "bench: no stats from waitroomd" >&2; exit 1
}

# fill_line USERS CONNS: joins u1..uUSERS into queue "bench" with wrk (2 s
# rounds, each continuing where the last stopped) until the line holds at
# least USERS - 100 (a join lost to a timeout is not retried); sets have.
fill_line() {
  have=0
  while [ "$have" -lt $(($1 - 100)) ]; do
    cat >"$work/fill.lua" <<LUA
local n = $have
request = function() n = n + 1
  if n > $1 then n = $1 end
  return wrk.format("POST", "/v1/queues/bench/entries", {["X-User-Id"] = "u" .. n}) end
LUA
    wrk -t1 -c"$2" -d2s -s "$work/fill.lua" "http://127.0.0.1:$wp/" >/dev/null
    have=$(waiting)
  done
}
