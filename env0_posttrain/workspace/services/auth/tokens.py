"""Signed access and ID tokens (PyJWT), PKCE and scope names.

The signing key is an Ed25519 key derived from the workspace seed, and Ed25519 signatures are deterministic
(RFC 8032): the same seed, clock and counter give byte-identical tokens, which exact snapshot/restore and
replayed episodes need. Its public half is published at the JWKS URI, so any client can verify tokens.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from jwt.algorithms import OKPAlgorithm

ALG = "EdDSA"
GOOGLE_SCOPE = "https://www.googleapis.com/auth/"
FULL_MAIL = "https://mail.google.com/"
OIDC_SCOPES = ("openid", "email", "profile")


@functools.lru_cache(maxsize=256)
def signing_key(seed: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.blake2b(f"auth-signing|{seed}".encode(), digest_size=32).digest())


def key_id(seed: int) -> str:
    return hashlib.blake2b(f"auth-kid|{seed}".encode(), digest_size=10).hexdigest()


def jwks(seed: int) -> dict[str, Any]:
    jwk = OKPAlgorithm.to_jwk(signing_key(seed).public_key(), as_dict=True)
    return {"keys": [{**jwk, "kid": key_id(seed), "alg": ALG, "use": "sig"}]}


def encode(seed: int, claims: dict[str, Any]) -> str:
    return jwt.encode(claims, signing_key(seed), algorithm=ALG, headers={"kid": key_id(seed)})


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


def scope_list(scope: str | list[str] | None) -> list[str]:
    """A scope parameter (space- or comma-separated string, or list) as short names, in order, without repeats."""
    items = scope if isinstance(scope, list) else str(scope or "").replace(",", " ").split()
    return list(dict.fromkeys(short_scope(s) for s in items if s))
