#!/usr/bin/env bash
# `make run`: starts waitroomd on 127.0.0.1:8080 (make run PORT=N: on port
# N) with the demo queue of examples/waitroom.ini, on the embedded store (no
# Redis needed).
# STORE=redis make run   starts a private redis-server under ./run/ (RUN_DIR) instead,
# and stops it when waitroomd stops (Ctrl-C, SIGTERM, or waitroomd exiting):
# waitroomd runs as a child (no exec), so this script's EXIT trap runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# RUN_DIR (default ./run): the data dir, the generated config and the logs
run_dir=${RUN_DIR:-run}
mkdir -p "$run_dir"
run_dir=$(cd "$run_dir" && pwd)
port_http=${PORT:-8080}
case "$port_http" in '' | *[!0-9]*) echo "PORT must be a number: $port_http" >&2; exit 2 ;; esac
shop_port=${SHOP_PORT:-$((port_http + 1))}
case "$shop_port" in '' | *[!0-9]*) echo "SHOP_PORT must be a number: $shop_port" >&2; exit 2 ;; esac
# The demo queue sends an admitted browser to the demo shop (examples/demo_shop.py,
# started below): a page behind the line that consumes the pass
sed "s|^targetUrl = .*|targetUrl = http://127.0.0.1:$shop_port/|" examples/waitroom.ini >"$run_dir/waitroom.ini"
args=(--config "$run_dir/waitroom.ini" --listen "127.0.0.1:$port_http")
if [ "${STORE:-memory}" = "redis" ]; then
  command -v redis-server >/dev/null || { echo "redis-server is not installed (scripts/deps.sh)"; exit 1; }
  port=${REDIS_PORT:-6390}
  redis-server --port "$port" --bind 127.0.0.1 --dir "$run_dir" --appendonly yes \
    --daemonize yes --pidfile "$run_dir/redis.pid" --logfile "$run_dir/redis.log"
  stop_redis() {
    local pid
    pid=$(cat "$run_dir/redis.pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    echo "redis-server stopped"
  }
  trap stop_redis EXIT
  # --daemonize returns before Redis listens: wait for it, so that
  # waitroomd finds it at start and makes the demo queue before it listens
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  args+=(--store "redis://127.0.0.1:$port")
  echo "redis-server started on 127.0.0.1:$port (data in $run_dir)"
else
  args+=(--data-dir "$run_dir")
fi
base=http://127.0.0.1:$port_http
WAITROOM_API=$base WAITROOM_PAGE=$base/ WAITROOM_QUEUE=demo PORT=$shop_port \
  python3 examples/demo_shop.py >"$run_dir/demo_shop.log" 2>&1 &
shop=$!
stop_shop() { kill "$shop" 2>/dev/null || true; }
if [ "${STORE:-memory}" = "redis" ]; then
  trap 'stop_shop; stop_redis' EXIT
else
  trap stop_shop EXIT
fi
cat <<TXT
Starting waitroomd on $base (Ctrl-C stops it); the queue page is $base/q/demo,
and an admitted browser goes on to the demo shop on http://127.0.0.1:$shop_port/. Try:
  curl -si -c '$run_dir/cookies' -b '$run_dir/cookies' -X POST $base/v1/queues/demo/entries
  curl -s  -b '$run_dir/cookies' $base/v1/queues/demo/entries/me
  curl -s -H 'Authorization: Bearer demo-admin-key' $base/v1/admin/queues/demo
  sleep 1.5   # the demo queue admits 2 a second: the pass comes at a later poll
  TOKEN=\$(curl -s -b '$run_dir/cookies' $base/v1/queues/demo/entries/me | python3 -c 'import json,sys; a=json.load(sys.stdin); print(a["token"]) if "token" in a else sys.exit("not admitted yet: %s" % a)')
  curl -s -X POST -H "Authorization: Bearer \$TOKEN" $base/v1/queues/demo/tokens/consume
  curl -s $base/metrics | grep waitroom_queue
  curl -s -X PATCH -H 'Authorization: Bearer demo-admin-key' -d '{"paused":true}' $base/v1/admin/queues/demo
  curl -s -X PATCH -H 'Authorization: Bearer demo-admin-key' -d '{"paused":false}' $base/v1/admin/queues/demo   # kept in $run_dir across restarts
TXT
"${WAITROOMD:-build/waitroomd}" "${args[@]}" &
wr=$!
# Ctrl-C reaches waitroomd too (same process group); SIGTERM to this script
# is passed on. Either way: wait for its graceful stop, then EXIT runs.
trap 'kill -TERM "$wr" 2>/dev/null || true' INT TERM
# (a wait the trap interrupts returns early: wait again while it runs,
# then once more for its own exit status, which bash keeps)
while kill -0 "$wr" 2>/dev/null; do wait "$wr" || true; done
status=0
wait "$wr" || status=$?
exit "$status"
