#!/usr/bin/env python3
"""The Web Push sender end to end: tests/push/push_e2e (the sender,
http/pushsend.c, with the subscription, payload and Topic modules) against
pushservice.py (a stand-in push service that checks VAPID and decrypts
every message), on loopback, host names from a hosts file.

Checked:
- every message the stand-in got: VAPID valid (ES256 r||s under k = the
  server's key, aud = the origin addressed, exp within 24 h, sub), TTL,
  Urgency high, Content-Encoding aes128gcm, Topic (32 base64url, the same
  for one person), the body decrypted into the contract's JSON, in the
  subscriber's language;
- answers: 201 delivered, 410/404 gone, 400 failed, 301 failed and not
  followed; 429 retried after Retry-After (seconds and an HTTP date), 500
  retried with backoff, a service that never answers timed out per try,
  all of them never past the deadline; a Retry-After past the deadline
  ends the message at once;
- TLS: verified against the test CA, the host name checked (a certificate
  for another name is never sent a request);
- addresses: a name resolving to loopback, a name with one private
  address among public ones, a private IP literal, an IPv4-mapped IPv6
  literal, a port other than 443, and http:// to an unlisted host: failed
  with no connection attempt (tries 0) and no request seen;
- at most 4 in flight (the driver's bound) at the stand-in; a name with
  two addresses, one refusing connections: delivered through the other;
  a sender with max_queued 1 refuses a second message;
- every message answered exactly once, the one in flight at the end
  answered "canceled" by the sender's free.

    test_push_e2e.py --bin build/push_e2e
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pushservice import B64URL, PushService, b64e  # noqa: E402
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

FAILED = []
SUBJECT = "mailto:ops@shop.example"


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))
    if not cond:
        FAILED.append(name)


def make_ca(d):
    """A CA and a certificate for push.test (not wrong.test) signed by it."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "push e2e CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(1)
          .not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "push.test")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("push.test")]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = {n: os.path.join(d, n) for n in ("ca.pem", "cert.pem", "key.pem")}
    open(paths["ca.pem"], "wb").write(ca.public_bytes(serialization.Encoding.PEM))
    open(paths["cert.pem"], "wb").write(cert.public_bytes(serialization.Encoding.PEM))
    open(paths["key.pem"], "wb").write(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return paths


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="push-e2e-")
    ua = ec.generate_private_key(ec.SECP256R1())
    ua_pub = ua.public_key().public_bytes(serialization.Encoding.X962,
                                          serialization.PublicFormat.UncompressedPoint)
    auth = os.urandom(16)
    vapid = ec.generate_private_key(ec.SECP256R1())
    vapid_pub = vapid.public_key().public_bytes(serialization.Encoding.X962,
                                                serialization.PublicFormat.UncompressedPoint)
    key_path = os.path.join(d, "vapid.pem")  # SEC 1, as `openssl ecparam -genkey` writes
    open(key_path, "wb").write(vapid.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption()))
    tls = make_ca(d)
    hosts = os.path.join(d, "hosts")
    open(hosts, "w").write(
        "127.0.0.1 push.test\n127.0.0.1 wrong.test\n127.0.0.1 evil.test\n"
        "192.0.2.10 mixed.test\n10.0.0.7 mixed.test\n"
        "127.0.0.2 multi.test\n127.0.0.1 multi.test\n")

    svc = PushService(ua, auth, expect_k=vapid_pub, expect_sub=SUBJECT).start()
    tsvc = PushService(ua, auth, expect_k=vapid_pub, expect_sub=SUBJECT).start(
        tls=(tls["cert.pem"], tls["key.pem"]))
    start = time.time()
    try:
        p = subprocess.run(
            [args.bin, "--http-port", str(svc.port), "--tls-port", str(tsvc.port),
             "--p256dh", b64e(ua_pub), "--auth", b64e(auth), "--key", key_path,
             "--subject", SUBJECT, "--ca", tls["ca.pem"], "--hosts", hosts],
            capture_output=True, text=True, timeout=120)
    finally:
        time.sleep(0.1)
        svc.stop()
        tsvc.stop()
    sys.stderr.write(p.stderr)
    check("driver exit 0 (every push answered exactly once)", p.returncode == 0, p.returncode)
    res = {}
    t0 = start
    for line in p.stdout.splitlines():
        r = json.loads(line)
        if "t0" in r:
            t0 = r["t0"] / 1000.0
            continue
        if "limit" in r:
            check("max_queued 1: the second push refused", r["limit"] == ["WR_OK", "WR_ELIMIT"],
                  r)
            continue
        check("one answer for " + r["name"], r["name"] not in res)
        res[r["name"]] = r
    recs = svc.records + tsvc.records
    by_path = {}
    for r in recs:
        by_path.setdefault(r["path"], []).append(r)

    def outcome(name, want, why=None, tries=None, status=None):
        r = res.get(name)
        if not r:
            return check(name + " answered", False, "no answer")
        check("%s: %s" % (name, want), r["outcome"] == want, r)
        if why is not None:
            check("%s: why %s" % (name, why), r["why"] == why, r)
        if tries is not None:
            check("%s: %d tries" % (name, tries), r["tries"] == tries, r)
        if status is not None:
            check("%s: status %d" % (name, status), r["status"] == status, r)
        return r

    # every message seen was well formed
    for r in recs:
        check("stand-in checks of %s" % r["path"], not r["errors"], r["errors"])
        hd = r["headers"]
        check("Urgency high on %s" % r["path"], hd.get("urgency") == "high")
        t = hd.get("topic", "")
        check("Topic on %s" % r["path"], len(t) == 32 and all(c in B64URL for c in t), t)
    # delivered, in the subscriber's language, with the contract's JSON
    r = outcome("ok", "delivered", "ok", 1, 201)
    ok = by_path.get("/ok/1", [])
    check("ok: one request", len(ok) == 1, len(ok))
    if ok:
        pl = ok[0]["payload"] or {}
        check("ok: payload keys in order",
              list(pl) == ["queue", "status", "title", "body", "url", "expiresAt"], list(pl))
        check("ok: payload values", pl.get("queue") == "sale" and pl.get("status") == "admitted"
              and pl.get("url") == "/q/sale" and isinstance(pl.get("expiresAt"), int), pl)
        check("ok: Korean title", pl.get("title") == "차례가 되었습니다", pl.get("title"))
        ttl = int(ok[0]["headers"]["ttl"])
        check("ok: TTL = seconds to the pass's expiry", 17 <= ttl <= 20, ttl)
        check("ok: aud is the origin", ok[0]["claims"]["aud"] == "http://push.test:%d" % svc.port,
              ok[0]["claims"])
        check("ok: Topic as the driver made it", ok[0]["headers"].get("topic") == r["topic"])
    outcome("closing", "delivered", "ok", 1, 201)
    cl = by_path.get("/ok/closing", [])
    if cl:
        pl = cl[0]["payload"] or {}
        check("closing: TTL 3600", cl[0]["headers"]["ttl"] == "3600", cl[0]["headers"]["ttl"])
        check("closing: payload", pl.get("status") == "closed" and pl.get("reason") == "soldOut"
              and pl.get("title") == "Sold out" and "expiresAt" not in pl, pl)
        if ok:
            check("closing: the same Topic for the same person",
                  cl[0]["headers"].get("topic") == ok[0]["headers"].get("topic"))
    check("Topic differs between people",
          res.get("ok", {}).get("topic") != res.get("gone", {}).get("topic"))
    r = outcome("tls", "delivered", "ok", 1, 201)
    tl = by_path.get("/ok/tls", [])
    check("tls: one request, French", len(tl) == 1 and tl[0]["payload"]["title"] == "C’est votre tour",
          tl)
    if tl:
        check("tls: aud https origin", tl[0]["claims"]["aud"] == "https://push.test:%d" % tsvc.port)
    r = outcome("tlsname", "expired", "deadline")
    check("tlsname: connections tried, no request", r and r["tries"] >= 2
          and not by_path.get("/ok/wrongname"), (r, by_path.get("/ok/wrongname")))
    outcome("gone", "gone", "status", 1, 410)
    outcome("notfound", "gone", "status", 1, 404)
    outcome("bad", "failed", "status", 1, 400)
    outcome("redirect", "failed", "redirect", 1, 301)
    check("redirect: not followed", not by_path.get("/ok/redirected"))
    for name, gap in (("rate", 0.95), ("ratedate", 0.95)):
        r = outcome(name, "delivered", "ok", 2, 201)
        check(name + ": one retry", r and r["retries"] == 1, r)
        tr = by_path.get("/%s/1" % name, [])
        check(name + ": waited Retry-After", len(tr) == 2 and tr[1]["time"] - tr[0]["time"] >= gap,
              [x["time"] for x in tr])
    r = outcome("flaky", "delivered", "ok", 3, 201)
    fl = by_path.get("/flaky/1", [])
    check("flaky: backoff 200 then 400 ms", len(fl) == 3 and fl[1]["time"] - fl[0]["time"] >= 0.18
          and fl[2]["time"] - fl[1]["time"] >= 0.38, [x["time"] for x in fl])
    outcome("ratelong", "expired", "deadline", 1, 429)
    check("ratelong: never asked again", len(by_path.get("/ratelong/1", [])) == 1)
    r = outcome("down", "expired", "deadline", status=500)
    dn = by_path.get("/down/1", [])
    # retried until the deadline: at least one retry begun, every try seen
    # by the stand-in. (Not "3 tries": on a loaded machine a run's first
    # try answered so late that its retry was due after the deadline: 1
    # try, 1 retry, expired at 2,046 ms. The backoff's schedule is
    # test_pushanswer's test_backoff, and "flaky" above checks its 200 and
    # 400 ms end to end.)
    check("down: retried until the deadline",
          r and r["retries"] >= 1 and len(dn) == r["tries"], (r, len(dn)))
    # a try starts before the deadline (its request reaches the stand-in a
    # little later) and may run its course (at most 700 ms here); none after
    check("down: no try at or after the deadline (2 s)",
          dn and all(x["time"] < t0 + 2.0 + 0.3 for x in dn), [x["time"] - t0 for x in dn])
    check("down: answered once the last try ended", r and r["ms"] < 2000 + 700 + 1000, r)
    r = outcome("never", "expired", "deadline")
    check("never: each try timed out (700 ms), retried", r and r["tries"] >= 2, r)
    nv = by_path.get("/never/1", [])
    check("never: no try at or after the deadline (2.5 s)",
          nv and all(x["time"] < t0 + 2.5 + 0.3 for x in nv), [x["time"] - t0 for x in nv])
    check("never: answered once the last try timed out", r and r["ms"] < 2500 + 700 + 1000, r)
    for name in ("evil", "mixed", "literal", "mapped"):
        outcome(name, "failed", "address", 0)
    outcome("port", "failed", "port", 0)
    outcome("scheme", "failed", "scheme", 0)
    for path in ("/ok/evil", "/ok/mixed", "/ok/literal", "/ok/mapped", "/ok/port", "/ok/scheme"):
        check("no request for " + path, not by_path.get(path))
    r = outcome("multi", "delivered", "ok")
    check("multi: an address that refuses the connection, then the next",
          r and r["tries"] <= 2 and len(by_path.get("/ok/multi", [])) == 1, r)
    outcome("unresolved", "expired", "deadline", 0)
    outcome("late", "expired", "deadline", 0)
    for i in range(1, 9):
        # answered after 300 ms against a 700 ms try timeout: one try, or
        # two when a loaded machine held the stand-in past the timeout (CI)
        r = outcome("slow%d" % i, "delivered", "ok", None, 201)
        check("slow%d: 1 try, 2 at most" % i, r and r["tries"] in (1, 2), r)
    check("at most 4 in flight", 1 <= svc.max_concurrent <= 4, svc.max_concurrent)
    outcome("cancel", "canceled", "shutdown")
    outcome("tiny", "canceled", "shutdown", 0)
    print("%d checks failed" % len(FAILED) if FAILED else "all checks passed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
