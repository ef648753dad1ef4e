"""The Bearer gate a Google API puts in front of its methods when the auth service guards it (env0's
`AUTH_ENABLED=1`): the access token must verify, be unexpired and unrevoked, belong to the mailbox's owner and
carry one of the method's scopes. Failures answer Google's own 401 / 403 bodies and leave the audit trail env0's
verifiers read (`token_expired_during_use`, `scope_escalation_attempt`, `impersonation_attempt`,
`resource_access`).

Scopes follow Google's per-method lists (short names: gmail.readonly for .../auth/gmail.readonly, gmail.full for
https://mail.google.com/) with env0's one deviation: messages.send needs gmail.send (or full access);
gmail.compose alone is refused, which env0's packages rely on (auth-insufficient-scope-draft).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jwt

from ...errors import ApiError
from .tokens import decode, unverified

if TYPE_CHECKING:
    from ...environment import Workspace
    from ...tools import ToolSpec

READ = {"gmail.readonly", "gmail.modify", "gmail.full"}
_GMAIL = [  # (method id prefix or exact id, scopes any of which suffices); the first match wins
    ("gmail.users.messages.send", {"gmail.send", "gmail.full"}),
    ("gmail.users.drafts.", {"gmail.compose", "gmail.modify", "gmail.full"}),
    ("gmail.users.labels.create", {"gmail.labels", "gmail.modify", "gmail.full"}),
    ("gmail.users.labels.", {"gmail.labels", "gmail.modify", "gmail.full"}),
    ("gmail.users.messages.delete", {"gmail.full"}),
    ("gmail.users.messages.batchDelete", {"gmail.full"}),
    ("gmail.users.threads.delete", {"gmail.full"}),
    ("gmail.users.messages.insert", {"gmail.insert", "gmail.modify", "gmail.full"}),
    ("gmail.users.messages.import", {"gmail.insert", "gmail.modify", "gmail.full"}),
    ("gmail.users.settings.", {"gmail.settings.basic", "gmail.settings.sharing", "gmail.full"}),
    ("gmail.users.getProfile", READ | {"gmail.compose", "gmail.metadata", "gmail.labels"}),
]
GUARDED = ("gmail",)


def required_scopes(spec: "ToolSpec") -> set[str]:
    for prefix, scopes in _GMAIL:
        if spec.method_id == prefix or (prefix.endswith(".") and spec.method_id.startswith(prefix)):
            if not spec.writes and prefix.startswith("gmail.users.settings."):
                return READ | scopes
            return scopes
    return {"gmail.modify", "gmail.full"} if spec.writes else READ | {"gmail.metadata"}


def route(spec: "ToolSpec") -> str:
    return "/" + spec.path


def _unauthenticated(message: str, reason: str, www: str) -> ApiError:
    e = ApiError(401, {"error": {"code": 401, "message": message, "errors": [
        {"message": "Invalid Credentials" if reason == "authError" else "Login Required.", "domain": "global",
         "reason": reason, "location": "Authorization", "locationType": "header"}], "status": "UNAUTHENTICATED"}})
    e.headers = {"WWW-Authenticate": www}  # type: ignore[attr-defined]
    return e


def _forbidden(message: str, reason: str, headers: dict[str, str] | None = None) -> ApiError:
    e = ApiError(403, {"error": {"code": 403, "message": message, "errors": [
        {"message": message, "domain": "global", "reason": reason}], "status": "PERMISSION_DENIED"}})
    e.headers = headers or {}  # type: ignore[attr-defined]
    return e


def check(ws: "Workspace", spec: "ToolSpec", authorization: str | None, args: dict[str, Any],
          need: set[str] | None = None, mailbox: bool = True) -> str | None:
    """Raise Google's error unless `authorization` ("Bearer <jwt>") may call `spec`; audit either way. `need`: the
    scopes any one of which suffices (default: Gmail's list for the method); `mailbox`: the token must belong to
    the mailbox's owner or to one of the extra mailboxes' users, whose id is returned (the call then acts as that
account; None: the owner). Caller holds the workspace lock."""
    auth = ws.auth
    token = (authorization or "").strip()
    if not token.lower().startswith("bearer ") or not token[7:].strip():
        raise _unauthenticated("Request is missing required authentication credential. Expected OAuth 2 access "
                               "token, login cookie or other valid authentication credential.", "required",
                               'Bearer realm="https://accounts.google.com/"')
    token = token[7:].strip()
    bad = _unauthenticated("Request had invalid authentication credentials. Expected OAuth 2 access token, login "
                           "cookie or other valid authentication credential.", "authError",
                           'Bearer realm="https://accounts.google.com/", error="invalid_token"')
    try:
        claims = decode(ws.seed, token, auth.epoch())
    except jwt.ExpiredSignatureError:
        c = unverified(token)
        auth.log_event("token_expired_during_use", client_id=c.get("client_id"), user_id=c.get("sub"),
                       scope=c.get("scope"), details={"route": route(spec), "jti": c.get("jti")})
        raise bad from None
    except jwt.InvalidTokenError:
        raise bad from None
    row = auth.db.access_tokens.get(str(claims.get("jti")))
    if row is None or row.revoked:
        auth.log_event("revoked_token_use", client_id=claims.get("client_id"), user_id=claims.get("sub"),
                       details={"route": route(spec), "jti": claims.get("jti")})
        raise bad
    acting = _same_account(ws, spec, row, args) if mailbox else None
    _scopes(auth, spec, row, need if need is not None else required_scopes(spec))
    return acting


def _same_account(ws: "Workspace", spec: "ToolSpec", row: Any, args: dict[str, Any]) -> str | None:
    auth = ws.auth
    owner = _owner(ws)
    other = auth.db.users.get(row.user_id or "") if row.user_id in auth.db.extra_mailboxes else None
    if other is not None:
        owner = other
    names = {"me", owner.id, owner.email.lower()} | (set() if other else {ws.me.email.lower(), ws.me.user_id})
    asked = str(args.get("userId", "me"))
    if asked.lower() not in names:  # another account's mailbox, named outright
        auth.log_event("impersonation_attempt", client_id=row.client_id, user_id=row.user_id, scope=row.scope,
                       details={"route": route(spec), "target": asked})
        raise _forbidden(f"Delegation denied for {asked}", "forbidden")
    if row.user_id != owner.id:  # a token of an account without a mailbox here
        raise _forbidden(f"Delegation denied for {owner.email}", "forbidden")
    return other.id if other else None


def _scopes(auth: Any, spec: "ToolSpec", row: Any, need: set[str]) -> None:
    held = set(row.scope.split())
    used = sorted(held & need)
    if not used:
        auth.log_event("scope_escalation_attempt", client_id=row.client_id, user_id=row.user_id, scope=row.scope,
                       details={"route": route(spec), "required_scopes": sorted(need), "stage": "resource"})
        raise _forbidden("Request had insufficient authentication scopes.", "insufficientPermissions",
                         {"WWW-Authenticate": f'Bearer realm="https://accounts.google.com/", error="insufficient_scope",'
                                              f' scope="{" ".join(sorted(need))}"'})
    auth.log_event("resource_access", client_id=row.client_id, user_id=row.user_id, scope=row.scope,
                   details={"route": route(spec), "scope_used": used[0], "method": spec.method_id})


def _owner(ws: "Workspace") -> Any:
    """The auth user whose mailbox this workspace holds: the one the seeder named (env0's user1), else the one with
    the workspace owner's email."""
    users = ws.auth.db.users
    email = ws.me.email.lower()
    hit = users.get(ws.auth.db.mailbox_owner) or next((u for u in users.values() if u.email.lower() == email), None)
    if hit is None:
        raise _forbidden(f"Delegation denied for {ws.me.email}", "forbidden")
    return hit
