#!/usr/bin/env bash
# `make demo`: the sale-day scenario of issue 3, end to end.
#
# Starts waitroomd (embedded store, or a private redis-server with
# --store redis), two demo shops (one checking entry tokens, one with
# --no-queue), and runs waitroom-sim twice: without the line (users go
# straight to the shop) and with it. Writes OUT/without.json, OUT/with.json,
# OUT/report.json ({"withQueue":..., "withoutQueue":...}) and OUT/report.svg
# (in-flight orders against the pool line for both runs), and the server's
# own report of the run with the line (GET /v1/admin/queues/sale/report,
# API 1.3): OUT/server-report.json and OUT/server-report.csv, which
# report.svg links; waitroom-sim reads it at the end of its run and holds
# its totals against its own counts (withQueue.serverReport: joined,
# admitted, consumed and left must agree; --assert checks it).
#
#   scripts/demo.sh [--users N] [--rate R] [--service-ms MS] [--pool N]
#                   [--pool-timeout-ms MS] [--bypass N] [--replay N] [--greedy N]
#                   [--quitters N] [--store memory|redis] [--bin DIR] [--out DIR]
#                   [--poll-bands default|auto|JSON] [--poll-jitter default|0..0.5]
#                   [--one-in-one-out] [--session-seconds S]
#                   [--profile burst|ramp|csv:FILE] [--assert] [--with-only]
#                   [--opens-in SECONDS [--late N]]
#                   [--sleepers F [--sleep-range A:B] [--idle-timeout S] [--subscribed G]]
#                   [--stock N] [--rate-tolerance PCT]
#                   [--shop-slowdown T:F] [--autotune] [--public-log]
#                   [--presale F [--standard-share S]]
# Poll timing is the server's own by default (--poll-bands default
# --poll-jitter default: bands 1/3/5 s, jitter 0.1, retryAfterMs following
# the ETA): what the demo shows is what a deployment gets. --poll-bands auto
# sizes the bands to the rate (1 s for the last 3.5 s of the line, 3 s up to
# 6 s, 5 s beyond); JSON gives them; --poll-jitter J sets pollJitter.
# --one-in-one-out: the queue gets maxActive = --pool and sessionSeconds
# (--session-seconds, default 30), and the shop ends each user's session
# when the order is done (waitroom-shop --release). A waitroomd without
# sessions refuses sessionSeconds: the run then has maxActive only, and the
# report says so.
# --opens-in S: a sale with a pre-queue. The queue's opensAt is set S
# seconds ahead once the simulator is connected; the crowd (its profile)
# arrives before it, --late N users (default users/10) in the second after
# it. The report adds the pre-queue's size, the opening, and two fairness
# figures: Kendall's tau-b between arrival and admission order for the
# pre-queue (the shuffle: about 0) and for the later arrivals (FIFO: 1.0).
# Without the line, the early users all reach the shop at the opening.
# --sleepers F: phones that sleep (API 1.2 "Away, not gone"). A fraction F of
# the crowd (ordinary users, seeded) stops polling once, from an answer in
# the first quarter of its expected wait, for a seeded time in --sleep-range
# A:B seconds (default 180:360), then polls as told again. The queue's
# idleTimeoutSeconds is --idle-timeout S, by default a sixth of the line's
# length users/rate (at least 1 s, at most 120 s: 2 s for 2,000 users at
# 175/s), so that a sleeper counts as away well before its turn and is held;
# the cap of retryAfterMs at half of it makes everyone else poll at least
# that often. tokenTtlSeconds becomes B + 60 s, so that a sleeper whose turn
# came before it counted as away finds its pass on return. The report counts
# sleepers, sleepersLost (came back to 404: must be 0), sleepersHeld,
# sleepersReturned and sleepersPassWaited; the rate is measured while the
# line drains, and FIFO, waits and ETAs over everybody else.
# --subscribed G (with --sleepers): a fraction G of the sleepers press
# "notify me" (Web Push, API 1.3) right after joining and stop polling
# entirely; waitroom-sim is also the push service (a stand-in on a free
# loopback port, allowed with --push-allow-host), which checks each push's
# VAPID and decrypts it (RFC 8291), and the person comes back on it. The
# report adds subscribed, pushesDelivered, pushLatencyP50Ms/P99Ms
# (admission to arrival), subscribedLost and the polls per person of
# subscribed sleepers, unsubscribed ones and everybody else. A store that
# refuses push stops the demo at once (exit 2).
# --stock N: the queue's stock is N; the shop consumes each pass (a sale),
# and the line closes as sold out once N passes are consumed. The report
# counts usersAdmitted, usersToldSoldOut and admittedBeyondStock (must be 0)
# and the sold-out moment. --sleepers and --stock apply to the run with the
# line only.
# --rate-tolerance PCT: --assert's bound on the rate's error (default 2).
# --shop-slowdown T:F: from T seconds into the sale (after the shop's first
# order) the shop's service time is multiplied by F (a slow database); the
# report adds settleSeconds and shopMaxInFlightAfterSettle (withQueue).
# --autotune: the queue gets autotune (min 10, max 2x --rate, target 2x
# --service-ms) and the shop reports its p95 latency and error rate every
# 500 ms (waitroom-shop --report-health). The left column is then the same
# sale at the fixed rate (instead of no line), so the report shows the two
# side by side; withQueue.autotuneRates is the rate in use each second.
# --public-log: the queue keeps its public log (publicLog; with --opens-in
# also preQueueShuffle, on either store: the opening has a commit and a
# draw). After the run
# with the line, once the signed checkpoint covers every event (its size
# unchanged for 3 s: the server signs within 2 s of any append; at most
# 60 s), waitroom-verify checks the log (OUT/verify.txt, printed, then
# OUT/verify.json, consistent with the first); the report's withQueue gains
# logEvents, overtakes and drawChecked (null without a draw) and states the
# verdict. The demo fails when the verifier does.
# --presale F (issue 41): the queue gets a priority group ("groups":
# [{"name":"presale"}], standardShare --standard-share S, default 0.2);
# waitroom-sim makes one single-use presale code per presale person (POST
# /v1/admin/queues/sale/codes) and a fraction F of the crowd (ordinary
# users, seeded) joins with them, {"code":...}, into the group. The report
# (withQueue) adds presaleUsers, waitP50MsByGroup ({"presale","standard"}),
# admittedPerSecondByGroup and standardShareMinObserved: the lowest share
# of a second's admissions the standard line got in any second it had
# someone to admit all through. The share is kept per tick with a carried
# fraction below one person, so in a second of T admissions the standard
# line gets at least floor(S x T): --assert checks exactly that bound for
# every such second (standardShareFloorMisses 0; so the lowest share is
# at least S - 1/T), that nobody was lost, everyone with a code was in the
# group, each line was FIFO and the presale people waited less at p50.
# A store that refuses groups (Redis in this version) stops the demo at
# once (exit 2). Not with --opens-in.
# Environment: DEMO_USERS (default 10000), DEMO_OUT (default demo-out).
# Every process it starts is stopped on exit (by pid).
set -euo pipefail
cd "$(dirname "$0")/.."

users=${DEMO_USERS:-10000}
out=${DEMO_OUT:-demo-out}
bin=build
rate=175
service_ms=200
pool=40
pool_timeout_ms=2000
store=${DEMO_STORE:-memory}
bypass=""; replay=""; greedy=""; quitters=""
assert=""
with_only=0
poll_bands=default
poll_jitter=default
one_in_one_out=0
session_seconds=30
profile=burst
opens_in=""
late=""
sleepers=""; sleep_range=180:360; idle_timeout=""; stock=""; rate_tol=""; subscribed=""
# autotune (issue 25): --shop-slowdown T:F, --autotune
shop_slowdown=""
autotune=0
public_log=0
presale=""; standard_share=0.2
while [ $# -gt 0 ]; do
  case "$1" in
    --users) users=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --service-ms) service_ms=$2; shift 2 ;;
    --pool) pool=$2; shift 2 ;;
    --pool-timeout-ms) pool_timeout_ms=$2; shift 2 ;;
    --bypass) bypass=$2; shift 2 ;;
    --replay) replay=$2; shift 2 ;;
    --greedy) greedy=$2; shift 2 ;;
    --quitters) quitters=$2; shift 2 ;;
    --store) store=$2; shift 2 ;;
    --poll-bands) poll_bands=$2; shift 2 ;;
    --poll-jitter) poll_jitter=$2; shift 2 ;;
    --one-in-one-out) one_in_one_out=1; shift ;;
    --session-seconds) session_seconds=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --opens-in) opens_in=$2; shift 2 ;;
    --late) late=$2; shift 2 ;;
    --sleepers) sleepers=$2; shift 2 ;;
    --sleep-range) sleep_range=$2; shift 2 ;;
    --idle-timeout) idle_timeout=$2; shift 2 ;;
    --subscribed) subscribed=$2; shift 2 ;;
    --stock) stock=$2; shift 2 ;;
    --rate-tolerance) rate_tol=$2; shift 2 ;;
    --shop-slowdown) shop_slowdown=$2; shift 2 ;;
    --autotune) autotune=1; shift ;;
    --public-log) public_log=1; shift ;;
    --presale) presale=$2; shift 2 ;;
    --standard-share) standard_share=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --assert) assert=--assert; shift ;;
    --with-only) with_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
# the mixed-in behaviours scale with the crowd unless given
bypass=${bypass:-$((users / 100))}
replay=${replay:-$((users / 200))}
greedy=${greedy:-$((users / 200))}
quitters=${quitters:-$((users / 200))}

opening_arg=(); opening_text=""
if [ -n "$opens_in" ]; then
  late=${late:-$((users / 10))}
  opening_arg=(--opens-in "$opens_in" --late "$late")
  opening_text=", a sale opening in ${opens_in} s (pre-queue; $late arrive after it)"
elif [ -n "$late" ]; then
  echo "demo.sh: --late needs --opens-in" >&2; exit 2
fi

sale_arg=(); sale_text=""
if [ -n "$sleepers" ] && [ "$sleepers" != 0 ]; then
  case "$sleep_range" in
    *:*) ;;
    *) echo "demo.sh: --sleep-range wants A:B (seconds)" >&2; exit 2 ;;
  esac
  idle_timeout=${idle_timeout:-$(awk -v u="$users" -v r="$rate" 'BEGIN{x=int(u/r/6+0.5);
      if(x<1)x=1; if(x>120)x=120; print x}')}
  sale_arg+=(--sleepers "$sleepers" --sleep-range "$sleep_range" --idle-timeout "$idle_timeout"
             --ttl $(( ${sleep_range#*:} + 60 )))
  sale_text+=", sleepers $sleepers (asleep ${sleep_range/:/-} s; idleTimeoutSeconds $idle_timeout)"
elif [ -n "$idle_timeout" ]; then
  sale_arg+=(--idle-timeout "$idle_timeout")
fi
if [ -n "$stock" ]; then
  sale_arg+=(--stock "$stock")
  sale_text+=", stock $stock"
fi
if [ -n "$rate_tol" ]; then
  sale_arg+=(--rate-tolerance "$rate_tol")
fi

bands_arg=()
case "$poll_bands" in
  default) ;;
  auto) bands_arg=(--poll-bands "$(awk -v r="$rate" 'function c(x){return x==int(x)?x:int(x)+1}
      BEGIN{printf "[{\"upTo\":%d,\"ms\":1000},{\"upTo\":%d,\"ms\":3000},{\"ms\":5000}]", c(3.5*r), c(6*r)}')") ;;
  *) bands_arg=(--poll-bands "$poll_bands") ;;
esac
queue_config="{}"
if [ "$poll_jitter" != default ]; then
  queue_config="{\"pollJitter\":$poll_jitter}"
fi
if [ "$public_log" = 1 ]; then
  [ -x "$bin/waitroom-verify" ] || { echo "demo.sh: $bin/waitroom-verify is missing; build first (make build)" >&2; exit 2; }
  command -v curl >/dev/null || { echo "demo.sh: --public-log needs curl" >&2; exit 2; }
  log_fields='"publicLog":true'
  # the opening: drawn in public (README, "Checking the line"), both stores
  if [ -n "$opens_in" ]; then log_fields+=',"preQueueShuffle":true'; fi
  queue_config=${queue_config%\}}; [ "$queue_config" = "{" ] || queue_config+=,
  queue_config+="$log_fields}"
  sale_text+=", public log"
fi
if [ -n "$presale" ] && [ "$presale" != 0 ]; then
  [ -z "$opens_in" ] || { echo "demo.sh: --presale does not combine with --opens-in" >&2; exit 2; }
  command -v curl >/dev/null || { echo "demo.sh: --presale needs curl" >&2; exit 2; }
  group_fields="\"groups\":[{\"name\":\"presale\"}],\"standardShare\":$standard_share"
  queue_config=${queue_config%\}}; [ "$queue_config" = "{" ] || queue_config+=,
  queue_config+="$group_fields}"
  sale_arg+=(--presale "$presale")
  sale_text+=", $presale of the crowd with presale codes (standardShare $standard_share)"
fi
mode_arg=(); shop_mode_arg=(); mode_text="rate only"
if [ "$one_in_one_out" = 1 ]; then
  mode_arg=(--max-active "$pool" --session-seconds "$session_seconds")
  shop_mode_arg=(--release)
  mode_text="one in, one out (maxActive $pool, sessionSeconds $session_seconds)"
fi

# autotune (issue 25): the shops' slowdown, the sim's report of it, the
# queue's autotune object and the shop's health reports
slow_shop_arg=(); slow_sim_arg=(); autotune_shop_arg=(); autotune_config=""
if [ -n "$shop_slowdown" ]; then
  case "$shop_slowdown" in
    *:*) ;;
    *) echo "demo.sh: --shop-slowdown takes T:F (e.g. 10:3)" >&2; exit 2 ;;
  esac
  slow_shop_arg=(--slowdown "$shop_slowdown")
  slow_sim_arg=(--slowdown-at "${shop_slowdown%%:*}")
  mode_text="$mode_text, the shop ${shop_slowdown#*:}x slower from ${shop_slowdown%%:*} s"
fi
if [ "$autotune" = 1 ]; then
  autotune_config=$(awk -v r="$rate" -v s="$service_ms" \
    'BEGIN{printf "\"autotune\":{\"minPerSecond\":10,\"maxPerSecond\":%g,\"targetMs\":%d}", 2*r, 2*s}')
  if [ "$queue_config" = "{}" ]; then
    autotune_config="{$autotune_config}"
  else
    autotune_config="${queue_config%\}},$autotune_config}"
  fi
  mode_text="$mode_text, autotune ($autotune_config)"
fi

for b in waitroomd waitroom-shop waitroom-sim; do
  if [ ! -x "$bin/$b" ]; then
    echo "demo.sh: $bin/$b is missing; build first (make build)" >&2
    exit 2
  fi
done
mkdir -p "$out"
rm -f "$out/verify.txt" "$out/verify.json" "$out/log.vkey" "$out/server-report.json" "$out/server-report.csv"
run=$(mktemp -d "${TMPDIR:-/tmp}/waitroom-demo.XXXXXX")
pids=()
names=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$run"
}
trap cleanup EXIT

# stop_all: SIGTERM to every process started here, by pid; each must exit 0
# (a sanitizer report or a crash fails the demo). Logs go to $out/logs/.
stop_all() {
  local i st failed=0
  mkdir -p "$out/logs"
  for i in "${!pids[@]}"; do
    kill "${pids[$i]}" 2>/dev/null || true
    st=0; wait "${pids[$i]}" 2>/dev/null || st=$?
    cp "$run/${names[$i]}.err" "$out/logs/${names[$i]}.log" 2>/dev/null || true
    if [ "$st" != 0 ]; then
      echo "demo.sh: ${names[$i]} exited with status $st:" >&2
      tail -n 30 "$run/${names[$i]}.err" >&2 || true
      failed=1
    fi
  done
  pids=()
  return $failed
}

# start NAME CMD...: runs CMD in the background (not in a subshell, so its
# pid is recorded) and sets $port from its first stdout line
# "listening on HOST:PORT" (waits up to 10 s).
port=""
start() {
  local name=$1; shift
  "$@" >"$run/$name.out" 2>"$run/$name.err" &
  pids+=($!)
  names+=("$name")
  local pid=$!
  for _ in $(seq 1 100); do
    if grep -q '^listening on ' "$run/$name.out" 2>/dev/null; then
      port=$(sed -n '1s/^listening on .*:\([0-9]*\)$/\1/p' "$run/$name.out")
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "demo.sh: $name did not start:" >&2
  cat "$run/$name.err" >&2
  return 1
}

# check_log URL (--public-log): waits until the checkpoint of queue "sale"
# covers every event (its size unchanged for 3 s; the server signs within
# 2 s of any append), polling at most 60 s, then runs waitroom-verify twice
# (text: OUT/verify.txt, printed; --json: OUT/verify.json), the second
# checking consistency with the first's checkpoint (--state). Returns the
# verifier's status (0: fair, and the draw checks).
check_log() {
  local url=$1 code size last="" since=0 now end st=0 st2=0
  curl -sf "$url/v1/log/key" >"$out/log.vkey" || { echo "demo.sh: no verifier key from $url" >&2; return 4; }
  now=$(date +%s%3N); end=$((now + 60000))
  while :; do
    code=$(curl -s -o "$run/checkpoint" -w '%{http_code}' "$url/v1/queues/sale/log/checkpoint") || code=000
    if [ "$code" != 200 ]; then # no log (404), no server (000): nothing to wait for
      echo "demo.sh: the log's checkpoint answered $code $(head -c 300 "$run/checkpoint" 2>/dev/null)" >&2; return 4
    fi
    size=$(sed -n 2p "$run/checkpoint"); now=$(date +%s%3N)
    if [ "$size" != "$last" ]; then last=$size; since=$now
    elif [ "$size" -gt 0 ] && [ $((now - since)) -ge 3000 ]; then break; fi
    if [ "$now" -ge "$end" ]; then
      echo "demo.sh: the log still grows after 60 s: verifying its latest checkpoint" >&2; break
    fi
    sleep 0.2
  done
  echo "-- the public log: a checkpoint of $size events $(((now - end + 60000) / 1000)) s after the run;" \
    "checked from outside (waitroom-verify $url sale) --"
  "$bin/waitroom-verify" --state "$run/log.state" "$url" sale "$out/log.vkey" | tee "$out/verify.txt" || st=$?
  "$bin/waitroom-verify" --json --state "$run/log.state" "$url" sale "$out/log.vkey" >"$out/verify.json" || st2=$?
  return $((st != 0 ? st : st2))
}

admin_key=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
secret=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
store_arg=memory
if [ "$store" = "redis" ]; then
  command -v redis-server >/dev/null || { echo "demo.sh: redis-server is not installed" >&2; exit 2; }
  redis-server --port 0 --unixsocket "$run/redis.sock" --unixsocketperm 700 --save '' \
    --appendonly no --dir "$run" >"$run/redis.err" 2>&1 &
  pids+=($!)
  names+=(redis)
  for _ in $(seq 1 100); do [ -S "$run/redis.sock" ] && break; sleep 0.1; done
  store_arg="unix://$run/redis.sock"
fi

# store_accepts FLAG CONFIG [WAITROOMD OPTION...]: asks a waitroomd on the
# demo's store for a queue with CONFIG (a PUT, then its DELETE), so that a
# store that refuses what FLAG needs stops the demo before any run; returns
# 1 (the refusal printed) when the PUT answers other than 200.
store_accepts() {
  local flag=$1 cfg=$2 code; shift 2
  start store-check "$bin/waitroomd" --listen 127.0.0.1:0 --store "$store_arg" \
    --admin-key "$admin_key" --token-secret "$secret" --log-level warn "$@"
  code=$(curl -s -o "$run/store-check.json" -w '%{http_code}' -X PUT -H "Authorization: Bearer $admin_key" \
    -d "$cfg" "http://127.0.0.1:$port/v1/admin/queues/demo-store-check" || true)
  curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $admin_key" \
    "http://127.0.0.1:$port/v1/admin/queues/demo-store-check" || true
  kill "${pids[-1]}"; wait "${pids[-1]}" || true; unset 'pids[-1]' 'names[-1]'
  if [ "$code" != 200 ]; then
    echo "demo.sh: $flag: waitroomd on the $store store refuses its queue ($code $(cat "$run/store-check.json" 2>/dev/null)); no demo without it" >&2
    return 1
  fi
}

# --subscribed (issue 40): the push service's port, and the store asked
# first (a waitroomd on it, a push queue PUT) so a refusal stops the demo now
push_wr_arg=()
if [ -n "$subscribed" ] && [ "$subscribed" != 0 ]; then
  if [ -z "$sleepers" ] || [ "$sleepers" = 0 ]; then
    echo "demo.sh: --subscribed needs --sleepers" >&2; exit 2
  fi
  push_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  push_wr_arg=(--push-subject mailto:demo@shop.example --push-allow-host "127.0.0.1:$push_port")
  sale_arg+=(--subscribed "$subscribed" --push-port "$push_port")
  sale_text+=", $subscribed of the sleepers subscribed to Web Push"
  store_accepts --subscribed '{"push":true,"admitPerSecond":1,"paused":true}' "${push_wr_arg[@]}" || exit 2
fi
if [ -n "$presale" ] && [ "$presale" != 0 ]; then
  store_accepts --presale "{$group_fields,\"admitPerSecond\":1,\"paused\":true}" || exit 2
fi

echo "== sale-day scenario: $users users ($profile), shop pool $pool x ${service_ms} ms, line at ${rate}/s, $mode_text$opening_text$sale_text =="
echo "   poll timing: bands $poll_bands, jitter $poll_jitter"
if [ "$autotune" = 1 ] && [ "$with_only" = 0 ]; then
  # autotune: the left column is the same sale at the fixed rate
  start waitroomd-fixed "$bin/waitroomd" --listen 127.0.0.1:0 --store "$store_arg" \
    --admin-key "$admin_key" --identity header:X-User-Id --token-secret "$secret" --log-level warn
  fx_wr_port=$port
  start shop-fixed "$bin/waitroom-shop" --listen 127.0.0.1:0 \
    --waitroom "http://127.0.0.1:$fx_wr_port" --queue sale-fixed --pool "$pool" \
    --service-ms "$service_ms" --pool-timeout-ms "$pool_timeout_ms" "${shop_mode_arg[@]}" "${slow_shop_arg[@]}"
  fx_shop_port=$port
  echo "-- fixed rate (waitroomd on 127.0.0.1:$fx_wr_port; shop on 127.0.0.1:$fx_shop_port) --"
  "$bin/waitroom-sim" --server "http://127.0.0.1:$fx_wr_port" --admin-key "$admin_key" \
    --shop "http://127.0.0.1:$fx_shop_port" --queue sale-fixed --rate "$rate" --users "$users" --profile "$profile" \
    --bypass "$bypass" --replay "$replay" --greedy "$greedy" --quitters "$quitters" --label "Fixed rate ${rate}/s" \
    "${bands_arg[@]}" "${mode_arg[@]}" "${opening_arg[@]}" "${slow_sim_arg[@]}" --queue-config "$queue_config" \
    --users-csv "$out/without-users.csv" --out "$out/without.json"
elif [ "$with_only" = 0 ]; then
  start shop-noqueue "$bin/waitroom-shop" --listen 127.0.0.1:0 --no-queue \
    --pool "$pool" --service-ms "$service_ms" --pool-timeout-ms "$pool_timeout_ms" "${slow_shop_arg[@]}"
  nq_port=$port
  echo "-- without the line (shop on 127.0.0.1:$nq_port, no token check) --"
  "$bin/waitroom-sim" --no-queue --shop "http://127.0.0.1:$nq_port" --users "$users" \
    --profile "$profile" --bypass "$bypass" --replay "$replay" "${opening_arg[@]}" --users-csv "$out/without-users.csv" --out "$out/without.json"
fi

start waitroomd "$bin/waitroomd" --listen 127.0.0.1:0 --store "$store_arg" \
  --admin-key "$admin_key" --identity header:X-User-Id --token-secret "$secret" --log-level warn \
  "${push_wr_arg[@]}"
wr_port=$port
label_arg=()
if [ "$autotune" = 1 ]; then
  autotune_shop_arg=(--report-health --admin-key "$admin_key")
  label_arg=(--label "Autotune (min 10, max $((2 * ${rate%.*}))/s, target $((2 * service_ms)) ms)")
fi
start shop "$bin/waitroom-shop" --listen 127.0.0.1:0 \
  --waitroom "http://127.0.0.1:$wr_port" --queue sale --pool "$pool" \
  --service-ms "$service_ms" --pool-timeout-ms "$pool_timeout_ms" "${shop_mode_arg[@]}" \
  "${slow_shop_arg[@]}" "${autotune_shop_arg[@]}"
shop_port=$port
echo "-- with the line (waitroomd on 127.0.0.1:$wr_port, store $store; shop on 127.0.0.1:$shop_port) --"
rc=0
"$bin/waitroom-sim" --server "http://127.0.0.1:$wr_port" --admin-key "$admin_key" \
  --shop "http://127.0.0.1:$shop_port" --queue sale --rate "$rate" --users "$users" --profile "$profile" \
  --bypass "$bypass" --replay "$replay" --greedy "$greedy" --quitters "$quitters" \
  "${bands_arg[@]}" "${mode_arg[@]}" "${opening_arg[@]}" "${sale_arg[@]}" "${slow_sim_arg[@]}" \
  "${label_arg[@]}" --queue-config "${autotune_config:-$queue_config}" \
  --users-csv "$out/with-users.csv" --out "$out/with.json" $assert || rc=$?
# the server's own report of the run (API 1.3), saved for the report page
report_arg=()
if command -v curl >/dev/null; then
  rep_url="http://127.0.0.1:$wr_port/v1/admin/queues/sale/report"
  if curl -sf -H "Authorization: Bearer $admin_key" "$rep_url" >"$out/server-report.json" &&
     curl -sf -H "Authorization: Bearer $admin_key" "$rep_url?format=csv" >"$out/server-report.csv"; then
    report_arg=(--server-report "$out/server-report.json")
  else
    echo "demo.sh: no report from $rep_url" >&2; rm -f "$out/server-report.json" "$out/server-report.csv"
  fi
fi
verify_arg=()
if [ "$public_log" = 1 ]; then
  check_log "http://127.0.0.1:$wr_port" || { echo "demo.sh: the public log does not check (status $?)" >&2; rc=1; }
  verify_arg=(--verify "$out/verify.json")
fi

stop_all || rc=1

if [ -f "$out/with.json" ] && [ -f "$out/without.json" ]; then
  echo "-- report --"
  "$bin/waitroom-sim" report --with "$out/with.json" --without "$out/without.json" \
    --json "$out/report.json" --svg "$out/report.svg" "${verify_arg[@]}" "${report_arg[@]}"
  echo "wrote $out/report.json and $out/report.svg${report_arg:+ (linking $out/server-report.json, .csv)}"
fi
exit "$rc"
