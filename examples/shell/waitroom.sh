#!/bin/sh
# waitroom.sh - waitroom from a shell, with curl (docs/INTEGRATION.md).
#
#   WAITROOM=http://127.0.0.1:8080 examples/shell/waitroom.sh COMMAND ARGS
#
# A person (the visitor cookie kept in $WAITROOM_JAR, default ./waitroom.jar):
#   join QUEUE            join the line; prints the JSON answer
#   wait QUEUE            join, then ask again every retryAfterMs until
#                         admitted; prints the pass (the entry token)
# The shop (on waitroomd's own address; nginx keeps these routes private):
#   verify QUEUE TOKEN    prints 204 (live), 401 (none) or 403 (invalid)
#   consume QUEUE TOKEN   spends the pass: prints the JSON answer; exit 1 if refused
#   release QUEUE TOKEN   ends the session: prints 204, or 403 (no session)
#   health QUEUE LATENCY_MS ERROR_RATE
#                         autotune report ($WAITROOM_ADMIN_KEY); prints 204,
#                         or says that this waitroomd has no autotune (404)
#   invite QUEUE USER     an invite for an invite-only queue
#                         ($WAITROOM_INVITE_KEY; the waitroom-invite tool)
set -eu
WAITROOM=${WAITROOM:-http://127.0.0.1:8080}
JAR=${WAITROOM_JAR:-./waitroom.jar}
cmd=${1:?usage: waitroom.sh join|wait|verify|consume|release|health|invite ...}
q=${2:?queue name}

field() { # field NAME < json: a top-level string or number field
  python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print("" if v is None else v)' "$1"
}

case "$cmd" in
join)
  curl -sS -c "$JAR" -b "$JAR" -X POST "$WAITROOM/v1/queues/$q/entries"; echo ;;
wait)
  r=$(curl -sS -c "$JAR" -b "$JAR" -X POST "$WAITROOM/v1/queues/$q/entries")
  while :; do
    case $(printf '%s' "$r" | field status) in
    admitted) printf '%s\n' "$r" | field token; exit 0 ;;
    passthrough) echo "passthrough: the line is off, go straight on" >&2; exit 0 ;;
    waiting) ;;
    *) echo "unexpected answer: $r" >&2; exit 1 ;;
    esac
    ms=$(printf '%s' "$r" | field retryAfterMs)
    sleep "$(awk -v ms="${ms:-1000}" 'BEGIN { printf "%.3f", ms / 1000 }')"
    r=$(curl -sS -b "$JAR" "$WAITROOM/v1/queues/$q/entries/me")
  done ;;
verify)
  curl -sS -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer ${3:?token}" \
    "$WAITROOM/v1/queues/$q/tokens/verify" ;;
consume)
  out=$(curl -sS -w '\n%{http_code}' -X POST -H "Authorization: Bearer ${3:?token}" \
    "$WAITROOM/v1/queues/$q/tokens/consume")
  printf '%s\n' "$out" | sed '$d'
  [ "$(printf '%s\n' "$out" | tail -n 1)" = 200 ] ;;
release)
  curl -sS -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer ${3:?token}" \
    "$WAITROOM/v1/queues/$q/tokens/release" ;;
health)
  st=$(curl -sS -o /dev/null -w '%{http_code}' -X POST \
    -H "Authorization: Bearer ${WAITROOM_ADMIN_KEY:?admin key}" -H 'Content-Type: application/json' \
    -d "{\"latencyMs\":${3:?latency ms},\"errorRate\":${4:?error rate}}" \
    "$WAITROOM/v1/queues/$q/health")
  if [ "$st" = 404 ]; then echo "404: this waitroomd has no autotune (or no queue $q)"; else echo "$st"; fi ;;
invite)
  : "${WAITROOM_INVITE_KEY:?invite key}"
  WAITROOM_INVITE_KEY=$WAITROOM_INVITE_KEY waitroom-invite --queue "$q" "${3:?user id}" ;;
*)
  echo "unknown command $cmd" >&2; exit 2 ;;
esac
