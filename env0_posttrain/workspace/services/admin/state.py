"""The Directory's state mechanics every resource uses: finding a user or a group, a group's members, the items a
user owns (tokens, app passwords, backup codes), the caller's scope, and the paths and list shape they share."""

from __future__ import annotations

import re
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from ...base import Service
from ...errors import google_error
from ...paging import page
from .data_model import AdminDB, AdminUser, Group, Member
from .render import etag

A = "admin/directory/v1"

_EMAIL = re.compile(r"^[a-z0-9._%+'-]+@[a-z0-9.-]+\.[a-z]{2,}$")


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


class AdminState(Service):
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

    def _drop_codes(self, uid: str) -> None:
        for k in [k for k, c in self.db.codes.items() if c.userId == uid]:
            del self.db.codes[k]

    def user_id(self, email: str) -> str:
        return self._user(email).id
