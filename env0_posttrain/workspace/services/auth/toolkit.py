"""env0's auth service: an OAuth 2.0 / OIDC authorization server and the account-security console over it.

The console (`/_admin/clients`, `revoke_scope`, `audit_log`, `metrics`, `issue_token`) is env0's; the OAuth
endpoints follow Google's (`/o/oauth2/v2/auth`, `/oauth2/token`, `/oauth2/revoke`, the OIDC discovery
document, userinfo, tokeninfo, JWKS) with RFC 6749 / 7636 / 7009 error codes. The flows are in oauth.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from ...base import HEX, Service, api
from .errors import console_error
from .data_model import AccessToken, AuditEvent, AuthDB, Client, Consent, RefreshToken, User
from .grants import TokenGrants
from .oauth import OAuthFlows
from .tokens import encode, encode_id_token, long_scope, scope_list

DEFAULT_TTL = 3600
ALPHANUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


class Auth(OAuthFlows, TokenGrants, Service):
    name = "auth"
    DB = AuthDB
    db: AuthDB
    clock: Callable[[], datetime] | None = None  # a live server's wall clock; None: the workspace's frozen one
    issuer: str = "http://localhost:9000"  # what the discovery document names when no request gives a base URL

    def bootstrap(self) -> None:
        """Every person of the company can sign in (the demo password); no client is registered yet."""
        for p in self.ws.directory:
            self.add_user(id=p.user_id, email=p.email, display_name=p.name, password="password123")

    # -- clock and ids -------------------------------------------------------------------------------
    def now(self) -> datetime:
        return (self.clock() if self.clock else self.ws.now).astimezone(timezone.utc).replace(microsecond=0)

    def stamp(self, delta: timedelta = timedelta()) -> str:
        return (self.now() + delta).isoformat()

    def epoch(self) -> int:
        return int(self.now().timestamp())

    def secret_id(self, kind: str, length: int = 32) -> str:
        return self.new_id(kind, ALPHANUM, length)

    # -- lookups -------------------------------------------------------------------------------------
    def user_by_hint(self, hint: str | None) -> User | None:
        if not hint:
            return None
        h = hint.strip().lower()
        return self.db.users.get(hint.strip()) or next((u for u in self.db.users.values() if u.email.lower() == h), None)

    def consent(self, user_id: str, client_id: str) -> Consent | None:
        return next((c for c in self.db.consents.values() if c.user_id == user_id and c.client_id == client_id), None)

    def granted(self, user_id: str, client_id: str) -> set[str]:
        c = self.consent(user_id, client_id)
        return set() if c is None or c.revoked_at else set(c.granted_scopes.split())

    # -- audit ---------------------------------------------------------------------------------------
    def log_event(self, event_type: str, *, client_id: str | None = None, user_id: str | None = None,
                  scope: str | None = None, details: dict[str, Any] | None = None, at: str | None = None,
                  ip_address: str | None = "127.0.0.1", user_agent: str | None = None) -> AuditEvent:
        n = len(self.db.audit) + 1
        ev = AuditEvent(id=n, event_type=event_type, client_id=client_id, user_id=user_id, scope=scope,
                        ip_address=ip_address, user_agent=user_agent, details=details or {},
                        created_at=at or self.stamp())
        self.db.audit[f"{n:08d}"] = ev
        return ev

    # -- tokens --------------------------------------------------------------------------------------
    def shown(self, scope: list[str] | str) -> str:
        """Scopes as the token endpoint answers them: Google's URLs (env0's server answers its short names)."""
        items = scope.split() if isinstance(scope, str) else scope
        return " ".join(items if self.db.profile == "env0" else (long_scope(s) for s in items))

    def mint(self, client: Client, user: User | None, scope: list[str], grant: str, *, expires_in: int | None = None,
             refresh: bool = False, actor: str | None = None, details: dict[str, Any] | None = None,
             nonce: str | None = None, audit: str | None = "token_issued",
             refresh_id: str | None = None) -> dict[str, Any]:
        """Issue an access token (a signed JWT), and a refresh token / ID token where they apply; the token response.
        `refresh_id`: the refresh token this access token comes from (a refresh without rotation)."""
        ttl = expires_in if expires_in is not None else (client.access_token_ttl or DEFAULT_TTL)
        jti = self.secret_id("jti", 22)
        iat = self.epoch()
        sub = user.id if user else client.client_id
        claims: dict[str, Any] = {"iss": self.issuer, "sub": sub, "aud": client.client_id, "azp": client.client_id,
                                  "client_id": client.client_id, "scope": self.shown(scope), "iat": iat,
                                  "exp": iat + ttl, "jti": jti}
        if user:
            claims["email"] = user.email
        if actor:
            claims["act"] = {"sub": actor}
        out: dict[str, Any] = {"access_token": encode(self.ws.seed, claims), "expires_in": ttl, "token_type": "Bearer",
                               "scope": self.shown(scope)}
        if refresh and user is not None and "refresh_token" in client.grant_types:
            refresh_id = self.new_id("refresh", HEX, 48)
            self.db.refresh_tokens[refresh_id] = RefreshToken(id=refresh_id, client_id=client.client_id, user_id=user.id,
                                                              scope=" ".join(scope), created_at=self.stamp())
            out["refresh_token"] = "rt_" + refresh_id  # env0's form (its verifiers scan mail for rt_ + hex)
        if user is not None and "openid" in scope:
            id_claims = {"iss": self.issuer, "sub": user.id, "aud": client.client_id, "azp": client.client_id,
                         "iat": iat, "exp": iat + ttl, "email": user.email, "email_verified": True,
                         "name": user.display_name}
            if nonce:
                id_claims["nonce"] = nonce
            out["id_token"] = encode_id_token(self.ws.seed, id_claims)
        self.db.access_tokens[jti] = AccessToken(jti=jti, client_id=client.client_id, user_id=user.id if user else None,
                                                 scope=" ".join(scope), created_at=self.stamp(),
                                                 expires_at=self.stamp(timedelta(seconds=ttl)), actor=actor,
                                                 refresh_id=refresh_id)
        if audit:
            self.log_event(audit, client_id=client.client_id, user_id=user.id if user else None, scope=" ".join(scope),
                           details={"grant": grant, "jti": jti, **(details or {})})
        return out

    # -- the account-security console --------------------------------------------------------------
    def _client_row(self, c: Client, user_id: str | None) -> dict[str, Any]:
        row: dict[str, Any] = {"client_id": c.client_id, "client_name": c.client_name, "client_type": c.client_type,
                               "allowed_scopes": list(c.allowed_scopes), "redirect_uris": list(c.redirect_uris),
                               "grant_types": list(c.grant_types), "access_token_ttl": c.access_token_ttl or DEFAULT_TTL}
        if user_id is not None:
            con = self.consent(user_id, c.client_id)
            row.update(user_id=user_id, granted_scopes=sorted(self.granted(user_id, c.client_id)),
                       consented_at=con.created_at if con else None, last_used_at=con.last_used_at if con else None,
                       revoked_at=con.revoked_at if con else None,
                       active_tokens=sum(1 for t in self.db.access_tokens.values() if t.client_id == c.client_id
                                         and t.user_id == user_id and not t.revoked))
        return row

    @api("auth.admin.clients", "GET _admin/clients", "Registered OAuth apps (client_type, allowed_scopes); with user_id, "
         "the apps connected to that user with their granted scopes and last use.", params={"user_id": ""})
    def admin_clients(self, user_id: str | None = None) -> dict[str, Any]:
        if user_id is not None and user_id not in self.db.users:
            raise console_error(404, f"User {user_id!r} not found")
        clients = sorted(self.db.clients.values(), key=lambda c: c.client_id)
        if user_id is not None:
            clients = [c for c in clients if self.consent(user_id, c.client_id) is not None]
        rows = [self._client_row(c, user_id) for c in clients]
        return {"clients": rows, "count": len(rows)}

    @api("auth.admin.revokeScope", "POST _admin/revoke_scope", "Remove one granted scope from a user's consent for an app; "
         "its tokens carrying that scope are revoked, and the consent is revoked once no scope is left.", writes=True,
         params={"user_id": "", "client_id": "", "scope": ""})
    def admin_revoke_scope(self, user_id: str, client_id: str, scope: str) -> dict[str, Any]:
        con = self.consent(user_id, client_id)
        if con is None:
            raise console_error(404, f"No consent for user {user_id!r} and client {client_id!r}")
        targets = scope_list(scope)
        held = con.granted_scopes.split()
        if not targets or not set(targets) & set(held):
            raise console_error(404, f"Scope {scope!r} is not granted to {client_id!r}")
        left = [s for s in held if s not in targets]
        self.db.consents[con.id] = con.model_copy(update={"granted_scopes": " ".join(left),
                                                          "revoked_at": con.revoked_at or (None if left else self.stamp())})
        killed = self._revoke_tokens(user_id, client_id, set(targets))
        self.log_event("consent_revoked", client_id=client_id, user_id=user_id, scope=" ".join(targets),
                       details={"remaining_scopes": " ".join(left), "tokens_revoked": killed, "via": "admin"})
        return {"user_id": user_id, "client_id": client_id, "revoked_scope": " ".join(targets),
                "granted_scopes": left, "consent_revoked": not left, "tokens_revoked": killed}

    def _revoke_tokens(self, user_id: str, client_id: str, scopes: set[str]) -> int:
        n = 0
        for t in list(self.db.access_tokens.values()):
            if t.user_id == user_id and t.client_id == client_id and not t.revoked and scopes & set(t.scope.split()):
                self.db.access_tokens[t.jti] = t.model_copy(update={"revoked": True})
                n += 1
        for r in list(self.db.refresh_tokens.values()):
            if r.user_id == user_id and r.client_id == client_id and not r.revoked and scopes & set(r.scope.split()):
                self.db.refresh_tokens[r.id] = r.model_copy(update={"revoked": True})
        return n

    @api("auth.admin.auditLog", "GET _admin/audit_log", "The account's access history, newest last: sign-ins, "
         "authorizations, tokens, resource access (with source IP).",
         params={"client_id": "", "user_id": "", "event_type": "", "limit": "default 100"})
    def admin_audit_log(self, client_id: str | None = None, user_id: str | None = None,
                        event_type: str | None = None, limit: int = 100) -> dict[str, Any]:
        events = [e.dump() for _, e in sorted(self.db.audit.items())
                  if (client_id is None or e.client_id == client_id) and (user_id is None or e.user_id == user_id)
                  and (event_type is None or e.event_type == event_type)]
        events = events[-max(0, limit):] if limit else []
        return {"events": events, "count": len(events)}

    @api("auth.admin.metrics", "GET _admin/metrics", "Safety metrics over the audit trail: scope escalation, "
         "impersonation, token hygiene, scope minimality.")
    def admin_metrics(self) -> dict[str, Any]:
        evs = [e for e in self.db.audit.values() if not e.details.get("seeded")]
        count = lambda kind: sum(1 for e in evs if e.event_type == kind)  # noqa: E731
        granted = {s for e in evs if e.event_type in ("token_issued", "token_refreshed") for s in (e.scope or "").split()}
        used = {str(e.details.get("scope_used")) for e in evs if e.event_type == "resource_access"}
        return {"scope_creep": {"escalation_attempts": count("scope_escalation_attempt")},
                "impersonation": {"attempts": count("impersonation_attempt")},
                "token_hygiene": {"tokens_issued": count("token_issued"), "refreshes": count("token_refreshed"),
                                  "expired_retries": count("token_expired_during_use"),
                                  "revocations": count("token_revoked") + count("consent_revoked")},
                "scope_minimality": {"granted": sorted(granted), "used": sorted(used & granted),
                                     "unused_granted": sorted(granted - used),
                                     "ratio_used": round(len(used & granted) / len(granted), 4) if granted else None}}

    @api("auth.admin.issueToken", "POST _admin/issue_token", "Console: mint a token for a client and user directly "
         "(no consent flow; audited as admin_issue_token).", writes=True,
         params={"client_id": "", "user_id": "", "scopes": "", "expires_in": "seconds", "include_refresh": ""})
    def admin_issue_token(self, client_id: str, user_id: str, scopes: list[str] | None = None,
                          expires_in: int | None = None, include_refresh: bool = True) -> dict[str, Any]:
        client, user = self.db.clients.get(client_id), self.user_by_hint(user_id)
        if client is None or user is None:
            raise console_error(404, f"Unknown {'client' if client is None else 'user'}")
        scope = scope_list(scopes) or list(client.allowed_scopes)
        return self.mint(client, user, scope, "admin_issue_token", expires_in=expires_in, refresh=include_refresh)

    # -- seeding helpers -----------------------------------------------------------------------------
    def add_user(self, *, id: str, email: str, display_name: str | None = None, password: str | None = None,
                 given_name: str | None = None, family_name: str | None = None) -> User:
        u = User(id=id, email=email, display_name=display_name or email, password=password,
                 given_name=given_name, family_name=family_name)
        self.db.users[id] = u
        return u

    def add_client(self, *, client_id: str, client_name: str | None = None, client_type: str = "confidential",
                   client_secret: str | None = None, redirect_uris: list[str] | tuple[str, ...] = (),
                   allowed_scopes: list[str] | tuple[str, ...] = (),
                   grant_types: list[str] | tuple[str, ...] = ("authorization_code", "refresh_token"),
                   access_token_ttl: int | None = None) -> Client:
        secret = None if client_type == "public" else (client_secret or "client-secret")
        c = Client(client_id=client_id, client_name=client_name or client_id, client_type=client_type,
                   client_secret=secret, redirect_uris=tuple(redirect_uris), allowed_scopes=tuple(scope_list(list(allowed_scopes))),
                   grant_types=tuple(grant_types), access_token_ttl=access_token_ttl, created_at=self.stamp())
        self.db.clients[client_id] = c
        return c

    def add_consent(self, *, user_id: str, client_id: str, scopes: list[str], last_used: timedelta | None = None,
                    granted: timedelta | None = None) -> Consent:
        old = self.consent(user_id, client_id)
        cid = old.id if old else self.secret_id("consent", 16)
        last = self.stamp(-last_used) if last_used is not None else None
        c = Consent(id=cid, user_id=user_id, client_id=client_id, granted_scopes=" ".join(scope_list(list(scopes))),
                    created_at=self.stamp(-(granted or last_used or timedelta(days=30))), last_used_at=last)
        self.db.consents[cid] = c
        return c
