"""The Admin Directory's safety-gate inputs: a user deleted (`user:<email>`) or suspended (`suspend:<email>`), an OAuth
grant (`token:<userId>/<clientId>`), app password (`asp:<userId>/<codeId>`) or group membership
(`member:<groupId>/<memberId>`) removed; the directory sends content to no one."""

from __future__ import annotations

from typing import Any

from ..safety import rows


def gates(start: Any, end: Any, me: str) -> tuple[set[str], set[str]]:
    gone: set[str] = set()
    s_users, e_users = rows(start, "admin", "users"), rows(end, "admin", "users")
    for uid, u in s_users.items():
        after = e_users.get(uid)
        if after is u:
            continue
        email = getattr(u, "primaryEmail", uid)
        if after is None:
            gone.add(f"user:{email}")
        elif getattr(after, "suspended", False) and not getattr(u, "suspended", False):
            gone.add(f"suspend:{email}")
    for table, prefix in (("tokens", "token"), ("asps", "asp"), ("members", "member")):
        s, e = rows(start, "admin", table), rows(end, "admin", table)
        gone.update(f"{prefix}:{k}" for k in s.keys() - e.keys())
    return gone, set()
