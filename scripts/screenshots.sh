#!/usr/bin/env bash
# Regenerates the README's pictures of the pages from the browser tests:
# docs/img/queue.png (the queue page on a phone), docs/img/dashboard.png
# (the dashboard with its history charts) and docs/img/dashboard-autotune.png
# (an autotuned queue's charts) from tests/browser/run.mjs, and
# docs/img/queue-ar.png (waiting, in Arabic), queue-prequeue.png,
# queue-soldout.png (previews on a phone) and queue-brand.png (the
# examples/page template, branded) from tests/browser/brand.mjs, and
# docs/img/queue-presale.png (a presale line) and dashboard-codes.png (a
# queue's priority lines and presale codes) from tests/browser/groups.mjs. Each
# runner, given --update-docs, runs all its tests in headless Chromium
# (playwright-core, as CTest does) and, when all pass, copies their
# screenshots there. Then it writes docs/img/screenshots.sha256, the hashes
# of the page sources (src/http/web/) the pictures were taken of: CTest
# docs_screenshots fails when those sources change and the pictures do not,
# so they cannot go stale silently.
#
#   scripts/screenshots.sh [BUILD]     (default build; make builds it)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -x "$build/waitroomd" ] || { echo "no $build/waitroomd: run make first" >&2; exit 1; }
node tests/browser/run.mjs --waitroomd "$build/waitroomd" --update-docs
node tests/browser/brand.mjs --waitroomd "$build/waitroomd" --update-docs
node tests/browser/groups.mjs --waitroomd "$build/waitroomd" --update-docs
sha256sum src/http/web/* examples/page/* > docs/img/screenshots.sha256
echo "docs/img/*.png and docs/img/screenshots.sha256 updated: commit them"
