#!/usr/bin/env bash
# Installs the Debian packages that waitroom's build and tests need, when
# they are missing. Runs as root, or through sudo. Safe to run repeatedly:
# it does nothing when everything is present.
# Usage: scripts/deps.sh [build]   (build: only what building and `make run`
# need; no argument: also everything the tests need)
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config
  libevent-dev libhiredis-dev libjansson-dev libssl-dev libinih-dev libcmocka-dev # libevent-dev: libevent_openssl too
  node-llhttp # llhttp's C sources (the HTTP parser), compiled into the build
  redis-server redis-tools python3 curl # redis-tools: redis-cli --cluster create (cluster tests)
)
if [ "${1:-}" != build ]; then
  pkgs+=(
    valgrind clang libclang-rt-14-dev # valgrind_integration, fuzz_short (libFuzzer): they skip-pass without these
    chromium fonts-nanum nodejs npm   # browser tests: playwright-core drives chromium; Korean font
    fonts-wqy-microhei fonts-thai-tlwg # the page's Chinese, Japanese and Thai (brand.mjs: 360 px widths)
    nginx-light                       # nginx_gate: examples/nginx/waitroom.conf in front of waitroomd;
                                      # make bench: the nginx reference
    wrk                               # make bench: the load generator
    systemd mandoc                    # systemd_unit (systemd-analyze verify), man_page (mandoc -T lint)
    openssl                           # store_redis_io, test_redis_prod: make a CA and certificates at run time
    python3-prometheus-client         # integration test_metrics: /metrics read by the real Prometheus parser
    redis-sentinel                    # test_redis_prod: Sentinel failover
    debhelper lintian mmdebstrap      # deb_build (make deb: dpkg-buildpackage, dh, lintian),
                                      # deb_install (a clean Debian 12 chroot)
    prometheus                        # prometheus_rules: promtool check rules / test rules
    python3-flask                     # shop_examples: the Flask example (examples/python)
    python3-cryptography              # verify_e2e (the log stand-in's Ed25519), push_e2e and
                                      # integration test_push (the push service stand-in's P-256)
  )
fi
if [ "${WR_DEPS_EXTRA:-}" != "" ]; then
  # shellcheck disable=SC2206
  pkgs+=(${WR_DEPS_EXTRA})
fi

missing=()
for p in "${pkgs[@]}"; do
  # npm also comes inside other node builds (NodeSource's nodejs bundles it):
  # a working npm command counts as installed, so apt never fights them.
  if [ "$p" = npm ] && command -v npm >/dev/null; then
    continue
  fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "deps: missing packages (${missing[*]}) and not root; install them or run as root" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The package starts a system redis-server on 6379; tests never use it.
fi

# The browser tests' npm packages (tests/browser/package.json: playwright-core,
# axe-core), when node_modules lacks one; the runners also do this.
if [ "${1:-}" != build ] && command -v npm >/dev/null; then
  web=tests/browser
  cd "$(dirname "$0")/.."
  if [ ! -d $web/node_modules/playwright-core ] || [ ! -f $web/node_modules/axe-core/axe.min.js ]; then
    echo "deps: npm ci in $web" >&2
    (cd $web && npm ci --no-audit --no-fund >/dev/null)
  fi
fi
