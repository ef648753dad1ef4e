"""The Bearer gate a resource server puts in front of its methods when the auth service guards it (env0's
`AUTH_ENABLED=1`: "each resource server requires a Bearer token with the per-route scope"): Gmail, Calendar, Drive,
Docs and Slack here (Stripe reads the same tokens in its own wire.py). The access token must verify, be unexpired
and unrevoked (a revoked consent or refresh token revokes its access tokens), belong to the account whose data the
server holds, and carry one of the method's scopes. Failures answer the API's own 401 / 403 (Google) or
`ok: false` (Slack) bodies and leave the audit trail env0's verifiers read (`token_expired_during_use`,
`revoked_token_use`, `scope_escalation_attempt`, `impersonation_attempt`, `resource_access`).

Scopes: a Google method (Gmail, Calendar, Drive, Docs, the Admin Directory) accepts every scope its discovery
document lists (google_scopes.json, Google's URLs; held and compared in env0's short names: gmail.readonly for
.../auth/gmail.readonly, gmail.full for https://mail.google.com/, calendar.full for .../auth/calendar). One
deviation, for env0's packages only (the auth service's `env0` profile): messages.send needs gmail.send or full
access, as env0's server has it; auth-insufficient-scope-draft relies on gmail.compose being refused there. Slack
takes the scopes its method pages list (SLACK below).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jwt

from ...errors import ApiError
from .tokens import OIDC_SCOPES, decode, google_scopes, long_scope, short_scope, unverified

if TYPE_CHECKING:
    from ...environment import Workspace
    from ...tools import ToolSpec

GUARDED = ("gmail", "calendar", "drive", "docs", "slack")
ENV0_SEND = {"gmail.send", "gmail.full"}  # env0's messages.send (Google also takes gmail.compose and gmail.modify)


_CONV_READ = {"channels:read", "groups:read", "im:read", "mpim:read"}
_CONV_HISTORY = {"channels:history", "groups:history", "im:history", "mpim:history"}
_CONV_WRITE = {"channels:manage", "channels:write", "groups:write", "im:write", "mpim:write"}
SLACK: dict[str, set[str]] = {  # method -> scopes any of which suffices (user or bot token scopes); none: any token
    "auth.test": set(), "chat.getPermalink": set(), "chat.scheduledMessages.list": set(),
    **{f"chat.{m}": {"chat:write"} for m in ("delete", "deleteScheduledMessage", "postEphemeral", "postMessage",
                                            "scheduleMessage", "update")},
    **{f"conversations.{m}": _CONV_READ for m in ("info", "list", "members")},
    **{f"conversations.{m}": _CONV_HISTORY for m in ("history", "replies")},
    **{f"conversations.{m}": _CONV_WRITE for m in ("archive", "create", "invite", "kick", "leave", "open", "rename",
                                                  "setPurpose", "setTopic", "unarchive")},
    "conversations.join": {"channels:join", "channels:write"},
    **{f"files.{m}": {"files:write"} for m in ("completeUploadExternal", "delete", "getUploadURLExternal", "upload")},
    "files.info": {"files:read"}, "files.list": {"files:read"},
    "pins.add": {"pins:write"}, "pins.remove": {"pins:write"}, "pins.list": {"pins:read"},
    "reactions.add": {"reactions:write"}, "reactions.remove": {"reactions:write"},
    "reactions.get": {"reactions:read"}, "reactions.list": {"reactions:read"},
    **{f"reminders.{m}": {"reminders:write"} for m in ("add", "complete", "delete")},
    "reminders.info": {"reminders:read"}, "reminders.list": {"reminders:read"},
    "search.messages": {"search:read"}, "team.info": {"team:read"},
    "users.getPresence": {"users:read"}, "users.info": {"users:read"}, "users.list": {"users:read"},
    "users.lookupByEmail": {"users:read.email"}, "users.profile.get": {"users.profile:read"},
    "users.profile.set": {"users.profile:write"}, "users.setPresence": {"users:write"},
}


def required_scopes(spec: "ToolSpec", profile: str = "google") -> set[str]:
    """The scopes (short names) any one of which lets a token call `spec` (empty: any valid token). `profile`: the
    auth service's (`env0` keeps env0's messages.send rule)."""
    if spec.service == "slack":
        return set(SLACK[spec.method_id])
    if profile == "env0" and spec.method_id == "gmail.users.messages.send":
        return set(ENV0_SEND)
    return {short_scope(u) for u in google_scopes()[spec.method_id]}


def known_scopes() -> list[str]:
    """Every scope the gate knows: Google's (short forms), Slack's and OIDC's."""
    return sorted({short_scope(u) for v in google_scopes().values() for u in v} | {s for v in SLACK.values() for s in v}
                  | set(OIDC_SCOPES))


def route(spec: "ToolSpec") -> str:
    return f"/api/{spec.method_id}" if spec.service == "slack" else "/" + spec.path


class Refusal(Exception):
    """Why the gate refused a request, before the API shapes it: `missing` (no token), `invalid` (bad signature,
    unknown), `expired`, `revoked`, `account` (another account's data), `scope` (none of `need`)."""

    def __init__(self, kind: str, *, need: set[str] | None = None, held: str = "", target: str | None = None):
        super().__init__(kind)
        self.kind, self.need, self.held, self.target = kind, need or set(), held, target

    def answer(self) -> ApiError:
        """Google's answer to the refused request (with its WWW-Authenticate headers, if any): the default of
        `Dialect.refusal`, which a family with its own shape overrides."""
        return google_refusal(self)


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
    scopes any one of which suffices (default: the method's list); `mailbox`: Gmail's rule, the token must belong to
    the mailbox's owner or to one of the extra mailboxes' users, whose id is returned (the call then acts as that
    account; None: the owner). Caller holds the workspace lock."""
    try:
        return authorize(ws, spec, authorization, args, need, mailbox)
    except Refusal as r:
        raise google_refusal(r) from None


def authorize(ws: "Workspace", spec: "ToolSpec", authorization: str | None, args: dict[str, Any],
              need: set[str] | None = None, mailbox: bool = True, account: bool = True) -> str | None:
    """`check`'s rules, raising a Refusal for the caller's API to shape; every refusal leaves an audit event.
    `account=False`: any account's token may call (Stripe's tokens are the client's own)."""
    auth = ws.auth
    token = (authorization or "").strip()
    if not token.lower().startswith("bearer ") or not token[7:].strip():
        auth.log_event("unauthenticated_request", details={"route": route(spec), "method": spec.method_id,
                                                           "reason": "missing"})
        raise Refusal("missing")
    token = token[7:].strip()
    try:
        claims = decode(ws.seed, token, auth.epoch())
    except jwt.ExpiredSignatureError:
        c = unverified(token)
        auth.log_event("token_expired_during_use", client_id=c.get("client_id"), user_id=c.get("sub"),
                       scope=c.get("scope"), details={"route": route(spec), "jti": c.get("jti")})
        raise Refusal("expired") from None
    except jwt.InvalidTokenError:
        claims = None
    row = auth.db.access_tokens.get(str(claims.get("jti"))) if claims is not None else None
    if row is None:
        auth.log_event("unauthenticated_request", details={"route": route(spec), "method": spec.method_id,
                                                           "reason": "invalid"})
        raise Refusal("invalid")
    if row.revoked:
        auth.log_event("revoked_token_use", client_id=claims.get("client_id"), user_id=claims.get("sub"),
                       details={"route": route(spec), "jti": claims.get("jti")})
        raise Refusal("revoked")
    if not account:
        acting = None
    elif mailbox and spec.service == "gmail":
        acting = _same_account(ws, spec, row, args)
    else:
        acting = None
        owner = _owner(ws, spec, row)
        if row.user_id != owner.id:  # Calendar, Drive, Docs and Slack hold the owner's data only
            if row.user_id is not None:  # another person's token
                auth.log_event("impersonation_attempt", client_id=row.client_id, user_id=row.user_id,
                               scope=row.scope, details={"route": route(spec), "target": owner.id})
            else:  # a bare service-account token is no one's: no impersonation, still refused
                _denied(auth, spec, row, owner.email)
            raise Refusal("account", held=row.scope, target=owner.email)
    _scopes(auth, spec, row, need if need is not None else required_scopes(spec, auth.db.profile))
    return acting


def _denied(auth: Any, spec: "ToolSpec", row: Any, target: str) -> None:
    """The audit event of an account refusal that is no impersonation attempt."""
    auth.log_event("access_denied", client_id=row.client_id if row else None, user_id=row.user_id if row else None,
                   scope=row.scope if row else None, details={"route": route(spec), "reason": "account",
                                                              "target": target})


def google_refusal(r: Refusal) -> ApiError:
    """Google's answer to a refused request."""
    if r.kind == "missing":
        return _unauthenticated("Request is missing required authentication credential. Expected OAuth 2 access "
                                "token, login cookie or other valid authentication credential.", "required",
                                'Bearer realm="https://accounts.google.com/"')
    if r.kind in ("invalid", "expired", "revoked"):
        return _unauthenticated("Request had invalid authentication credentials. Expected OAuth 2 access token, login "
                                "cookie or other valid authentication credential.", "authError",
                                'Bearer realm="https://accounts.google.com/", error="invalid_token"')
    if r.kind == "account":
        return _forbidden(f"Delegation denied for {r.target}", "forbidden")
    return _forbidden("Request had insufficient authentication scopes.", "insufficientPermissions",
                      {"WWW-Authenticate": f'Bearer realm="https://accounts.google.com/", error="insufficient_scope",'
                                           f' scope="{" ".join(sorted(long_scope(s) for s in r.need))}"'})


def slack_refusal(r: Refusal) -> dict[str, Any]:
    """Slack's answer (HTTP 200, `ok: false`) to a refused request."""
    if r.kind == "scope":
        return {"ok": False, "error": "missing_scope", "needed": ",".join(sorted(r.need)), "provided": r.held}
    error = {"missing": "not_authed", "expired": "token_expired", "revoked": "token_revoked"}.get(r.kind, "invalid_auth")
    return {"ok": False, "error": error}



def _same_account(ws: "Workspace", spec: "ToolSpec", row: Any, args: dict[str, Any]) -> str | None:
    auth = ws.auth
    owner = _owner(ws, spec, row)
    other = auth.db.users.get(row.user_id or "") if row.user_id in auth.db.extra_mailboxes else None
    if other is not None:
        owner = other
    names = {"me", owner.id, owner.email.lower()} | (set() if other else {ws.me.email.lower(), ws.me.user_id})
    asked = str(args.get("userId", "me"))
    if asked.lower() not in names:  # another account's mailbox, named outright
        auth.log_event("impersonation_attempt", client_id=row.client_id, user_id=row.user_id, scope=row.scope,
                       details={"route": route(spec), "target": asked})
        raise Refusal("account", held=row.scope, target=asked)
    if row.user_id != owner.id:  # a token of an account without a mailbox here
        _denied(auth, spec, row, owner.email)
        raise Refusal("account", held=row.scope, target=owner.email)
    return other.id if other else None


def _scopes(auth: Any, spec: "ToolSpec", row: Any, need: set[str]) -> None:
    held = set(row.scope.split())
    used = sorted(held & need)
    if need and not used:
        auth.log_event("scope_escalation_attempt", client_id=row.client_id, user_id=row.user_id, scope=row.scope,
                       details={"route": route(spec), "required_scopes": sorted(need), "stage": "resource"})
        raise Refusal("scope", need=need, held=row.scope)
    auth.log_event("resource_access", client_id=row.client_id, user_id=row.user_id, scope=row.scope,
                   details={"route": route(spec), "scope_used": used[0] if used else None, "method": spec.method_id})


def _owner(ws: "Workspace", spec: "ToolSpec", row: Any) -> Any:
    """The auth user whose mailbox this workspace holds: the one the seeder named (env0's user1), else the one with
    the workspace owner's email (none: every token is refused)."""
    users = ws.auth.db.users
    email = ws.me.email.lower()
    hit = users.get(ws.auth.db.mailbox_owner) or next((u for u in users.values() if u.email.lower() == email), None)
    if hit is None:
        _denied(ws.auth, spec, row, ws.me.email)
        raise Refusal("account", target=ws.me.email)
    return hit
