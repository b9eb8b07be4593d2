// waitroom.js - Express middleware for a shop behind waitroom
// (docs/INTEGRATION.md). Node.js 18+ (global fetch); no other dependency.
//
//   const waitroom = require("./waitroom");
//   const gate = waitroom.gate({ api: "http://127.0.0.1:8080", page: "https://shop.example/", queue: "shop" });
//   app.get("/checkout/*", gate.verify, ...);          // page views: a live pass, not spent
//   app.post("/checkout/order", gate.consume, ...);     // the protected work: the pass spent, once
//   ... when the order is done: await gate.release(req) (sessions on)
//
// The pass (the entry token) comes as the cookie wr_token_<queue> (the
// queue page sets it when targetUrl is on the shop's host), as the query
// parameter wr_token (a targetUrl on another origin, tokenInQuery true),
// or as "Authorization: Bearer" / "X-Waitroom-Token" (an app or a
// single-page app calling the shop's API). Without a pass, or with one that
// is spent, expired or forged, page views are sent to the queue page with
// a return URL and API calls get 403 with the queue page's address.
// waitroomd's token routes (verify, consume, release) are called on its
// own address (api), which nginx keeps private; if waitroomd cannot be
// reached the gate fails closed (503), the same as failPolicy "closed".
"use strict";
const crypto = require("node:crypto");

function passOf(req, queue) {
  const auth = req.get("authorization") || "";
  if (auth.startsWith("Bearer ")) return auth.slice(7);
  if (req.get("x-waitroom-token")) return req.get("x-waitroom-token");
  if (typeof req.query.wr_token === "string") return req.query.wr_token;
  const cookies = req.get("cookie") || "";
  for (const part of cookies.split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === "wr_token_" + queue) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return null;
}

function gate({ api, page, queue, timeoutMs = 2000 }) {
  const base = api.replace(/\/$/, "") + "/v1/queues/" + encodeURIComponent(queue) + "/tokens/";
  const call = (route, method, token) =>
    fetch(base + route, {
      method,
      headers: token ? { authorization: "Bearer " + token } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });

  // Where someone without a pass goes: the queue page, then back here.
  function queueUrl(req) {
    const back = new URL(req.originalUrl, req.protocol + "://" + req.get("host"));
    back.searchParams.delete("wr_token");
    const u = new URL("q/" + encodeURIComponent(queue), page.replace(/\/?$/, "/"));
    u.searchParams.set("return", back.toString());
    return u.toString();
  }
  function refuse(req, res, reason) {
    if (req.method === "GET" && req.accepts(["html", "json"]) === "html") return res.redirect(302, queueUrl(req));
    return res.status(403).json({ error: "QUEUE_PASS_REQUIRED", reason, queueUrl: queueUrl(req) });
  }
  function unavailable(res, err) {
    res.set("Retry-After", "5").status(503).json({ error: "WAITROOM_UNAVAILABLE", message: String(err) });
  }

  return {
    queueUrl,
    // GET .../tokens/verify: 204 live (or the queue is off), 401 none, 403 invalid.
    async verify(req, res, next) {
      const token = passOf(req, queue);
      if (!token) return refuse(req, res, "missing");
      try {
        const r = await call("verify", "GET", token);
        if (r.status === 204) return next();
        if (r.status === 401 || r.status === 403) return refuse(req, res, "invalid");
        return unavailable(res, "verify answered " + r.status);
      } catch (err) {
        return unavailable(res, err);
      }
    },
    // POST .../tokens/consume: 200 {"valid":true,"userId"} once per pass.
    async consume(req, res, next) {
      const token = passOf(req, queue);
      if (!token) return refuse(req, res, "missing");
      try {
        const r = await call("consume", "POST", token);
        const body = await r.json().catch(() => ({}));
        if (r.status === 200 && body.valid) {
          req.waitroom = { token, userId: body.userId, passthrough: !!body.passthrough, failOpen: !!body.failOpen };
          return next();
        }
        if (r.status === 403) return refuse(req, res, body.reason || "invalid");
        return unavailable(res, "consume answered " + r.status);
      } catch (err) {
        return unavailable(res, err);
      }
    },
    // POST .../tokens/release: ends the session (sessionSeconds > 0) so the
    // next person gets the place. 204 ended, 403 noSession: both are fine.
    async release(req) {
      const token = (req.waitroom && req.waitroom.token) || passOf(req, queue);
      if (!token) return false;
      const r = await call("release", "POST", token);
      return r.status === 204;
    },
  };
}

// Autotune (queue field "autotune"): the shop reports its p95 latency and
// error rate; waitroomd moves the admission rate to keep the latency near
// the target. POST /v1/queues/{queue}/health with the admin key, 204 when
// taken. A waitroomd without autotune answers 404: the reporter says so
// once and stops. Returns a function that stops it.
function healthReporter({ api, queue, adminKey, sample, everyMs = 5000, log = console.log }) {
  const url = api.replace(/\/$/, "") + "/v1/queues/" + encodeURIComponent(queue) + "/health";
  let timer = null;
  async function report() {
    const { latencyMs, errorRate } = sample();
    try {
      const r = await fetch(url, {
        method: "POST",
        headers: { authorization: "Bearer " + adminKey, "content-type": "application/json" },
        body: JSON.stringify({ latencyMs, errorRate }),
        signal: AbortSignal.timeout(2000),
      });
      if (r.status === 404) {
        log("waitroom health report: 404, this waitroomd has no autotune; reports stopped");
        clearInterval(timer);
        return;
      }
      log("waitroom health report: " + r.status);
    } catch (err) {
      log("waitroom health report failed: " + err);
    }
  }
  timer = setInterval(report, everyMs);
  report();
  return () => clearInterval(timer);
}

// An invite for an invite-only queue (queue field inviteKey): an HS256 JWT
// with aud = the queue, sub = the user id, exp. The same as waitroom-invite.
function mintInvite(inviteKey, queue, userId, ttlSeconds = 86400) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  const head = b64({ alg: "HS256", typ: "JWT" });
  const body = b64({ aud: queue, sub: userId, iat: now, exp: now + ttlSeconds });
  const sig = crypto.createHmac("sha256", inviteKey).update(head + "." + body).digest("base64url");
  return head + "." + body + "." + sig;
}

module.exports = { gate, healthReporter, mintInvite, passOf };
