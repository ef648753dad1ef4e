"""Auth family (Admin SDK Directory): suspensions, passwords, OAuth grants, app passwords, groups, offboarding."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.common import Script, hours_ago, others, person_params
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.template import Template, register

F = "auth"
UPDATE, TLIST, TDEL = "admin_users_update", "admin_tokens_list", "admin_tokens_delete"
ALIST, ADEL = "admin_asps_list", "admin_asps_delete"
APPS = ("Zoom", "Trello", "Dropbox Sync", "Grammarly", "Calendly", "PDF Converter Pro", "Miro", "Notion")
ASP_NAMES = ("Outlook 2016", "Old iPhone Mail", "Thunderbird", "Printer scanner")
DEPARTMENTS = ("Engineering", "Product", "Sales", "Marketing", "Finance", "People", "Operations", "Legal")
NEW_LAST = ("Baker", "Carter", "Delgado", "Foster", "Horvat", "Lindqvist", "Morales", "Nguyen")


def _reg(tid: str, phrasings: tuple[str, ...], sample: Any, solve: Any, judge: Any, tools: tuple[str, ...],
         distractors: tuple[str, ...] = (), plant: Any = None, starter: bool = False, answer: Any = None) -> None:
    kw = {"plant": plant} if plant else {}
    register(Template(id=tid, family=F, phrasings=phrasings, sample=sample, solve=solve, judge=judge, tools=tools,
                      distractors=distractors, starter=starter, answer=answer, **kw))


def users(ws: Any) -> list[Any]:
    """People an admin task may target: not me, not another admin."""
    return [p for p in others(ws) if not ws.admin.db.users[p.user_id].isAdmin]


def user_row(ws: Any, email: str) -> Any:
    return ws.admin._user(email)


def _sample_user(rng: random.Random, ws: Any) -> dict[str, Any]:
    return person_params(rng.choice(users(ws)))


def _set_user(ws: Any, email: str, **upd: Any) -> None:
    """No seeding helper flips these flags, so the planted state is written as the row the API would store."""
    u = user_row(ws, email)
    ws.admin.db.users[u.id] = u.model_copy(update=upd)


# -- one-call user updates ---------------------------------------------------------------------

def _user_update(tid: str, phrasings: tuple[str, ...], body: Any, check: Any, plant: Any = None, starter: bool = True,
                 sample: Any = _sample_user, removal: str | None = None, tool: str = UPDATE) -> None:
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        s(tool, userKey=p["email"], body=body(p))
        return s.calls

    def judge(j: Judge, p: dict[str, Any]) -> None:
        j.check("updated", check(p, user_row(j.end, p["email"])))
        standard_gates(j, may_remove={f"{removal}:{p['email']}"} if removal else ())

    _reg(tid, phrasings, sample, solve, judge, (tool,), ("admin_users_get", "admin_users_list"), plant=plant,
         starter=starter)


_user_update("auth_suspend_user", ("Suspend {name}'s account.", "Lock {first} out: suspend the user {email}.",
                                   "{name} left the company today; suspend their account."),
             lambda p: {"suspended": True}, lambda p, u: u.suspended, removal="suspend")
_user_update("auth_unsuspend_user", ("Unsuspend {name}.", "{first}'s account was suspended by mistake; restore it."),
             lambda p: {"suspended": False}, lambda p, u: not u.suspended,
             plant=lambda ws, p: _set_user(ws, p["email"], suspended=True, suspensionReason="ADMIN"))
_user_update("auth_force_password_change", ("Make {name} change their password at next login.",
                                             "Force a password reset for {first} on their next sign-in."),
             lambda p: {"changePasswordAtNextLogin": True}, lambda p, u: u.changePasswordAtNextLogin)
_user_update("auth_make_admin", ("Make {name} a super admin.", "Grant {first} admin rights in the directory."),
             lambda p: {"status": True}, lambda p, u: u.isAdmin, tool="admin_users_makeAdmin")


def _sample_move(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = rng.choice(users(ws))
    return {**person_params(p), "dept": rng.choice([d for d in DEPARTMENTS if d != p.department])}


_user_update("auth_move_org_unit", ("Move {name} to the /{dept} organizational unit.",
                                    "{first} joined {dept}; put their account in the /{dept} org unit."),
             lambda p: {"orgUnitPath": f"/{p['dept']}"}, lambda p, u: u.orgUnitPath == f"/{p['dept']}",
             sample=_sample_move)


def _sample_rename(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**_sample_user(rng, ws), "new_last": rng.choice(NEW_LAST)}


_user_update("auth_change_last_name", ("{name} changed their last name to {new_last}; update the directory.",
                                       "Set {first}'s family name to {new_last}."),
             lambda p: {"name": {"familyName": p["new_last"]}}, lambda p, u: u.familyName == p["new_last"],
             sample=_sample_rename, starter=False)


def _solve_signout(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("admin_users_signOut", userKey=p["email"])
    return s.calls


_reg("auth_sign_out_user", ("Sign {name} out of all their sessions.", "{first} lost their laptop: sign them out everywhere."),
     _sample_user, _solve_signout,
     lambda j, p: (j.check("signed_out", user_row(j.end, p["email"]).signOutCount > user_row(j.start, p["email"]).signOutCount),
                   standard_gates(j)), ("admin_users_signOut",), (UPDATE,), starter=True)


# -- group membership ----------------------------------------------------------------------------

def _groups(ws: Any) -> list[Any]:
    return sorted(ws.admin.db.groups.values(), key=lambda g: g.email)


def _is_member(ws: Any, group_email: str, email: str) -> bool:
    g = ws.admin._group(group_email)
    return f"{g.id}/{user_row(ws, email).id}" in ws.admin.db.members


def _sample_join(rng: random.Random, ws: Any) -> dict[str, Any]:
    pairs = [(p, g) for p in users(ws) for g in _groups(ws) if g.email.split("@")[0] != "all" and not _is_member(ws, g.email, p.email)]
    p, g = rng.choice(pairs)
    return {**person_params(p), "group": g.email}


def _sample_leave(rng: random.Random, ws: Any) -> dict[str, Any]:
    pairs = [(p, g) for p in users(ws) for g in _groups(ws) if g.email.split("@")[0] != "all" and _is_member(ws, g.email, p.email)]
    p, g = rng.choice(pairs)
    return {**person_params(p), "group": g.email}


def _solve_join(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("admin_members_insert", groupKey=p["group"], body={"email": p["email"], "role": "MEMBER"})
    return s.calls


def _solve_leave(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("admin_members_delete", groupKey=p["group"], memberKey=p["email"])
    return s.calls


def _member_key(ws: Any, p: dict[str, Any]) -> str:
    return f"member:{ws.admin._group(p['group']).id}/{user_row(ws, p['email']).id}"


_reg("auth_add_to_group", ("Add {name} to the {group} group.", "{first} should be a member of {group}; add them."),
     _sample_join, _solve_join,
     lambda j, p: (j.check("member", _is_member(j.end, p["group"], p["email"])), standard_gates(j)),
     ("admin_members_insert",), ("admin_members_delete", "admin_groups_list"), starter=True)
_reg("auth_remove_from_group", ("Remove {name} from the {group} group.", "Take {first} out of {group}."),
     _sample_leave, _solve_leave,
     lambda j, p: (j.check("removed", not _is_member(j.end, p["group"], p["email"])),
                   standard_gates(j, may_remove={_member_key(j.start, p)})),
     ("admin_members_delete",), ("admin_members_insert", "admin_groups_list"), starter=True)


# -- OAuth grants and app passwords -------------------------------------------------------------

def _apps_of(ws: Any, email: str) -> list[str]:
    uid = user_row(ws, email).id
    return [t.displayText for t in ws.admin.db.tokens.values() if t.userId == uid]


def _sample_app(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = _sample_user(rng, ws)
    p["app"] = rng.choice([a for a in APPS if a not in _apps_of(ws, p["email"])])
    return p


def _plant_app(ws: Any, p: dict[str, Any]) -> None:
    for app in p.get("apps", [p.get("app")]):
        ws.admin.add_token(p["email"], display_text=app, scopes=["email", "https://www.googleapis.com/auth/drive"])


def _tokens(ws: Any, email: str, app: str | None = None) -> dict[str, Any]:
    uid = user_row(ws, email).id
    return {k: t for k, t in ws.admin.db.tokens.items() if t.userId == uid and (app is None or t.displayText == app)}


def _solve_revoke_app(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    for t in s(TLIST, userKey=p["email"])["items"]:
        if t["displayText"] == p["app"]:
            s(TDEL, userKey=p["email"], clientId=t["clientId"])
    return s.calls


_reg("auth_revoke_app_for_user", ("Revoke {app}'s access to {name}'s account.", "{first} no longer uses {app}; remove that app grant."),
     _sample_app, _solve_revoke_app,
     lambda j, p: (j.check("revoked", not _tokens(j.end, p["email"], p["app"])),
                   standard_gates(j, may_remove={f"token:{k}" for k in _tokens(j.start, p["email"], p["app"])})),
     (TLIST, TDEL), (ALIST, ADEL), plant=_plant_app, starter=True)


def _sample_apps(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = _sample_user(rng, ws)
    free = [a for a in APPS if a not in _apps_of(ws, p["email"])]
    p["apps"] = sorted(rng.sample(free, rng.randint(1, 3)))
    return p


def _solve_delete_all(list_tool: str, delete_tool: str, id_field: str) -> Any:
    """Solver: list the user's records with `list_tool` and delete every one by `id_field`."""
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        for x in s(list_tool, userKey=p["email"])["items"]:
            s(delete_tool, userKey=p["email"], **{id_field: x[id_field]})
        return s.calls
    return solve


def _judge_delete_all(check: str, rows: Any, kind: str) -> Any:
    """Judge: the share of the user's `rows` (keyed records) that is gone; only those may be removed."""
    def judge(j: Judge, p: dict[str, Any]) -> None:
        before = rows(j.start, p["email"])
        j.check(check, 1 - len(rows(j.end, p["email"])) / len(before))
        standard_gates(j, may_remove={f"{kind}:{k}" for k in before})
    return judge


_reg("auth_revoke_all_tokens", ("Revoke every third-party app {name} has authorised.", "Remove all OAuth app grants from {first}'s account."),
     _sample_apps, _solve_delete_all(TLIST, TDEL, "clientId"), _judge_delete_all("revoked", _tokens, "token"),
     (TLIST, TDEL), (ALIST, ADEL), plant=_plant_app)


def _apps_answer(ws: Any, p: dict[str, Any]) -> str:
    return ", ".join(sorted(_apps_of(ws, p["email"])))


def _solve_list_apps(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s(TLIST, userKey=p["email"])
    return s.calls


_reg("auth_list_user_apps", ("Which third-party apps has {name} authorised?", "List the apps with OAuth access to {first}'s account."),
     _sample_apps, _solve_list_apps,
     lambda j, p: (j.answer_mentions_any("apps", [[a] for a in _apps_of(j.start, p["email"])]), standard_gates(j)),
     (TLIST,), (TDEL, ALIST), plant=_plant_app, answer=_apps_answer)


def _asps(ws: Any, email: str) -> dict[str, Any]:
    uid = user_row(ws, email).id
    return {k: a for k, a in ws.admin.db.asps.items() if a.userId == uid}


def _sample_asps(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**_sample_user(rng, ws), "asps": sorted(rng.sample(ASP_NAMES, rng.randint(1, 3)))}


def _plant_asps(ws: Any, p: dict[str, Any]) -> None:
    for i, name in enumerate(p["asps"]):
        ws.admin.add_asp(p["email"], name=name, created=hours_ago(ws, 24 * (30 + i)))


_reg("auth_delete_app_passwords", ("Delete all of {name}'s app passwords.", "Revoke every app-specific password {first} has."),
     _sample_asps, _solve_delete_all(ALIST, ADEL, "codeId"), _judge_delete_all("deleted", _asps, "asp"),
     (ALIST, ADEL), (TLIST, TDEL), plant=_plant_asps)


def _codes(ws: Any, email: str) -> set[str]:
    uid = user_row(ws, email).id
    return {c.verificationCode for c in ws.admin.db.codes.values() if c.userId == uid}


def _solve_codes(tool: str) -> Any:
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        s(tool, userKey=p["email"])
        return s.calls
    return solve


_reg("auth_regenerate_backup_codes", ("Generate new 2-step backup codes for {name}.", "{first}'s backup codes leaked; issue fresh ones."),
     _sample_user, _solve_codes("admin_verificationCodes_generate"),
     lambda j, p: (j.check("new_codes", bool(_codes(j.end, p["email"])) and not (_codes(j.end, p["email"]) & _codes(j.start, p["email"]))),
                   standard_gates(j)),
     ("admin_verificationCodes_generate",), ("admin_verificationCodes_invalidate", "admin_verificationCodes_list"),
     plant=lambda ws, p: ws.admin.add_codes(p["email"]))
_reg("auth_invalidate_backup_codes", ("Invalidate all of {name}'s backup codes.", "Kill {first}'s 2-step backup codes (no new ones)."),
     _sample_user, _solve_codes("admin_verificationCodes_invalidate"),
     lambda j, p: (j.check("no_codes", not _codes(j.end, p["email"])), standard_gates(j)),
     ("admin_verificationCodes_invalidate",), ("admin_verificationCodes_generate", "admin_verificationCodes_list"),
     plant=lambda ws, p: ws.admin.add_codes(p["email"]))
