// shop.js - a minimal Express shop behind waitroom (docs/INTEGRATION.md),
// run by tests/ops/run_examples.py against a real waitroomd.
//
//   WAITROOM_API=http://127.0.0.1:8080 WAITROOM_PAGE=http://127.0.0.1:8080/ \
//   WAITROOM_QUEUE=shop WAITROOM_ADMIN_KEY=... PORT=3000 node shop.js
//
// GET /checkout/ is a page behind the line (verify); POST /checkout/order
// is the protected work (consume), which ends the session (release) when
// the order is done; the health reporter tells waitroomd how the shop does.
"use strict";
const express = require("express");
const waitroom = require("./waitroom");

const env = process.env;
const app = express();
const gate = waitroom.gate({ api: env.WAITROOM_API, page: env.WAITROOM_PAGE, queue: env.WAITROOM_QUEUE });

const latencies = [];
let failures = 0;
let requests = 0;

app.get("/checkout/", gate.verify, (req, res) => res.type("html").send("<h1>Checkout</h1>"));
app.post("/checkout/order", gate.consume, async (req, res) => {
  const t0 = Date.now();
  requests++;
  try {
    // ... the order: stock, payment ...
    const released = await gate.release(req);
    res.json({ ordered: true, userId: req.waitroom.userId, released });
  } catch (err) {
    failures++;
    res.status(500).json({ error: "ORDER_FAILED" });
  } finally {
    latencies.push(Date.now() - t0);
  }
});

function sample() {
  const sorted = latencies.splice(0).sort((a, b) => a - b);
  const p95 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] : 0;
  const errorRate = requests ? failures / requests : 0;
  failures = requests = 0;
  return { latencyMs: p95, errorRate };
}

const server = app.listen(Number(env.PORT || 0), "127.0.0.1", () => {
  console.log("listening on 127.0.0.1:" + server.address().port);
  if (env.WAITROOM_ADMIN_KEY) {
    waitroom.healthReporter({ api: env.WAITROOM_API, queue: env.WAITROOM_QUEUE, adminKey: env.WAITROOM_ADMIN_KEY, sample });
  }
});
