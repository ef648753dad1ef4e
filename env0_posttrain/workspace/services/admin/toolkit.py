"""Admin SDK Directory methods (users, groups, members, tokens, asps, verificationCodes) and seeding helpers."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from operator import attrgetter
from typing import Any

from ...base import DIGITS, HEX, Service, api, make_id
from ...errors import bad_request, conflict, google_error
from ...paging import check_size, page
from .data_model import AdminDB, AdminUser, Asp, Group, Member, Token, VerificationCode
from .render import asp_json, code_json, etag, group_json, member_json, token_json, user_json, user_query

A = "admin/directory/v1"
_EMAIL = re.compile(r"^[a-z0-9._%+'-]+@[a-z0-9.-]+\.[a-z]{2,}$")
_ROLES = ("OWNER", "MANAGER", "MEMBER")


def _missing(what: str) -> Exception:
    return google_error(404, f"Resource Not Found: {what}", "notFound")


def _listing(kind: str, field: str, items: list[Any], render: Callable[[Any], dict[str, Any]],
             pageToken: str | None = None, size: int | None = None) -> dict[str, Any]:
    """A Directory list response: etag over all `items`, the page of them (all when no `size`), nextPageToken."""
    chunk, nxt = page(items, pageToken, size) if size is not None else (items, None)
    out: dict[str, Any] = {"kind": kind, "etag": etag(len(items)), field: [render(x) for x in chunk]}
    if nxt:
        out["nextPageToken"] = nxt
    return out


class Admin(Service):
    name = "admin"
    DB = AdminDB
    db: AdminDB

    def bootstrap(self) -> None:
        for p in self.ws.directory:
            u = AdminUser(id=p.user_id, primaryEmail=p.email, givenName=p.first, familyName=p.last,
                          isAdmin=p.email == self.ws.me.email or p.title == "IT Administrator",
                          orgUnitPath=f"/{p.department}", creationTime="2023-02-06T17:12:40.000Z",
                          lastLoginTime=self.ws.now_rfc3339(), title=p.title, department=p.department,
                          isEnrolledIn2Sv=True)
            self.db.users[u.id] = u

    # -- lookups --------------------------------------------------------------------------------
    def _user(self, userKey: str) -> AdminUser:
        key = userKey.strip().lower()
        u = self.db.users.get(userKey)
        if u is None:
            u = next((x for x in self.db.users.values() if x.primaryEmail == key or key in x.aliases), None)
        if u is None:
            raise _missing("userKey")
        return u

    def _group(self, groupKey: str) -> Group:
        g = self.db.groups.get(groupKey) or next(
            (x for x in self.db.groups.values() if x.email == groupKey.strip().lower()), None)
        if g is None:
            raise _missing("groupKey")
        return g

    def _members(self, gid: str) -> list[Member]:
        return [m for m in self.db.members.values() if m.groupId == gid]

    def _owned(self, store: dict[str, Any], userKey: str, by: str, kind: str, render: Callable[[Any], Any]) -> dict:
        """List response of the user's records in `store` (tokens, asps, codes), sorted by attribute `by`."""
        uid = self._user(userKey).id
        items = sorted((x for x in store.values() if x.userId == uid), key=attrgetter(by))
        return _listing(kind, "items", items, render)

    def _owned_item(self, store: dict[str, Any], userKey: str, item_id: object, what: str, pop: bool = False) -> Any:
        """The user's record `item_id` in `store` (removed when `pop`); 404 naming `what` if absent."""
        x = (store.pop if pop else store.get)(f"{self._user(userKey).id}/{item_id}", None)
        if x is None:
            raise _missing(what)
        return x

    def _check_scope(self, customer: str | None, domain: str | None) -> None:
        if domain and domain.lower() != self.ws.domain:
            raise google_error(403, "Not Authorized to access this resource/api", "forbidden")
        if customer and customer not in ("my_customer", "C03az79cb"):
            raise google_error(400, "Bad Request", "badRequest")

    # -- users ----------------------------------------------------------------------------------
    @api("directory.users.list", f"GET {A}/users", "List/search users.",
         params={"query": "e.g. email:ana* or isSuspended=true", "maxResults": "", "pageToken": ""},
         name="admin_users_list")
    def users_list(self, customer: str | None = "my_customer", domain: str | None = None, query: str | None = None,
                   maxResults: int | None = None, pageToken: str | None = None, orderBy: str | None = None,
                   sortOrder: str | None = None, showDeleted: str | None = None,
                   projection: str | None = None, viewType: str | None = None) -> dict[str, Any]:
        self._check_scope(customer, domain)
        pred = user_query(query)
        key = {"email": lambda u: u.primaryEmail, "givenName": lambda u: u.givenName.lower(),
               "familyName": lambda u: u.familyName.lower(), None: lambda u: u.primaryEmail}.get(orderBy)
        if key is None:
            raise bad_request("Invalid value for orderBy", "invalid", "orderBy")
        users = sorted((u for u in self.db.users.values() if pred(u)), key=key,
                       reverse=(sortOrder or "").upper() == "DESCENDING")
        return _listing("admin#directory#users", "users", users, user_json, pageToken,
                        check_size(maxResults, 100, 500, "maxResults"))

    @api("directory.users.get", f"GET {A}/users/{{userKey}}", "Get a user by email or id.",
         params={"userKey": "email or id"}, name="admin_users_get")
    def users_get(self, userKey: str, projection: str | None = None, viewType: str | None = None) -> dict[str, Any]:
        return user_json(self._user(userKey))

    @api("directory.users.insert", f"POST {A}/users", "Create a user.", writes=True,
         params={"body": "{primaryEmail, name{givenName,familyName}, password}"}, name="admin_users_insert")
    def users_insert(self, body: dict) -> dict[str, Any]:
        email = str(body.get("primaryEmail") or "").strip().lower()
        name = body.get("name") if isinstance(body.get("name"), dict) else {}
        if not _EMAIL.match(email):
            raise bad_request("Invalid Input: primary_user_email", "invalid")
        if email.split("@")[1] != self.ws.domain:
            raise bad_request("Domain not found.", "notFound")
        if not name.get("givenName"):
            raise bad_request("Invalid Given/Family Name: GivenName", "invalid")
        if not name.get("familyName"):
            raise bad_request("Invalid Given/Family Name: FamilyName", "invalid")
        if not isinstance(body.get("password"), str) or len(body["password"]) < 8:
            raise bad_request("Invalid Password", "invalid")
        if any(u.primaryEmail == email or email in u.aliases for u in self.db.users.values()):
            raise conflict("Entity already exists.", "duplicate")
        u = AdminUser(id="1" + self.new_id("user", DIGITS, 20), primaryEmail=email, givenName=str(name["givenName"]),
                      familyName=str(name["familyName"]), orgUnitPath=str(body.get("orgUnitPath") or "/"),
                      creationTime=self.ws.now_rfc3339(), lastLoginTime="1970-01-01T00:00:00.000Z",
                      changePasswordAtNextLogin=bool(body.get("changePasswordAtNextLogin", False)),
                      suspended=bool(body.get("suspended", False)))
        self.db.users[u.id] = u
        return user_json(u)

    @api("directory.users.update", f"PUT {A}/users/{{userKey}}",
         "Update a user: suspended, name, orgUnitPath, password, changePasswordAtNextLogin.", writes=True,
         params={"userKey": "", "body": "fields to change"}, name="admin_users_update")
    def users_update(self, userKey: str, body: dict) -> dict[str, Any]:
        u = self._user(userKey)
        upd: dict[str, Any] = {}
        if "suspended" in body:
            if not isinstance(body["suspended"], bool):
                raise bad_request("Invalid Input: suspended", "invalid")
            upd["suspended"] = body["suspended"]
            upd["suspensionReason"] = "ADMIN" if body["suspended"] else None
        for k in ("changePasswordAtNextLogin", "archived"):
            if k in body:
                if not isinstance(body[k], bool):
                    raise bad_request(f"Invalid Input: {k}", "invalid")
                upd[k] = body[k]
        if "orgUnitPath" in body:
            if not isinstance(body["orgUnitPath"], str) or not body["orgUnitPath"].startswith("/"):
                raise bad_request("Invalid Input: INVALID_OU_ID", "invalid")
            upd["orgUnitPath"] = body["orgUnitPath"]
        if isinstance(body.get("name"), dict):
            for k in ("givenName", "familyName"):
                if k in body["name"]:
                    if not isinstance(body["name"][k], str) or not body["name"][k].strip():
                        raise bad_request(f"Invalid Given/Family Name: {k}", "invalid")
                    upd[k] = body["name"][k]
        if "password" in body:
            if not isinstance(body["password"], str) or len(body["password"]) < 8:
                raise bad_request("Invalid Password", "invalid")
            upd["passwordVersion"] = u.passwordVersion + 1
        if "primaryEmail" in body and body["primaryEmail"] != u.primaryEmail:
            email = str(body["primaryEmail"]).strip().lower()
            if not _EMAIL.match(email) or email.split("@")[1] != self.ws.domain:
                raise bad_request("Invalid Input: primary_user_email", "invalid")
            if any(x.primaryEmail == email for x in self.db.users.values()):
                raise conflict("Entity already exists.", "duplicate")
            upd["primaryEmail"] = email
            upd["aliases"] = u.aliases + (u.primaryEmail,)
        u = u.model_copy(update=upd)
        self.db.users[u.id] = u
        return user_json(u)

    @api("directory.users.patch", f"PATCH {A}/users/{{userKey}}", "Patch a user (same fields as update).",
         writes=True, params={"userKey": "", "body": ""}, name="admin_users_patch")
    def users_patch(self, userKey: str, body: dict) -> dict[str, Any]:
        return self.users_update(userKey, body)

    @api("directory.users.delete", f"DELETE {A}/users/{{userKey}}", "Delete a user.", writes=True, status=204,
         params={"userKey": ""}, name="admin_users_delete")
    def users_delete(self, userKey: str) -> None:
        u = self._user(userKey)
        if u.primaryEmail == self.ws.me.email:
            raise google_error(412, "Cannot delete own account.", "conditionNotMet")
        del self.db.users[u.id]
        for table in (self.db.members, self.db.tokens, self.db.asps, self.db.codes):
            for k in [k for k, r in table.items() if getattr(r, "userId", getattr(r, "id", None)) == u.id]:
                del table[k]

    @api("directory.users.makeAdmin", f"POST {A}/users/{{userKey}}/makeAdmin", "Grant or revoke super admin.",
         writes=True, status=204, params={"userKey": "", "body": "{status: true|false}"}, name="admin_users_makeAdmin")
    def users_makeAdmin(self, userKey: str, body: dict) -> None:
        u = self._user(userKey)
        if not isinstance(body.get("status"), bool):
            raise bad_request("Invalid Input: status", "invalid")
        self.db.users[u.id] = u.model_copy(update={"isAdmin": body["status"]})

    @api("directory.users.signOut", f"POST {A}/users/{{userKey}}/signOut", "Sign a user out of all sessions.",
         writes=True, status=204, params={"userKey": ""}, name="admin_users_signOut")
    def users_signOut(self, userKey: str) -> None:
        u = self._user(userKey)
        self.db.users[u.id] = u.model_copy(update={"signOutCount": u.signOutCount + 1})

    # -- groups and members ---------------------------------------------------------------------
    @api("directory.groups.list", f"GET {A}/groups", "List groups (or a user's groups with userKey).",
         params={"userKey": "", "maxResults": "", "pageToken": ""}, name="admin_groups_list")
    def groups_list(self, customer: str | None = "my_customer", domain: str | None = None,
                    userKey: str | None = None, maxResults: int | None = None, pageToken: str | None = None,
                    query: str | None = None) -> dict[str, Any]:
        self._check_scope(customer if not userKey else None, domain)
        groups = sorted(self.db.groups.values(), key=lambda g: g.email)
        if userKey:
            uid = self._user(userKey).id
            groups = [g for g in groups if f"{g.id}/{uid}" in self.db.members]
        return _listing("admin#directory#groups", "groups", groups, lambda g: group_json(g, len(self._members(g.id))),
                        pageToken, check_size(maxResults, 200, 200, "maxResults"))

    @api("directory.groups.get", f"GET {A}/groups/{{groupKey}}", "Get a group.", params={"groupKey": "email or id"},
         name="admin_groups_get")
    def groups_get(self, groupKey: str) -> dict[str, Any]:
        g = self._group(groupKey)
        return group_json(g, len(self._members(g.id)))

    @api("directory.groups.insert", f"POST {A}/groups", "Create a group.", writes=True,
         params={"body": "{email, name, description}"}, name="admin_groups_insert")
    def groups_insert(self, body: dict) -> dict[str, Any]:
        email = str(body.get("email") or "").strip().lower()
        if not _EMAIL.match(email):
            raise bad_request("Invalid Input: email", "invalid")
        if any(g.email == email for g in self.db.groups.values()) or any(
                u.primaryEmail == email for u in self.db.users.values()):
            raise conflict("Entity already exists.", "duplicate")
        g = Group(id="0" + self.new_id("group", HEX, 14), email=email, name=str(body.get("name") or email.split("@")[0]),
                  description=str(body.get("description") or ""))
        self.db.groups[g.id] = g
        return group_json(g, 0)

    @api("directory.groups.delete", f"DELETE {A}/groups/{{groupKey}}", "Delete a group.", writes=True, status=204,
         params={"groupKey": ""}, name="admin_groups_delete")
    def groups_delete(self, groupKey: str) -> None:
        g = self._group(groupKey)
        del self.db.groups[g.id]
        for k in [k for k, m in self.db.members.items() if m.groupId == g.id]:
            del self.db.members[k]

    @api("directory.members.list", f"GET {A}/groups/{{groupKey}}/members", "List a group's members.",
         params={"groupKey": ""}, name="admin_members_list")
    def members_list(self, groupKey: str, roles: str | None = None, maxResults: int | None = None,
                     pageToken: str | None = None) -> dict[str, Any]:
        g = self._group(groupKey)
        want = {r.strip().upper() for r in roles.split(",")} if roles else None
        ms = sorted((m for m in self._members(g.id) if not want or m.role in want), key=lambda m: m.email)
        return _listing("admin#directory#members", "members", ms, member_json, pageToken,
                        check_size(maxResults, 200, 200, "maxResults"))

    @api("directory.members.insert", f"POST {A}/groups/{{groupKey}}/members", "Add a member to a group.",
         writes=True, params={"groupKey": "", "body": "{email, role: MEMBER|MANAGER|OWNER}"},
         name="admin_members_insert")
    def members_insert(self, groupKey: str, body: dict) -> dict[str, Any]:
        g = self._group(groupKey)
        role = str(body.get("role") or "MEMBER").upper()
        if role not in _ROLES:
            raise bad_request("Invalid Input: role", "invalid")
        email = str(body.get("email") or body.get("id") or "").strip().lower()
        if not email:
            raise bad_request("Missing required field: memberKey", "required")
        try:
            u = self._user(email)
            mid, memail, mtype = u.id, u.primaryEmail, "USER"
        except Exception:
            sub = next((x for x in self.db.groups.values() if x.email == email and x.id != g.id), None)
            if sub is None:
                raise _missing("memberKey") from None
            mid, memail, mtype = sub.id, sub.email, "GROUP"
        if f"{g.id}/{mid}" in self.db.members:
            raise conflict("Member already exists.", "duplicate")
        m = Member(groupId=g.id, id=mid, email=memail, role=role, type=mtype)
        self.db.members[f"{g.id}/{mid}"] = m
        return member_json(m)

    def _member(self, g: Group, memberKey: str) -> Member:
        key = memberKey.strip().lower()
        m = next((m for m in self._members(g.id) if m.id == memberKey or m.email == key), None)
        if m is None:
            raise _missing("memberKey")
        return m

    @api("directory.members.get", f"GET {A}/groups/{{groupKey}}/members/{{memberKey}}", "Get one membership.",
         params={"groupKey": "", "memberKey": ""}, name="admin_members_get")
    def members_get(self, groupKey: str, memberKey: str) -> dict[str, Any]:
        return member_json(self._member(self._group(groupKey), memberKey))

    @api("directory.members.delete", f"DELETE {A}/groups/{{groupKey}}/members/{{memberKey}}",
         "Remove a member from a group.", writes=True, status=204, params={"groupKey": "", "memberKey": ""},
         name="admin_members_delete")
    def members_delete(self, groupKey: str, memberKey: str) -> None:
        g = self._group(groupKey)
        m = self._member(g, memberKey)
        del self.db.members[f"{g.id}/{m.id}"]

    # -- tokens, app passwords, backup codes ----------------------------------------------------
    @api("directory.tokens.list", f"GET {A}/users/{{userKey}}/tokens", "Third-party apps a user granted access.",
         params={"userKey": ""}, name="admin_tokens_list")
    def tokens_list(self, userKey: str) -> dict[str, Any]:
        return self._owned(self.db.tokens, userKey, "clientId", "admin#directory#tokenList", token_json)

    @api("directory.tokens.get", f"GET {A}/users/{{userKey}}/tokens/{{clientId}}", "Get one app grant.",
         params={"userKey": "", "clientId": ""}, name="admin_tokens_get")
    def tokens_get(self, userKey: str, clientId: str) -> dict[str, Any]:
        return token_json(self._owned_item(self.db.tokens, userKey, clientId, "clientId"))

    @api("directory.tokens.delete", f"DELETE {A}/users/{{userKey}}/tokens/{{clientId}}", "Revoke an app's access.",
         writes=True, status=204, params={"userKey": "", "clientId": ""}, name="admin_tokens_delete")
    def tokens_delete(self, userKey: str, clientId: str) -> None:
        self._owned_item(self.db.tokens, userKey, clientId, "clientId", pop=True)

    @api("directory.asps.list", f"GET {A}/users/{{userKey}}/asps", "A user's app passwords.",
         params={"userKey": ""}, name="admin_asps_list")
    def asps_list(self, userKey: str) -> dict[str, Any]:
        return self._owned(self.db.asps, userKey, "codeId", "admin#directory#aspList", asp_json)

    @api("directory.asps.get", f"GET {A}/users/{{userKey}}/asps/{{codeId}}", "Get one app password.",
         params={"userKey": "", "codeId": ""}, name="admin_asps_get")
    def asps_get(self, userKey: str, codeId: int) -> dict[str, Any]:
        return asp_json(self._owned_item(self.db.asps, userKey, codeId, "codeId"))

    @api("directory.asps.delete", f"DELETE {A}/users/{{userKey}}/asps/{{codeId}}", "Revoke an app password.",
         writes=True, status=204, params={"userKey": "", "codeId": ""}, name="admin_asps_delete")
    def asps_delete(self, userKey: str, codeId: int) -> None:
        self._owned_item(self.db.asps, userKey, codeId, "codeId", pop=True)

    @api("directory.verificationCodes.list", f"GET {A}/users/{{userKey}}/verificationCodes",
         "A user's 2-step backup codes.", params={"userKey": ""}, name="admin_verificationCodes_list")
    def verificationCodes_list(self, userKey: str) -> dict[str, Any]:
        return self._owned(self.db.codes, userKey, "verificationCode", "admin#directory#verificationCodesList",
                           code_json)

    @api("directory.verificationCodes.generate", f"POST {A}/users/{{userKey}}/verificationCodes/generate",
         "Replace a user's backup codes with 10 new ones.", writes=True, status=204, params={"userKey": ""},
         name="admin_verificationCodes_generate")
    def verificationCodes_generate(self, userKey: str) -> None:
        u = self._user(userKey)
        self._drop_codes(u.id)
        for _ in range(10):
            code = self.new_id("code", DIGITS, 8)
            self.db.codes[f"{u.id}/{code}"] = VerificationCode(userId=u.id, verificationCode=code)

    @api("directory.verificationCodes.invalidate", f"POST {A}/users/{{userKey}}/verificationCodes/invalidate",
         "Invalidate all of a user's backup codes.", writes=True, status=204, params={"userKey": ""},
         name="admin_verificationCodes_invalidate")
    def verificationCodes_invalidate(self, userKey: str) -> None:
        self._drop_codes(self._user(userKey).id)

    def _drop_codes(self, uid: str) -> None:
        for k in [k for k, c in self.db.codes.items() if c.userId == uid]:
            del self.db.codes[k]

    # -- seeding helpers ------------------------------------------------------------------------
    def user_id(self, email: str) -> str:
        return self._user(email).id

    def add_token(self, email: str, *, display_text: str, scopes: list[str], client_id: str | None = None,
                  native_app: bool = False) -> Token:
        """Plant an OAuth grant of a third-party app for a user."""
        uid = self._user(email).id
        cid = client_id or (make_id(self.ws.seed, f"admin.client.{display_text}", self.db.seq, DIGITS, 12) +
                            "-" + self.new_id("client", "abcdefghijklmnopqrstuvwxyz0123456789", 32) +
                            ".apps.googleusercontent.com")
        t = Token(userId=uid, clientId=cid, displayText=display_text, scopes=tuple(scopes), nativeApp=native_app)
        self.db.tokens[f"{uid}/{cid}"] = t
        return t

    def add_asp(self, email: str, *, name: str, created: datetime, last_used: datetime | None = None) -> Asp:
        """Plant an app password."""
        uid = self._user(email).id
        self.db.seq += 1
        code = 1000 + self.db.seq
        a = Asp(userId=uid, codeId=code, name=name, creationTime=int(created.timestamp() * 1000),
                lastTimeUsed=int((last_used or created).timestamp() * 1000))
        self.db.asps[f"{uid}/{code}"] = a
        return a

    def add_group(self, email: str, *, name: str, description: str = "", members: dict[str, str] | None = None) -> Group:
        g = Group(id="0" + self.new_id("group", HEX, 14), email=email, name=name, description=description)
        self.db.groups[g.id] = g
        for addr, role in (members or {}).items():
            u = self._user(addr)
            self.db.members[f"{g.id}/{u.id}"] = Member(groupId=g.id, id=u.id, email=u.primaryEmail, role=role)
        return g

    def add_codes(self, email: str, n: int = 10) -> list[str]:
        u = self._user(email)
        self.verificationCodes_generate(u.id)
        return [c.verificationCode for c in self.db.codes.values() if c.userId == u.id][:n]
