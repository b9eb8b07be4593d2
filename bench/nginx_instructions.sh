#!/usr/bin/env bash
# bench/nginx_instructions.sh - the reference for bench/poll_instructions.sh:
# the instructions nginx spends per request serving the yardstick's fixed
# ~100-byte JSON (../shared/bench/cpu_per_request.sh's nginx.conf), counted
# exactly the same way: nginx (one process, master_process off) under
# valgrind's callgrind, a Python client making REQUESTS requests over one
# keep-alive connection (the polls' target and X-User-Id header), the same
# run with 0 requests, and the difference divided by REQUESTS. The whole
# process is counted (nginx's own event loop included), so compare it with
# `TOGGLE= bench/poll_instructions.sh` (waitroomd's whole process).
#
# Usage: bench/nginx_instructions.sh [requests]   (default 3000)
# Needs: valgrind, nginx (Debian nginx-light), python3.
set -euo pipefail
reqs=${1:-3000}
bin=/dev/null # lib.sh's waitroomd, not started here
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
run() {
  local n=$1 d port vp
  d=$(mktemp -d "$work/run.XXXXXX"); mkdir -p "$d/logs"
  port=$(freeport)
  cat >"$d/nginx.conf" <<NGX
worker_processes 1; daemon off; master_process off; pid $d/nginx.pid; error_log $d/logs/error.log warn;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  server { listen 127.0.0.1:$port backlog=4096;
    location / { default_type application/json;
      return 200 '{"status":"waiting","position":123456,"ahead":123455,"waiting":1000000,"etaSeconds":706,"retryAfterMs":5000}'; } } }
NGX
  valgrind --tool=callgrind --callgrind-out-file="$d/cg.out" nginx -c "$d/nginx.conf" -p "$d" \
    >"$d/out" 2>"$d/err" &
  vp=$!
  for _ in $(seq 600); do
    python3 -c "import socket;socket.create_connection(('127.0.0.1',$port)).close()" 2>/dev/null && break
    sleep 0.2
  done
  python3 - "$port" "$n" <<'PY'
import http.client, random, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
c = http.client.HTTPConnection("127.0.0.1", port)
random.seed(42)
for _ in range(n):
    c.request("GET", "/v1/queues/bench/entries/me", headers={"X-User-Id": "u%d" % random.randint(1, 1000)})
    r = c.getresponse()
    r.read()
    assert r.status == 200, r.status
c.close()
PY
  kill -QUIT "$vp"
  while kill -0 "$vp" 2>/dev/null; do sleep 0.2; done
  awk '/^summary:|^totals:/ {print $2; exit}' "$d/cg.out"
}
base=$(run 0); total=$(run "$reqs")
python3 -c "import sys; b,t,n=map(int,sys.argv[1:]); print('requests=%d nginx_instructions_per_request=%d' % (n, (t-b)//n))" \
  "$base" "$total" "$reqs"
