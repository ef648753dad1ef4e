"""Auth state: users, OAuth clients, consent records, codes, tokens, web sessions and the audit trail.

Tokens are stored by id (a JWT's `jti`, a refresh token's id), never as secrets; every id comes from the
workspace's seeded counter and every time from its clock, so a snapshot restores the exact tokens.
"""

from __future__ import annotations

from typing import Any

from ...base import DB, Row, table


class User(Row):
    id: str
    email: str
    display_name: str
    given_name: str | None = None
    family_name: str | None = None
    password: str | None = None  # the demo password (env0's base seed shares one); None: cannot sign in


class Client(Row):
    client_id: str
    client_name: str
    client_type: str = "confidential"  # "public": no secret, PKCE required
    client_secret: str | None = None
    redirect_uris: tuple[str, ...] = ()
    allowed_scopes: tuple[str, ...] = ()
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    access_token_ttl: int | None = None  # seconds; None: the server default (3599, as Google's)
    created_at: str


class Consent(Row):
    id: str
    user_id: str
    client_id: str
    granted_scopes: str  # space-separated, as env0 stores it
    created_at: str
    last_used_at: str | None = None
    revoked_at: str | None = None


class AuthCode(Row):
    code: str
    client_id: str
    user_id: str
    redirect_uri: str
    scope: str
    code_challenge: str | None = None
    code_challenge_method: str | None = None
    nonce: str | None = None
    expires_at: str
    used: bool = False


class AccessToken(Row):
    jti: str
    client_id: str
    user_id: str | None
    scope: str
    created_at: str
    expires_at: str
    revoked: bool = False
    actor: str | None = None  # the service account acting for user_id (client_credentials + subject)
    refresh_id: str | None = None


class RefreshToken(Row):
    id: str
    client_id: str
    user_id: str
    scope: str
    created_at: str
    revoked: bool = False
    replaced_by: str | None = None


class WebSession(Row):
    id: str
    user_id: str
    created_at: str


class AuditEvent(Row):
    id: int
    event_type: str
    client_id: str | None = None
    user_id: str | None = None
    scope: str | None = None
    ip_address: str | None = None
    user_agent: str | None = None
    details: dict[str, Any] = {}
    created_at: str


class AuthDB(DB):
    profile: str = "google"  # whose behaviour where env0's server and Google's differ: "google", or "env0" (its packages)
    mailbox_owner: str = ""  # the auth user id whose mail the guarded APIs hold ("": the workspace owner's email)
    extra_mailboxes: tuple[str, ...] = ()  # other auth users with a mailbox here: their tokens act as them
    resource_gate: bool = False  # the resource servers sit behind this service (env0's AUTH_ENABLED=1), the tool channel too
    users: dict[str, User] = table()
    clients: dict[str, Client] = table()
    consents: dict[str, Consent] = table()
    codes: dict[str, AuthCode] = table()
    access_tokens: dict[str, AccessToken] = table()
    refresh_tokens: dict[str, RefreshToken] = table()
    sessions: dict[str, WebSession] = table()
    audit: dict[str, AuditEvent] = table()  # key: the zero-padded event id (tables sort by key)
