"""The OAuth 2.0 / OIDC flows: authorize (with env0's auto-consent and consent screen), web login, token, revoke.

Handlers answer JSON for the agent; the HTTP adapter (workspace/auth_http.py) turns `redirect` into a 302 with
a Location header, `consent_required` / `login_required` into the HTML pages, and `session` into the cookie.
Per RFC 6749 4.1.2.1, an unknown client or redirect URI is answered directly, never redirected to.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit


from ...base import api
from .errors import oauth_error
from .data_model import AuthCode, Client, Consent, User, WebSession
from .tokens import OIDC_SCOPES, jwks, scope_list


CODE_TTL = timedelta(minutes=10)
SESSION_COOKIE = "env_0_auth_session"


def registered(client: Client, uri: str) -> bool:
    """`uri` is one of the client's redirect URIs; a loopback one matches on any port (RFC 8252 7.3: a native app
    listens on whatever port it gets, as Google's installed-app flow does)."""
    if uri in client.redirect_uris:
        return True
    u = urlsplit(uri)
    if u.scheme != "http" or u.hostname not in ("127.0.0.1", "localhost", "::1"):
        return False
    return any((r.scheme, r.hostname, r.path or "/") == (u.scheme, u.hostname, u.path or "/")
               for r in map(urlsplit, client.redirect_uris))


def _redirect(uri: str, params: dict[str, Any]) -> dict[str, Any]:
    params = {k: v for k, v in params.items() if v is not None}
    return {"redirect": uri + ("&" if "?" in uri else "?") + urlencode(params), **params}


class OAuthFlows:
    """Mixed into Auth (toolkit.py)."""

    @api("auth.discovery", "GET .well-known/openid-configuration", "The OpenID Connect discovery document: endpoints, "
         "scopes, grant types, PKCE methods.")
    def discovery(self, issuer: str | None = None) -> dict[str, Any]:
        base = (issuer or self.issuer).rstrip("/")
        scopes = sorted({s for c in self.db.clients.values() for s in c.allowed_scopes} | set(OIDC_SCOPES))
        return {"issuer": base, "authorization_endpoint": f"{base}/o/oauth2/v2/auth",
                "token_endpoint": f"{base}/oauth2/token", "revocation_endpoint": f"{base}/oauth2/revoke",
                "userinfo_endpoint": f"{base}/oauth2/v3/userinfo", "jwks_uri": f"{base}/oauth2/v3/certs",
                "response_types_supported": ["code"], "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"], "scopes_supported": scopes,
                "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
                "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                "code_challenge_methods_supported": ["plain", "S256"],
                "claims_supported": ["aud", "email", "email_verified", "exp", "iat", "iss", "name", "sub"]}

    @api("auth.certs", "GET oauth2/v3/certs", "The JSON Web Key Set that verifies this server's tokens.")
    def certs(self) -> dict[str, Any]:
        return jwks(self.ws.seed)

    # -- authorization endpoint ----------------------------------------------------------------------
    @api("auth.authorize", "GET o/oauth2/v2/auth", "Authorization request (code flow). With consent on file and "
         "login_hint, answers a redirect to redirect_uri with ?code=; otherwise the consent (or login) screen.",
         writes=True, params={"client_id": "", "redirect_uri": "", "response_type": "code", "scope": "space-separated",
                              "state": "", "login_hint": "user id or email", "code_challenge": "PKCE (S256)",
                              "code_challenge_method": "S256 or plain",
                              "session": "a web/login session (HTTP: the env_0_auth_session cookie)"})
    def authorize(self, client_id: str, redirect_uri: str | None = None, response_type: str = "code",
                  scope: str = "", state: str | None = None, login_hint: str | None = None,
                  code_challenge: str | None = None, code_challenge_method: str | None = None,
                  nonce: str | None = None, prompt: str | None = None, access_type: str | None = None,
                  include_granted_scopes: str | None = None, session: str | None = None) -> dict[str, Any]:
        client = self.db.clients.get(client_id)
        if client is None:
            raise oauth_error(401, "invalid_client", f"The OAuth client was not found: {client_id}")
        uri = redirect_uri or (client.redirect_uris[0] if len(client.redirect_uris) == 1 else None)
        if uri is None or not registered(client, uri):
            raise oauth_error(400, "redirect_uri_mismatch", f"The redirect URI in the request, {redirect_uri}, does not match "
                       f"the ones authorized for the OAuth client {client_id}.")
        if response_type != "code":
            return _redirect(uri, {"error": "unsupported_response_type", "state": state})
        if "authorization_code" not in client.grant_types:
            return _redirect(uri, {"error": "unauthorized_client", "state": state})
        scopes = scope_list(scope)
        if not scopes:
            return _redirect(uri, {"error": "invalid_request", "error_description": "Missing required parameter: scope",
                                   "state": state})
        sess = self.db.sessions.get(session or "")
        user = self.user_by_hint(login_hint) or (self.db.users.get(sess.user_id) if sess else None)
        uid = user.id if user else None
        if user is not None and str(include_granted_scopes).lower() == "true":
            # incremental authorization: the new code covers the user's earlier grants to this client too
            held = sorted(self.granted(user.id, client_id) & set(client.allowed_scopes))
            scopes = list(dict.fromkeys([*held, *scopes]))
        extra = sorted(set(scopes) - set(client.allowed_scopes))
        if extra:
            self.log_event("scope_escalation_attempt", client_id=client_id, user_id=uid, scope=" ".join(scopes),
                           details={"stage": "authorize", "disallowed_scopes": extra})
            return _redirect(uri, {"error": "invalid_scope", "error_description": f"Scope not allowed for this client: "
                                   f"{' '.join(extra)}", "state": state})
        if client.client_type == "public" and not code_challenge:
            return _redirect(uri, {"error": "invalid_request",
                                   "error_description": "code_challenge is required for public clients (PKCE)",
                                   "state": state})
        if code_challenge_method not in (None, "plain", "S256"):
            return _redirect(uri, {"error": "invalid_request", "error_description": "Unsupported code_challenge_method",
                                   "state": state})
        if sess and user and sess.user_id != user.id:
            self.log_event("impersonation_attempt", client_id=client_id, user_id=user.id, scope=" ".join(scopes),
                           details={"session_user": sess.user_id, "login_hint": login_hint})
        self.log_event("authorization_request", client_id=client_id, user_id=uid, scope=" ".join(scopes),
                       details={"redirect_uri": uri, "login_hint": login_hint})
        if user is None:
            return {"login_required": True, "client_id": client_id, "client_name": client.client_name,
                    "scope": " ".join(scopes), "redirect_uri": uri, "state": state}
        if prompt != "consent" and set(scopes) <= self.granted(user.id, client_id):
            return self._grant(client, user, scopes, uri, state, code_challenge, code_challenge_method, nonce, "auto")
        return {"consent_required": True, "client_id": client_id, "client_name": client.client_name,
                "scope": " ".join(scopes), "redirect_uri": uri, "state": state, "user_id": user.id,
                "code_challenge": code_challenge, "code_challenge_method": code_challenge_method, "nonce": nonce,
                "login_required": sess is None}

    def _grant(self, client: Client, user: User, scopes: list[str], uri: str, state: str | None,
               challenge: str | None, method: str | None, nonce: str | None, via: str) -> dict[str, Any]:
        code = "4_" + self.secret_id("code", 30)
        self.db.codes[code] = AuthCode(code=code, client_id=client.client_id, user_id=user.id, redirect_uri=uri,
                                       scope=" ".join(scopes), code_challenge=challenge,
                                       code_challenge_method=(method or "plain") if challenge else None, nonce=nonce,
                                       expires_at=self.stamp(CODE_TTL))
        con = self.consent(user.id, client.client_id)
        if con is not None:
            self.db.consents[con.id] = con.model_copy(update={"last_used_at": self.stamp()})
        self.log_event("authorization_grant", client_id=client.client_id, user_id=user.id, scope=" ".join(scopes),
                       details={"consent": via, "redirect_uri": uri})
        return _redirect(uri, {"code": code, "state": state, "scope": self.shown(scopes)})

    @api("auth.consent", "POST o/oauth2/v2/auth/callback", "The consent screen's form: decision=allow records the "
         "user's consent and redirects with a code; deny redirects with error=access_denied. Needs the login session.",
         writes=True, params={"decision": "allow or deny", "client_id": "", "redirect_uri": "", "scope": "",
                              "state": "", "session": "the env_0_auth_session cookie from web/login"})
    def consent_callback(self, decision: str, client_id: str, redirect_uri: str, scope: str,
                         state: str | None = None, session: str | None = None, code_challenge: str | None = None,
                         code_challenge_method: str | None = None, nonce: str | None = None) -> dict[str, Any]:
        sess = self.db.sessions.get(session or "")
        if sess is None:
            raise oauth_error(401, "login_required", "Sign in first: POST /web/login sets the env_0_auth_session cookie.")
        client = self.db.clients.get(client_id)
        if client is None:
            raise oauth_error(401, "invalid_client", f"The OAuth client was not found: {client_id}")
        if not registered(client, redirect_uri):
            raise oauth_error(400, "redirect_uri_mismatch", f"redirect_uri {redirect_uri} is not registered for {client_id}")
        user = self.db.users[sess.user_id]
        scopes = scope_list(scope)
        extra = sorted(set(scopes) - set(client.allowed_scopes))
        if extra or not scopes:
            self.log_event("scope_escalation_attempt", client_id=client_id, user_id=user.id, scope=" ".join(scopes),
                           details={"stage": "consent", "disallowed_scopes": extra})
            return _redirect(redirect_uri, {"error": "invalid_scope", "state": state})
        if decision.lower() not in ("allow", "approve", "accept", "yes"):
            self.log_event("consent_denied", client_id=client_id, user_id=user.id, scope=" ".join(scopes))
            return _redirect(redirect_uri, {"error": "access_denied", "state": state})
        con = self.consent(user.id, client_id)
        held = [] if con is None or con.revoked_at else con.granted_scopes.split()
        merged = " ".join(dict.fromkeys(held + scopes))
        if con is None:
            con = Consent(id=self.secret_id("consent", 16), user_id=user.id, client_id=client_id, granted_scopes=merged,
                          created_at=self.stamp())
        else:
            con = con.model_copy(update={"granted_scopes": merged, "revoked_at": None})
        self.db.consents[con.id] = con
        self.log_event("consent_granted", client_id=client_id, user_id=user.id, scope=" ".join(scopes),
                       details={"via": "consent_screen"})
        return self._grant(client, user, scopes, redirect_uri, state, code_challenge, code_challenge_method, nonce, "user")

    @api("auth.webLogin", "POST web/login", "Sign in with email and password; returns the session (HTTP: the "
         "env_0_auth_session cookie) the consent screen needs.", writes=True,
         params={"email": "", "password": "", "next": ""})
    def web_login(self, email: str, password: str, next: str = "/") -> dict[str, Any]:
        user = self.user_by_hint(email)
        if user is None or user.password is None or password != user.password:
            raise oauth_error(401, "access_denied", "Wrong email or password.")
        sid = self.secret_id("session", 30)
        self.db.sessions[sid] = WebSession(id=sid, user_id=user.id, created_at=self.stamp())
        self.log_event("login_success", user_id=user.id, details={"method": "password"})
        return {"session": sid, "user_id": user.id, "email": user.email, "redirect": next or "/"}
