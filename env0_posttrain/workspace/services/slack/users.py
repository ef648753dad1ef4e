"""Slack users.*: the people directory, profiles and presence.

Profile edits and the manual presence are fields of the user's row (None until set, so seeded dumps do not
change). As in Slack, a member edits their own profile; an admin may edit a non-admin's
(`cannot_update_admin_user` otherwise, `not_admin` for a non-admin editing someone else). Presence is
"active" unless the user set themselves away.
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import slack_error
from ...paging import page
from .state import SlackState, _limit

EDITABLE = {"display_name": 80, "real_name": 250, "first_name": 250, "last_name": 250, "title": 250, "phone": 250,
            "status_text": 100, "status_emoji": 100, "status_expiration": 0}


class Users(SlackState):
    @api("users.list", "POST api/users.list", "List workspace members.", params={"limit": "", "cursor": ""})
    def users_list(self, limit: int | None = None, cursor: str | None = None) -> dict[str, Any]:
        users = [self.user_json(u) for u in sorted(self.db.users.values(), key=lambda u: u.id)]
        chunk, nxt = page(users, cursor, _limit(limit, 1000), slack=True)
        return {"ok": True, "members": chunk, "cache_ts": int(self.ws.now.timestamp()),
                "response_metadata": {"next_cursor": nxt or ""}}

    @api("users.info", "POST api/users.info", "A member's profile.", params={"user": "user id"})
    def users_info(self, user: str) -> dict[str, Any]:
        u = self.db.users.get(user)
        if u is None:
            raise slack_error("user_not_found")
        return {"ok": True, "user": self.user_json(u)}

    @api("users.lookupByEmail", "POST api/users.lookupByEmail", "Find a member by email.", params={"email": ""})
    def users_lookupByEmail(self, email: str) -> dict[str, Any]:
        e = email.strip().lower()
        for u in self.db.users.values():
            if u.email == e and not u.deleted:
                return {"ok": True, "user": self.user_json(u)}
        raise slack_error("users_not_found")

    @api("users.profile.get", "POST api/users.profile.get", "A member's profile (default: yours), with status.",
         params={"user": "user id (default: you)"})
    def users_profile_get(self, user: str | None = None, include_labels: bool | None = None) -> dict[str, Any]:
        u = self.db.users.get(user or self.me)
        if u is None:
            raise slack_error("user_not_found")
        return {"ok": True, "profile": self.profile_json(u)}

    @api("users.profile.set", "POST api/users.profile.set",
         "Set your profile fields, e.g. profile={\"status_text\": \"In a meeting\", \"status_emoji\": \":calendar:\"}.",
         writes=True, params={"profile": "fields to set: display_name, title, phone, status_text, status_emoji, "
                                         "status_expiration (Unix time)", "name": "one field's name (instead of "
                                         "profile)", "value": "that field's value", "user": "user id (admins only)"})
    def users_profile_set(self, profile: dict | None = None, name: str | None = None, value: str | None = None,
                          user: str | None = None) -> dict[str, Any]:
        uid = user or self.me
        u = self.db.users.get(uid)
        if u is None:
            raise slack_error("user_not_found")
        if uid != self.me:
            me = self.db.users.get(self.me)
            if not (me and me.is_admin):
                raise slack_error("not_admin")
            if u.is_admin:
                raise slack_error("cannot_update_admin_user")
        changes = dict(profile or {})
        if name is not None:
            changes[name] = value if value is not None else ""
        if not changes or any(k not in EDITABLE for k in changes):
            raise slack_error("invalid_profile")
        update: dict[str, Any] = {}
        for k, v in changes.items():
            if k == "status_expiration":
                try:
                    update[k] = int(v or 0)
                except (TypeError, ValueError):
                    raise slack_error("invalid_profile") from None
                continue
            if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                raise slack_error("invalid_profile")
            v = str(v)
            if len(v) > EDITABLE[k]:
                raise slack_error("too_long")
            if k == "status_emoji" and v and not (v.startswith(":") and v.endswith(":") and len(v) > 2):
                raise slack_error("invalid_profile")
            update[k] = v
        first, _, last = u.real_name.partition(" ")
        if "first_name" in update or "last_name" in update:
            update.setdefault("real_name", f"{update.pop('first_name', first)} {update.pop('last_name', last)}".strip())
        update.pop("first_name", None)
        update.pop("last_name", None)
        if not update.get("real_name", u.real_name):
            raise slack_error("invalid_profile")
        u = u.model_copy(update=update)
        self.db.users[u.id] = u
        return {"ok": True, "profile": self.profile_json(u)}

    def set_profile(self, user: str, **fields: Any) -> Any:
        """Seeding helper: set profile fields (display_name, status_text, status_emoji, ..., presence="away")."""
        u = self.db.users[user].model_copy(update=fields)
        self.db.users[user] = u
        return u

    @api("users.getPresence", "POST api/users.getPresence", "Whether a member is active or away (default: you).",
         params={"user": "user id (default: you)"})
    def users_getPresence(self, user: str | None = None) -> dict[str, Any]:
        u = self.db.users.get(user or self.me)
        if u is None:
            raise slack_error("user_not_found")
        presence = "away" if u.presence == "away" or u.deleted else "active"
        out: dict[str, Any] = {"ok": True, "presence": presence}
        if u.id == self.me:
            out.update({"online": presence == "active", "auto_away": False, "manual_away": u.presence == "away",
                        "connection_count": 1 if presence == "active" else 0,
                        "last_activity": int(self.ws.now.timestamp())})
        return out

    @api("users.setPresence", "POST api/users.setPresence", "Set yourself away, or back to automatic (auto).",
         writes=True, params={"presence": "auto or away"})
    def users_setPresence(self, presence: str) -> dict[str, Any]:
        if presence not in ("auto", "away"):
            raise slack_error("invalid_presence")
        u = self.db.users.get(self.me)
        if u is None:
            raise slack_error("user_not_found")
        want = "away" if presence == "away" else None
        if u.presence != want:
            self.db.users[u.id] = u.model_copy(update={"presence": want})
        return {"ok": True}
