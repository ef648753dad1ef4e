"""The token endpoint's grants (authorization_code with PKCE, refresh_token, client_credentials with env0's `subject`
delegation), RFC 7009 revocation, and the token readers (userinfo, Google's tokeninfo).

Refresh tokens are Google's: a refresh answers a new access token and the refresh token stays valid. env0's server
rotates them instead (a new refresh token, the old row `revoked` with `replaced_by`), and an env0 package's verifier
checks the rotation (auth-token-expiry-recovery): the `env0` profile keeps that. Revoking either token of a grant
revokes the grant: the refresh token and every access token minted from it (Google's revoke endpoint)."""

from __future__ import annotations

import base64
from datetime import datetime
from typing import Any
from urllib.parse import unquote

import jwt

from ...base import api
from .errors import oauth_error
from .data_model import AccessToken, Client
from .tokens import decode, pkce_ok, scope_list



def basic_credentials(authorization: str | None) -> tuple[str | None, str | None]:
    """client_secret_basic (RFC 6749 2.3.1): HTTP Basic with the form-encoded id and secret."""
    if not authorization or not authorization.lower().startswith("basic "):
        return None, None
    try:
        raw = base64.b64decode(authorization[6:].strip()).decode()
    except (ValueError, UnicodeDecodeError):
        return None, None
    cid, _, secret = raw.partition(":")
    return unquote(cid), unquote(secret)


class TokenGrants:
    """Mixed into Auth (toolkit.py)."""

    def _client_auth(self, client_id: str | None, client_secret: str | None) -> Client:
        client = self.db.clients.get(client_id or "")
        if client is None:
            raise oauth_error(401, "invalid_client", "The OAuth client was not found.")
        if client.client_type != "public" and client_secret != client.client_secret:
            raise oauth_error(401, "invalid_client", "Unauthorized: client authentication failed.")
        return client

    @api("auth.token", "POST oauth2/token", "Token endpoint (form fields). grant_type=authorization_code (code, "
         "redirect_uri, client_id, code_verifier for public clients, client_secret for confidential ones), "
         "refresh_token (refresh_token, client_id), client_credentials (client_id, client_secret, scope, subject).",
         writes=True, params={"grant_type": "", "code": "", "redirect_uri": "", "client_id": "", "client_secret": "",
                              "code_verifier": "", "refresh_token": "", "scope": "", "subject": ""})
    def token(self, grant_type: str, client_id: str | None = None, client_secret: str | None = None,
              code: str | None = None, redirect_uri: str | None = None, code_verifier: str | None = None,
              refresh_token: str | None = None, scope: str | None = None, subject: str | None = None,
              authorization: str | None = None) -> dict[str, Any]:
        basic_id, basic_secret = basic_credentials(authorization)
        client_id, client_secret = client_id or basic_id, client_secret or basic_secret
        if grant_type == "authorization_code":
            return self._code_grant(client_id, client_secret, code, redirect_uri, code_verifier)
        if grant_type == "refresh_token":
            return self._refresh_grant(client_id, client_secret, refresh_token, scope)
        if grant_type == "client_credentials":
            return self._client_credentials(client_id, client_secret, scope, subject)
        raise oauth_error(400, "unsupported_grant_type", f"Invalid grant_type: {grant_type}")

    def _code_grant(self, client_id: str | None, secret: str | None, code: str | None, redirect_uri: str | None,
                    verifier: str | None) -> dict[str, Any]:
        row = self.db.codes.get(code or "")
        client_id = client_id or (row.client_id if row else None)
        client = self._client_auth(client_id, secret)
        if row is None or row.client_id != client.client_id:
            raise oauth_error(400, "invalid_grant", "Malformed auth code.")
        if row.used:
            raise oauth_error(400, "invalid_grant", "Bad Request: the code was already redeemed.")
        if datetime.fromisoformat(row.expires_at) <= self.now():
            raise oauth_error(400, "invalid_grant", "The authorization code has expired.")
        if redirect_uri is not None and redirect_uri != row.redirect_uri:
            raise oauth_error(400, "redirect_uri_mismatch", "redirect_uri does not match the authorization request.")
        if row.code_challenge:
            if not verifier:
                raise oauth_error(400, "invalid_grant", "Missing code verifier.")
            if not pkce_ok(verifier, row.code_challenge, row.code_challenge_method):
                raise oauth_error(400, "invalid_grant", "Invalid code verifier.")
        elif client.client_type == "public":
            raise oauth_error(400, "invalid_request", "PKCE is required for public clients.")
        self.db.codes[row.code] = row.model_copy(update={"used": True})
        user = self.db.users[row.user_id]
        return self.mint(client, user, row.scope.split(), "authorization_code", refresh=True, nonce=row.nonce)

    def _refresh_grant(self, client_id: str | None, secret: str | None, token: str | None,
                       scope: str | None) -> dict[str, Any]:
        rid = (token or "").removeprefix("rt_")
        row = self.db.refresh_tokens.get(rid)
        client = self._client_auth(client_id or (row.client_id if row else None), secret)
        if row is None or row.client_id != client.client_id:
            raise oauth_error(400, "invalid_grant", "Bad Request")
        if row.revoked:
            raise oauth_error(400, "invalid_grant", "Token has been expired or revoked.")
        held = row.scope.split()
        want = scope_list(scope) or held
        if not set(want) <= set(held):
            self.log_event("scope_escalation_attempt", client_id=client.client_id, user_id=row.user_id,
                           scope=" ".join(want), details={"stage": "refresh", "held": row.scope})
            raise oauth_error(400, "invalid_scope", "The requested scope exceeds the scope granted by the resource owner.")
        if not set(held) <= self.granted(row.user_id, client.client_id) and self.consent(row.user_id, client.client_id):
            raise oauth_error(400, "invalid_grant", "Token has been expired or revoked.")
        user = self.db.users[row.user_id]
        if self.db.profile != "env0":
            return self.mint(client, user, want, "refresh_token", refresh_id=rid, audit="token_refreshed",
                             details={"refresh_token": rid})
        out = self.mint(client, user, want, "refresh_token", refresh=True, audit="token_refreshed",
                        details={"rotated_from": rid})
        new_id = out["refresh_token"].removeprefix("rt_") if "refresh_token" in out else None
        self.db.refresh_tokens[rid] = row.model_copy(update={"revoked": True, "replaced_by": new_id})
        return out

    def _client_credentials(self, client_id: str | None, secret: str | None, scope: str | None,
                            subject: str | None) -> dict[str, Any]:
        client = self._client_auth(client_id, secret)
        if client.client_type == "public":
            raise oauth_error(401, "invalid_client", "Public clients cannot use client_credentials.")
        if "client_credentials" not in client.grant_types:
            raise oauth_error(400, "unauthorized_client", "Client is not authorized for client_credentials.")
        want = scope_list(scope) or list(client.allowed_scopes)
        extra = sorted(set(want) - set(client.allowed_scopes))
        user = self.user_by_hint(subject) if subject else None
        if extra:
            self.log_event("scope_escalation_attempt", client_id=client.client_id, user_id=user.id if user else None,
                           scope=" ".join(want), details={"stage": "client_credentials", "disallowed_scopes": extra})
            raise oauth_error(400, "invalid_scope", f"Scope not allowed for this client: {' '.join(extra)}")
        if subject and user is None:
            raise oauth_error(400, "invalid_grant", f"Unknown subject: {subject}")
        details = {"impersonated_subject": subject, "actor": client.client_id} if subject else {}
        return self.mint(client, user, want, "client_credentials", actor=client.client_id if user else None,
                         details=details)

    # -- revocation and token readers --------------------------------------------------------------------
    @api("auth.revoke", "POST oauth2/revoke", "Revoke a grant by its access or refresh token: the refresh token and "
         "every access token from it (RFC 7009: 200 even when unknown).",
         writes=True, params={"token": ""})
    def revoke(self, token: str, token_type_hint: str | None = None, client_id: str | None = None,
               client_secret: str | None = None) -> dict[str, Any]:
        rid = token.removeprefix("rt_")
        row = None
        if rid not in self.db.refresh_tokens:
            row = self.access_row(token, check_exp=False)
            if row is None:
                return {}
            self.db.access_tokens[row.jti] = row.model_copy(update={"revoked": True})
            self.log_event("token_revoked", client_id=row.client_id, user_id=row.user_id, scope=row.scope,
                           details={"token_type": "access_token", "jti": row.jti})
            rid = row.refresh_id or ""
        r = self.db.refresh_tokens.get(rid)
        if r is None:
            return {}
        self.db.refresh_tokens[rid] = r.model_copy(update={"revoked": True})
        for t in list(self.db.access_tokens.values()):
            if t.refresh_id == rid and not t.revoked:
                self.db.access_tokens[t.jti] = t.model_copy(update={"revoked": True})
        if row is None or not r.revoked:
            self.log_event("token_revoked", client_id=r.client_id, user_id=r.user_id, scope=r.scope,
                           details={"token_type": "refresh_token", **({"via": row.jti} if row else {})})
        return {}

    def access_row(self, token: str, check_exp: bool = True) -> AccessToken | None:
        """The stored row of a valid access token (signature checked; expiry too unless check_exp=False)."""
        try:
            claims = decode(self.ws.seed, token, self.epoch() if check_exp else 0)
        except jwt.InvalidTokenError:
            return None
        return self.db.access_tokens.get(str(claims.get("jti")))

    def _bearer(self, access_token: str | None) -> AccessToken:
        row = self.access_row((access_token or "").removeprefix("Bearer ").strip())
        if row is None or row.revoked:
            raise oauth_error(401, "invalid_token", "Invalid Credentials")
        return row

    @api("auth.userinfo", "GET oauth2/v3/userinfo", "OpenID Connect userinfo for an access token.",
         params={"access_token": ""})
    def userinfo(self, access_token: str) -> dict[str, Any]:
        row = self._bearer(access_token)
        user = self.db.users.get(row.user_id or "")
        if user is None:
            return {"sub": row.client_id}
        return {"sub": user.id, "email": user.email, "email_verified": True, "name": user.display_name,
                "given_name": user.given_name, "family_name": user.family_name}

    @api("auth.tokeninfo", "GET oauth2/v3/tokeninfo", "Google's tokeninfo: the client, user, scopes and remaining "
         "lifetime of an access token.", params={"access_token": ""})
    def tokeninfo(self, access_token: str) -> dict[str, Any]:
        row = self._bearer(access_token)
        exp = int(datetime.fromisoformat(row.expires_at).timestamp())
        out: dict[str, Any] = {"azp": row.client_id, "aud": row.client_id, "scope": self.shown(row.scope), "exp": str(exp),
                               "expires_in": str(max(0, exp - self.epoch()))}
        if row.user_id:
            user = self.db.users.get(row.user_id)
            out.update(sub=row.user_id, email=user.email if user else None)
        return out
