"""JWT helpers for the integration suite: base64url, decode, HS256 sign.

The suite checks the server's tokens against the contract (header, claims)
and forges tokens the server must refuse (other secret, alg none, expired).
"""
import base64
import hashlib
import hmac
import json
import os


def b64u_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64u_decode(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def decode(token: str):
    """Returns (header dict, payload dict, signature bytes, signing input)."""
    h, p, s = token.split(".")
    return (json.loads(b64u_decode(h)), json.loads(b64u_decode(p)), b64u_decode(s),
            (h + "." + p).encode())


def sign(header: dict, claims: dict, secret: bytes) -> str:
    h = b64u_encode(json.dumps(header, separators=(",", ":")).encode())
    p = b64u_encode(json.dumps(claims, separators=(",", ":")).encode())
    mac = hmac.new(secret, (h + "." + p).encode(), hashlib.sha256).digest()
    return h + "." + p + "." + b64u_encode(mac)


def unsigned(header: dict, claims: dict, sig: str = "") -> str:
    h = b64u_encode(json.dumps(header, separators=(",", ":")).encode())
    p = b64u_encode(json.dumps(claims, separators=(",", ":")).encode())
    return h + "." + p + "." + sig


def random_jti() -> str:
    return b64u_encode(os.urandom(16))


def claims_for(queue, user, iat, ttl, jti=None):
    return {"iss": "waitroom", "aud": queue, "sub": user, "jti": jti or random_jti(),
            "iat": iat, "exp": iat + ttl}


HS256 = {"alg": "HS256", "typ": "JWT"}


def verifies(token: str, secret: bytes) -> bool:
    _, _, sig, signing_input = decode(token)
    return hmac.compare_digest(hmac.new(secret, signing_input, hashlib.sha256).digest(), sig)
