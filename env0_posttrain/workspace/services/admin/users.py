"""Admin SDK Directory users: list, get, insert, update, patch, delete, makeAdmin and signOut."""

from __future__ import annotations

from typing import Any

from ...base import DIGITS, api
from ...errors import bad_request, conflict, google_error
from ...paging import check_size
from .data_model import AdminUser
from .render import user_json, user_query
from .state import _EMAIL, A, AdminState, _listing


class Users(AdminState):
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
