"""Signed access and ID tokens (PyJWT), PKCE and scope names.

Access tokens are signed with an Ed25519 key derived from the workspace seed; ID tokens with RS256 (what OIDC
requires every provider to offer and Google signs with), by an RSA key whose primes sympy finds from a generator
seeded the same way. Both signatures are deterministic (RFC 8032; RSASSA-PKCS1-v1_5): the same seed, clock and
counter give byte-identical tokens, which exact snapshot/restore and replayed episodes need. Both public keys are
published at the JWKS URI, so any client can verify either kind of token.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from jwt.algorithms import OKPAlgorithm, RSAAlgorithm

ALG = "EdDSA"  # access tokens
ID_ALG = "RS256"  # ID tokens
GOOGLE_SCOPE = "https://www.googleapis.com/auth/"
FULL_MAIL = "https://mail.google.com/"
OIDC_SCOPES = ("openid", "email", "profile")
SCOPE_FILE = Path(__file__).with_name("google_scopes.json")  # written by bench/google_scopes.py
_LONG = {"gmail.full": FULL_MAIL, "calendar.full": GOOGLE_SCOPE + "calendar", "drive.full": GOOGLE_SCOPE + "drive",
         "docs.full": GOOGLE_SCOPE + "documents", "docs.readonly": GOOGLE_SCOPE + "documents.readonly",
         "email": GOOGLE_SCOPE + "userinfo.email", "profile": GOOGLE_SCOPE + "userinfo.profile"}


@functools.lru_cache(maxsize=256)
def signing_key(seed: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.blake2b(f"auth-signing|{seed}".encode(), digest_size=32).digest())


def key_id(seed: int) -> str:
    return hashlib.blake2b(f"auth-kid|{seed}".encode(), digest_size=10).hexdigest()


@functools.lru_cache(maxsize=16)
def rsa_key(seed: int) -> rsa.RSAPrivateKey:
    """A 2048-bit RSA key from the seed: two primes sympy finds above seeded random numbers (0.2-1 s, once per seed
    and process)."""
    import random

    import sympy

    rng, e = random.Random(f"auth-rsa|{seed}"), 65537

    def prime() -> int:
        while True:
            p = int(sympy.nextprime(rng.getrandbits(1024) | (3 << 1022)))
            if (p - 1) % e:
                return p

    p, q = prime(), prime()
    d = pow(e, -1, (p - 1) * (q - 1))
    return rsa.RSAPrivateNumbers(p, q, d, rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q), rsa.rsa_crt_iqmp(p, q),
                                 rsa.RSAPublicNumbers(e, p * q)).private_key()


def jwks(seed: int) -> dict[str, Any]:
    okp = OKPAlgorithm.to_jwk(signing_key(seed).public_key(), as_dict=True)
    rsa_jwk = RSAAlgorithm.to_jwk(rsa_key(seed).public_key(), as_dict=True)
    return {"keys": [{**rsa_jwk, "kid": key_id(seed) + "r", "alg": ID_ALG, "use": "sig"},
                     {**okp, "kid": key_id(seed), "alg": ALG, "use": "sig"}]}


def encode(seed: int, claims: dict[str, Any]) -> str:
    return jwt.encode(claims, signing_key(seed), algorithm=ALG, headers={"kid": key_id(seed)})


def encode_id_token(seed: int, claims: dict[str, Any]) -> str:
    return jwt.encode(claims, rsa_key(seed), algorithm=ID_ALG, headers={"kid": key_id(seed) + "r"})


def decode(seed: int, token: str, now: int) -> dict[str, Any]:
    """Verify signature and expiry against `now` (epoch seconds, the auth clock). Raises jwt.InvalidTokenError;
    jwt.ExpiredSignatureError when only the expiry fails."""
    claims = jwt.decode(token, signing_key(seed).public_key(), algorithms=[ALG], options={"verify_exp": False,
                        "verify_aud": False, "verify_iat": False, "verify_nbf": False})
    if int(claims.get("exp", 0)) <= now:
        raise jwt.ExpiredSignatureError("Signature has expired")
    return claims


def unverified(token: str) -> dict[str, Any]:
    try:
        return jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        return {}


def pkce_ok(verifier: str, challenge: str, method: str | None) -> bool:
    """RFC 7636 4.6: S256 compares BASE64URL(SHA256(verifier)) without padding; plain compares as is."""
    if (method or "plain") == "S256":
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii", "replace")).digest()).rstrip(b"=")
        return hmac.compare_digest(digest.decode(), challenge)
    return hmac.compare_digest(verifier, challenge)


def short_scope(s: str) -> str:
    """Google's scope URLs to env0's short names: .../auth/gmail.readonly -> gmail.readonly, mail.google.com -> gmail.full,
    .../auth/calendar -> calendar.full, .../auth/documents -> docs.full."""
    if s == FULL_MAIL:
        return "gmail.full"
    if s.startswith(GOOGLE_SCOPE):
        rest = s[len(GOOGLE_SCOPE):]
        return {"calendar": "calendar.full", "drive": "drive.full", "documents": "docs.full",
                "documents.readonly": "docs.readonly", "userinfo.email": "email",
                "userinfo.profile": "profile"}.get(rest, rest)
    return s


@functools.cache
def google_scopes() -> dict[str, tuple[str, ...]]:
    """method id -> the scope URLs its discovery document lists (Gmail, Calendar, Drive, Docs, Admin Directory)."""
    return {k: tuple(v) for k, v in json.loads(SCOPE_FILE.read_text())["methods"].items()}


@functools.cache
def _google_urls() -> frozenset[str]:
    return frozenset(u for scopes in google_scopes().values() for u in scopes) | frozenset(_LONG.values())


def long_scope(s: str) -> str:
    """A short name back to Google's scope URL (what Google's token endpoint answers); any other scope (openid,
    Stripe's, Slack's, an unknown one) as it is."""
    if s in _LONG:
        return _LONG[s]
    return GOOGLE_SCOPE + s if GOOGLE_SCOPE + s in _google_urls() else s


def scope_list(scope: str | list[str] | None) -> list[str]:
    """A scope parameter (space- or comma-separated string, or list) as short names, in order, without repeats."""
    items = scope if isinstance(scope, list) else str(scope or "").replace(",", " ").split()
    return list(dict.fromkeys(short_scope(s) for s in items if s))
