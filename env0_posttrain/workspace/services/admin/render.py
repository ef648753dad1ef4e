"""Directory API resource JSON and the users.list `query` grammar."""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable

from ...errors import bad_request
from .data_model import AdminUser, Asp, Group, Member, Token, VerificationCode

CUSTOMER_ID = "C03az79cb"


def etag(*parts: Any) -> str:
    return '"' + hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest() + '"'


def user_json(u: AdminUser) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": "admin#directory#user", "id": u.id, "etag": etag(u), "primaryEmail": u.primaryEmail,
        "name": {"givenName": u.givenName, "familyName": u.familyName, "fullName": f"{u.givenName} {u.familyName}"},
        "isAdmin": u.isAdmin, "isDelegatedAdmin": False, "lastLoginTime": u.lastLoginTime,
        "creationTime": u.creationTime, "agreedToTerms": True, "suspended": u.suspended, "archived": u.archived,
        "changePasswordAtNextLogin": u.changePasswordAtNextLogin, "ipWhitelisted": False,
        "emails": [{"address": u.primaryEmail, "primary": True}] + [{"address": a} for a in u.aliases],
        "customerId": CUSTOMER_ID, "orgUnitPath": u.orgUnitPath, "isMailboxSetup": True,
        "isEnrolledIn2Sv": u.isEnrolledIn2Sv, "isEnforcedIn2Sv": u.isEnforcedIn2Sv,
        "includeInGlobalAddressList": True}
    if u.title or u.department:
        out["organizations"] = [{"title": u.title, "department": u.department, "primary": True, "customType": ""}]
    if u.aliases:
        out["aliases"] = list(u.aliases)
    if u.suspended and u.suspensionReason:
        out["suspensionReason"] = u.suspensionReason
    return out


def group_json(g: Group, members: int) -> dict[str, Any]:
    return {"kind": "admin#directory#group", "id": g.id, "etag": etag(g, members), "email": g.email, "name": g.name,
            "directMembersCount": str(members), "description": g.description, "adminCreated": True,
            "nonEditableAliases": []}


def member_json(m: Member) -> dict[str, Any]:
    return {"kind": "admin#directory#member", "etag": etag(m), "id": m.id, "email": m.email, "role": m.role,
            "type": m.type, "status": "ACTIVE"}


def token_json(t: Token) -> dict[str, Any]:
    return {"kind": "admin#directory#token", "etag": etag(t), "clientId": t.clientId, "displayText": t.displayText,
            "anonymous": t.anonymous, "nativeApp": t.nativeApp, "userKey": t.userId, "scopes": list(t.scopes)}


def asp_json(a: Asp) -> dict[str, Any]:
    return {"kind": "admin#directory#asp", "etag": etag(a), "codeId": a.codeId, "name": a.name,
            "creationTime": str(a.creationTime), "lastTimeUsed": str(a.lastTimeUsed), "userKey": a.userId}


def code_json(c: VerificationCode) -> dict[str, Any]:
    return {"kind": "admin#directory#verificationCode", "etag": etag(c), "userId": c.userId,
            "verificationCode": c.verificationCode}


_Q = re.compile(r"""\s*(\w+)\s*([:=])\s*('[^']*'|"[^"]*"|\S+)|\s*('[^']*'|"[^"]*"|\S+)""")
_FIELDS: dict[str, Callable[[AdminUser], Any]] = {
    "email": lambda u: u.primaryEmail, "givenname": lambda u: u.givenName, "familyname": lambda u: u.familyName,
    "name": lambda u: f"{u.givenName} {u.familyName}", "orgunitpath": lambda u: u.orgUnitPath,
    "isadmin": lambda u: u.isAdmin, "issuspended": lambda u: u.suspended, "isenrolledin2sv": lambda u: u.isEnrolledIn2Sv,
    "isenforcedin2sv": lambda u: u.isEnforcedIn2Sv, "orgtitle": lambda u: u.title, "orgdepartment": lambda u: u.department,
}


def user_query(query: str | None) -> Callable[[AdminUser], bool]:
    """Directory search: `email:ana*`, `name:'Ana Lopez'`, `isSuspended=false`, `orgUnitPath=/Sales`, words."""
    preds: list[Callable[[AdminUser], bool]] = []
    pos, q = 0, (query or "").strip()
    while pos < len(q):
        m = _Q.match(q, pos)
        if not m or m.end() == pos:
            raise bad_request("Invalid Input", "invalid", "query")
        pos = m.end()
        if m.group(4):
            word = m.group(4).strip("'\"").lower().rstrip("*")
            preds.append(lambda u, w=word: any(x.lower().startswith(w) for x in
                                               (u.primaryEmail, u.givenName, u.familyName)))
            continue
        field, op, raw = m.group(1).lower(), m.group(2), m.group(3).strip("'\"")
        get = _FIELDS.get(field)
        if get is None:
            raise bad_request("Invalid Input", "invalid", "query")
        if field.startswith("is"):
            if raw.lower() not in ("true", "false"):
                raise bad_request("Invalid Input", "invalid", "query")
            preds.append(lambda u, g=get, v=raw.lower() == "true": g(u) == v)
        elif raw.endswith("*"):
            preds.append(lambda u, g=get, v=raw[:-1].lower(): str(g(u)).lower().startswith(v))
        elif op == "=":
            preds.append(lambda u, g=get, v=raw.lower(): str(g(u)).lower() == v)
        else:
            preds.append(lambda u, g=get, v=raw.lower(): v in str(g(u)).lower())
    return lambda u: all(p(u) for p in preds)
