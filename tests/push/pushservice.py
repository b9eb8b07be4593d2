#!/usr/bin/env python3
"""A stand-in Web Push service (RFC 8030), written from the RFCs alone, for
the sender's tests (and the server's, once it sends pushes).

It accepts POSTs to any path, and for each:
- checks the VAPID authorization (RFC 8292): `vapid t=<JWT>, k=<key>`,
  the JWT's header exactly {"typ":"JWT","alg":"ES256"}, its ES256
  signature (64-byte r || s) under k, `aud` = this service's origin as the
  client addressed it (scheme://Host), `exp` in the future and at most
  24 h ahead, `sub` a mailto: or https: URL (and the one expected, if
  set), k the expected server key (if set);
- checks the headers RFC 8030 and the contract require: TTL (a number),
  Urgency, Content-Encoding: aes128gcm, Topic (at most 32 base64url
  characters, when present);
- decrypts the body (RFC 8291 / RFC 8188: one record, rs 4096, idlen 65)
  with the subscription's private key and auth secret;
- records everything (time, path, headers, the plaintext, the verdicts,
  the connection it came on), then answers as the path's behaviour says.

Behaviour by the path's first segment (the rest is free):
  /ok/...          201
  /gone/...        410          /notfound/...   404
  /bad/...         400          /redirect/...   301 to /ok/redirected
  /rate/...        429 Retry-After: 1 the first time, then 201
  /ratelong/...    429 Retry-After: 30 (always)
  /ratedate/...    429 Retry-After as an HTTP date 1 s ahead, then 201
  /flaky/...       500 twice, then 201
  /down/...        500 always
  /never/...       reads the request and never answers (not counted in
                   max_concurrent: the client gives up on it)
  /slow/...        201 after 300 ms (to see how many are in flight)
A push the checks refuse is answered 403 (VAPID) or 400 (anything else),
so a test sees it as "failed" and the record says why.

    svc = PushService(ua_private, auth, expect_k=..., expect_sub=...)
    svc.start()              # HTTP on 127.0.0.1, svc.port
    svc.start(tls=(cert, key))   # HTTPS instead
    ... svc.records, svc.connections, svc.max_concurrent ...
    svc.stop()
"""
import base64
import json
import ssl
import struct
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

B64URL = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def b64d(s):
    """Strict base64url without padding."""
    if not s or any(c not in B64URL for c in s) or len(s) % 4 == 1:
        raise ValueError("not base64url without padding: %r" % s[:20])
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def b64e(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def hkdf(salt, ikm, info, n):
    return HKDF(algorithm=hashes.SHA256(), length=n, salt=salt, info=info).derive(ikm)


def decrypt(body, ua_private, auth):
    """RFC 8291 receiver: the plaintext of a one-record aes128gcm body."""
    if len(body) < 21 + 65 + 17:
        raise ValueError("body too short")
    salt, rs, idlen = body[:16], struct.unpack(">I", body[16:20])[0], body[20]
    if rs != 4096 or idlen != 65:
        raise ValueError("header: rs %d idlen %d" % (rs, idlen))
    as_pub_bytes = body[21:86]
    record = body[86:]
    if len(body) > 4096:
        raise ValueError("more than one record")
    as_pub = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), as_pub_bytes)
    ua_pub = ua_private.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    secret = ua_private.exchange(ec.ECDH(), as_pub)
    ikm = hkdf(auth, secret, b"WebPush: info\x00" + ua_pub + as_pub_bytes, 32)
    cek = hkdf(salt, ikm, b"Content-Encoding: aes128gcm\x00", 16)
    nonce = hkdf(salt, ikm, b"Content-Encoding: nonce\x00", 12)
    padded = AESGCM(cek).decrypt(nonce, record, None)
    stripped = padded.rstrip(b"\x00")
    if not stripped or stripped[-1] != 2:
        raise ValueError("no last-record delimiter 0x02")
    return stripped[:-1]


def check_vapid(value, origin, now, expect_k=None, expect_sub=None):
    """The claims of a valid `vapid t=..., k=...` value; raises ValueError."""
    if not value or not value.startswith("vapid "):
        raise ValueError("not a vapid authorization")
    params = {}
    for part in value[6:].split(","):
        k, _, v = part.strip().partition("=")
        params[k] = v
    if set(params) != {"t", "k"}:
        raise ValueError("params %r" % sorted(params))
    key = b64d(params["k"])
    if len(key) != 65 or key[0] != 4:
        raise ValueError("k is not a 65-byte uncompressed point")
    if expect_k is not None and key != expect_k:
        raise ValueError("k is not the server's key")
    h, c, s = params["t"].split(".")
    if json.loads(b64d(h)) != {"typ": "JWT", "alg": "ES256"}:
        raise ValueError("JWT header %r" % b64d(h))
    sig = b64d(s)
    if len(sig) != 64:
        raise ValueError("signature is %d bytes, not r||s" % len(sig))
    pub = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key)
    try:
        pub.verify(encode_dss_signature(int.from_bytes(sig[:32], "big"),
                                        int.from_bytes(sig[32:], "big")),
                   (h + "." + c).encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ValueError("bad ES256 signature")
    claims = json.loads(b64d(c))
    if claims.get("aud") != origin:
        raise ValueError("aud %r, want %r" % (claims.get("aud"), origin))
    exp = claims.get("exp")
    if not isinstance(exp, int) or exp <= now or exp > now + 24 * 3600:
        raise ValueError("exp %r not in (now, now + 24 h]" % exp)
    sub = claims.get("sub", "")
    if not (sub.startswith("mailto:") or sub.startswith("https://")):
        raise ValueError("sub %r" % sub)
    if expect_sub is not None and sub != expect_sub:
        raise ValueError("sub %r, want %r" % (sub, expect_sub))
    return claims


class PushService:
    def __init__(self, ua_private, auth, expect_k=None, expect_sub=None):
        self.ua_private = ua_private
        self.auth = auth
        self.expect_k = expect_k
        self.expect_sub = expect_sub
        self.records = []
        self.connections = 0
        self.concurrent = 0
        self.max_concurrent = 0
        self.seen = {}
        self.lock = threading.Lock()
        self.server = None
        self.tls = False

    @property
    def port(self):
        return self.server.server_address[1]

    def start(self, tls=None, port=0):
        svc = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                with svc.lock:
                    svc.connections += 1

            def log_message(self, *a):
                pass

            def do_POST(self):
                svc.handle(self)

            def do_GET(self):
                self.send_response(405)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls[0], tls[1])
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
            self.tls = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def answer(self, h, code, headers=()):
        self._done(h)
        h.send_response(code)
        for k, v in headers:
            h.send_header(k, v)
        h.send_header("Content-Length", "0")
        h.send_header("Connection", "close")
        h.end_headers()

    def handle(self, h):
        t = time.time()
        with self.lock:
            self.concurrent += 1
            self.max_concurrent = max(self.max_concurrent, self.concurrent)
        try:
            self._handle(h, t)
        finally:
            self._done(h)

    def _done(self, h):
        """The request stops counting as in flight: once, right before its
        answer is written (the client may start its next try the moment it
        reads the answer, before this thread returns), or when it ends
        without one."""
        with self.lock:
            if not getattr(h, "never", False) and not getattr(h, "counted_out", False):
                self.concurrent -= 1
                h.counted_out = True

    def _handle(self, h, t):
        n = int(h.headers.get("Content-Length", "0"))
        body = h.rfile.read(n) if n else b""
        host = h.headers.get("Host", "")
        origin = ("https://" if self.tls else "http://") + host
        rec = {"time": t, "path": h.path, "headers": {k.lower(): v for k, v in h.headers.items()},
               "errors": [], "payload": None, "claims": None}
        try:
            rec["claims"] = check_vapid(h.headers.get("Authorization"), origin, int(t),
                                        self.expect_k, self.expect_sub)
        except (ValueError, KeyError) as e:
            rec["errors"].append("vapid: %s" % e)
        hd = rec["headers"]
        if not hd.get("ttl", "").isdigit():
            rec["errors"].append("TTL %r" % hd.get("ttl"))
        if hd.get("content-encoding") != "aes128gcm":
            rec["errors"].append("Content-Encoding %r" % hd.get("content-encoding"))
        if hd.get("urgency") not in ("very-low", "low", "normal", "high"):
            rec["errors"].append("Urgency %r" % hd.get("urgency"))
        topic = hd.get("topic")
        if topic is not None and (len(topic) > 32 or any(c not in B64URL for c in topic)):
            rec["errors"].append("Topic %r" % topic)
        try:
            rec["payload"] = json.loads(decrypt(body, self.ua_private, self.auth))
        except (ValueError, InvalidTag) as e:
            rec["errors"].append("decrypt: %s" % (e or "bad tag"))
        with self.lock:
            self.records.append(rec)
            kind = h.path.split("/")[1] if h.path.count("/") >= 1 else ""
            count = self.seen.get(h.path, 0)
            self.seen[h.path] = count + 1
        if rec["errors"]:
            return self.answer(h, 403 if any(e.startswith("vapid") for e in rec["errors"]) else 400)
        if kind == "ok":
            return self.answer(h, 201, [("Location", "/m/1")])
        if kind == "gone":
            return self.answer(h, 410)
        if kind == "notfound":
            return self.answer(h, 404)
        if kind == "bad":
            return self.answer(h, 400)
        if kind == "redirect":
            return self.answer(h, 301, [("Location", "/ok/redirected")])
        if kind == "rate":
            return self.answer(h, 429, [("Retry-After", "1")]) if count == 0 else self.answer(h, 201)
        if kind == "ratelong":
            return self.answer(h, 429, [("Retry-After", "30")])
        if kind == "ratedate":
            if count == 0:
                return self.answer(h, 429, [("Retry-After", formatdate(t + 2, usegmt=True))])
            return self.answer(h, 201)
        if kind == "flaky":
            return self.answer(h, 500) if count < 2 else self.answer(h, 201)
        if kind == "down":
            return self.answer(h, 500)
        if kind == "never":
            with self.lock:  # abandoned by the client after its timeout: not counted
                self.concurrent -= 1
                h.never = True
            time.sleep(30)
            return
        if kind == "slow":
            time.sleep(0.3)
            return self.answer(h, 201)
        return self.answer(h, 404)
