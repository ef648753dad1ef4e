"""Auth family, the bulk jobs: work over many users or many grants at once (lists, offboarding, app bans)."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.auth import (
    ADEL, ALIST, APPS, ASP_NAMES, TDEL, TLIST, UPDATE, _apps_of, _asps, _groups, _plant_app, _plant_asps, _reg,
    _sample_apps, _set_user, _tokens, user_row, users,
)
from env0_posttrain.tasks.families.common import Script
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge


# -- many users ------------------------------------------------------------------------------------

def _sample_suspended(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {"emails": sorted(p.email for p in rng.sample(users(ws), rng.randint(1, 3)))}


def _plant_suspended(ws: Any, p: dict[str, Any]) -> None:
    for e in p["emails"]:
        _set_user(ws, e, suspended=True, suspensionReason="ADMIN")


def _suspended(ws: Any) -> list[str]:
    return sorted(u.primaryEmail for u in ws.admin.db.users.values() if u.suspended)


_reg("auth_list_suspended_users", ("Which user accounts are currently suspended?", "Tell me who is suspended in the directory."),
     _sample_suspended, lambda ws, p: (s := Script(ws), s("admin_users_list", query="isSuspended=true"), s.calls)[-1],
     lambda j, p: (j.answer_mentions_any("suspended", [[e, j.start.person(e).name] for e in _suspended(j.start)]), standard_gates(j)),
     ("admin_users_list",), ("admin_users_get", UPDATE), plant=_plant_suspended,
     answer=lambda ws, p: ", ".join(ws.person(e).name for e in _suspended(ws)))


def _sample_offboard(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = _sample_apps(rng, ws)
    p["asps"] = sorted(rng.sample(ASP_NAMES, rng.randint(1, 2)))
    return p


def _plant_offboard(ws: Any, p: dict[str, Any]) -> None:
    _plant_app(ws, p)
    _plant_asps(ws, p)


def _solve_offboard(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    e = p["email"]
    s(UPDATE, userKey=e, body={"suspended": True})
    s("admin_users_signOut", userKey=e)
    for t in s(TLIST, userKey=e)["items"]:
        s(TDEL, userKey=e, clientId=t["clientId"])
    for a in s(ALIST, userKey=e)["items"]:
        s(ADEL, userKey=e, codeId=a["codeId"])
    for g in s("admin_groups_list", userKey=e).get("groups", []):
        s("admin_members_delete", groupKey=g["email"], memberKey=e)
    return s.calls


def _judge_offboard(j: Judge, p: dict[str, Any]) -> None:
    e = p["email"]
    before, after = user_row(j.start, e), user_row(j.end, e)
    j.check("suspended", after.suspended)
    j.check("signed_out", after.signOutCount > before.signOutCount)
    j.check("tokens_revoked", not _tokens(j.end, e))
    j.check("asps_deleted", not _asps(j.end, e))
    j.check("groups_left", not [m for m in j.end.admin.db.members.values() if m.id == before.id])
    keys = {f"token:{k}" for k in _tokens(j.start, e)} | {f"asp:{k}" for k in _asps(j.start, e)} | {f"suspend:{e}"}
    keys |= {f"member:{k}" for k, m in j.start.admin.db.members.items() if m.id == before.id}
    standard_gates(j, may_remove=keys)


_reg("auth_offboard_user", ("Offboard {name}: suspend the account, sign them out, revoke all app grants and app passwords, "
                            "and remove them from every group.",
                            "{first} has left. Fully lock down {email}: suspension, sign-out, no OAuth tokens, no app "
                            "passwords, no group memberships."),
     _sample_offboard, _solve_offboard, _judge_offboard,
     (UPDATE, "admin_users_signOut", TLIST, TDEL, ALIST, ADEL, "admin_groups_list", "admin_members_delete"), (),
     plant=_plant_offboard)


def _sample_group_app(rng: random.Random, ws: Any) -> dict[str, Any]:
    groups = [g for g in _groups(ws) if g.email.split("@")[0] not in ("all",)]
    g = rng.choice(groups)
    members = sorted(m.email for m in ws.admin.db.members.values() if m.groupId == g.id and m.email != ws.me.email)
    app = rng.choice(APPS)
    holders = sorted(rng.sample(members, min(len(members), rng.randint(1, 3))))
    return {"group": g.email, "app": app, "holders": [h for h in holders if app not in _apps_of(ws, h)] or holders[:1]}


def _plant_group_app(ws: Any, p: dict[str, Any]) -> None:
    for h in p["holders"]:
        if p["app"] not in _apps_of(ws, h):
            ws.admin.add_token(h, display_text=p["app"], scopes=["email"])


def _solve_group_app(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    for m in s("admin_members_list", groupKey=p["group"])["members"]:
        if m["email"] == ws.me.email:
            continue
        for t in s(TLIST, userKey=m["email"])["items"]:
            if t["displayText"] == p["app"]:
                s(TDEL, userKey=m["email"], clientId=t["clientId"])
    return s.calls


def _group_tokens(ws: Any, p: dict[str, Any]) -> dict[str, Any]:
    g = ws.admin._group(p["group"])
    ids = {m.id for m in ws.admin.db.members.values() if m.groupId == g.id}
    return {k: t for k, t in ws.admin.db.tokens.items() if t.userId in ids and t.displayText == p["app"]}


def _judge_group_app(j: Judge, p: dict[str, Any]) -> None:
    before = _group_tokens(j.start, p)
    j.check("revoked", 1 - len(_group_tokens(j.end, p)) / len(before))
    standard_gates(j, may_remove={f"token:{k}" for k in before})


_reg("auth_revoke_app_in_group", ("Revoke {app} for every member of the {group} group.",
                                  "{app} is banned for {group}: remove its access from each member's account."),
     _sample_group_app, _solve_group_app, _judge_group_app, ("admin_members_list", TLIST, TDEL), (ALIST,),
     plant=_plant_group_app)
