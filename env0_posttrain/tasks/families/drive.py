"""Drive family: sharing, unsharing, renaming, moving, copying, trashing and questions about files."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.common import Script, pick_people, person_params
from env0_posttrain.tasks.families.drive_support import (
    FOLDER, file_by_name, find_file, new_files, plant_file, role_for, sample_file, sample_folder,
)
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import DOC_LINES
from env0_posttrain.tasks.template import Template, register

F = "drive"
LIST, UPDATE = "drive_files_list", "drive_files_update"
PCREATE, PLIST, PDELETE = "drive_permissions_create", "drive_permissions_list", "drive_permissions_delete"


def _reg(tid: str, phrasings: tuple[str, ...], sample: Any, solve: Any, judge: Any, tools: tuple[str, ...],
         distractors: tuple[str, ...] = (), plant: Any = None, starter: bool = False, answer: Any = None) -> None:
    kw = {"plant": plant} if plant else {}
    register(Template(id=tid, family=F, phrasings=phrasings, sample=sample, solve=solve, judge=judge, tools=tools,
                      distractors=distractors, starter=starter, answer=answer, **kw))


def _sample_person_file(rng: random.Random, ws: Any) -> dict[str, Any]:
    (p,) = pick_people(rng, ws)
    return {**sample_file(rng, ws), **person_params(p)}


def _plant_mine(ws: Any, p: dict[str, Any]) -> None:
    plant_file(ws, p["file"], shared_with=p.get("shared") or None, anyone=p.get("anyone"),
               domain_role=p.get("domain_role"))


# -- share ---------------------------------------------------------------------------------------

def _share(role: str, phrasings: tuple[str, ...], starter: bool) -> None:
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        fid = file_by_name(s, p["file"])["id"]
        s(PCREATE, fileId=fid, body={"type": "user", "role": role, "emailAddress": p["email"]})
        return s.calls

    def judge(j: Judge, p: dict[str, Any]) -> None:
        f = find_file(j.start, p["file"])
        j.check("shared", role_for(j.end.drive.db.files.get(f.id), p["email"]) == role)
        standard_gates(j, audience={p["email"]})

    _reg(f"drive_share_{role}", phrasings, _sample_person_file, solve, judge, (LIST, PCREATE), (PLIST, PDELETE),
         plant=_plant_mine, starter=starter)


_share("reader", ("Share {file} with {name} as a reader.", "Give {first} view-only access to {file}.",
                  "{email} should be able to read {file}; share it with them (reader)."), True)
_share("writer", ("Share {file} with {name} as an editor.", "Give {first} edit access to {file}.",
                  "Let {email} edit {file} (writer role)."), True)
_share("commenter", ("Share {file} with {name} as a commenter.", "{first} should be able to comment on {file}, not edit it."),
       True)


def _sample_several(rng: random.Random, ws: Any) -> dict[str, Any]:
    people = pick_people(rng, ws, 3)
    return {**sample_file(rng, ws), **{k: v for i, q in enumerate(people) for k, v in person_params(q, "abc"[i] + "_").items()}}


def _solve_several(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    fid = file_by_name(s, p["file"])["id"]
    for x in "abc":
        s(PCREATE, fileId=fid, body={"type": "user", "role": "reader", "emailAddress": p[f"{x}_email"]})
    return s.calls


def _judge_several(j: Judge, p: dict[str, Any]) -> None:
    f = j.end.drive.db.files.get(find_file(j.start, p["file"]).id)
    emails = [p[f"{x}_email"] for x in "abc"]
    j.check("shared", sum(role_for(f, e) == "reader" for e in emails) / 3)
    standard_gates(j, audience=set(emails))


_reg("drive_share_with_three", ("Share {file} with {a_name}, {b_name} and {c_name}, read-only.",
                                "Give {a_first}, {b_first} and {c_first} reader access to {file}."),
     _sample_several, _solve_several, _judge_several, (LIST, PCREATE), (PLIST,), plant=_plant_mine)


# -- unshare / change role -------------------------------------------------------------------------

def _sample_shared(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = _sample_person_file(rng, ws)
    (other,) = [q for q in pick_people(rng, ws, 2) if q.email != p["email"]][:1] or pick_people(rng, ws)
    p["shared"] = {p["email"]: "writer", other.email: "reader"} if other.email != p["email"] else {p["email"]: "writer"}
    return p


def _solve_unshare(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    fid = file_by_name(s, p["file"])["id"]
    perms = s(PLIST, fileId=fid)["permissions"]
    pid = next(x["id"] for x in perms if x.get("emailAddress") == p["email"])
    s(PDELETE, fileId=fid, permissionId=pid)
    return s.calls


def _judge_unshare(j: Judge, p: dict[str, Any]) -> None:
    f = find_file(j.start, p["file"])
    j.check("unshared", role_for(j.end.drive.db.files.get(f.id), p["email"]) is None)
    standard_gates(j, may_remove={f"perm:{f.id}/{p['email']}"})


_reg("drive_unshare_person", ("Remove {name}'s access to {file}.", "{first} should no longer see {file}; revoke their access."),
     _sample_shared, _solve_unshare, _judge_unshare, (LIST, PLIST, PDELETE), (PCREATE,), plant=_plant_mine)


def _solve_downgrade(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    fid = file_by_name(s, p["file"])["id"]
    s(PCREATE, fileId=fid, body={"type": "user", "role": "reader", "emailAddress": p["email"]})
    return s.calls


def _judge_downgrade(j: Judge, p: dict[str, Any]) -> None:
    f = find_file(j.start, p["file"])
    j.check("reader_now", role_for(j.end.drive.db.files.get(f.id), p["email"]) == "reader")
    standard_gates(j)


_reg("drive_downgrade_to_reader", ("{name} can edit {file}; make them a reader instead.",
                                   "Change {first}'s access to {file} from editor to viewer."),
     _sample_shared, _solve_downgrade, _judge_downgrade, (LIST, PCREATE), (PLIST, PDELETE), plant=_plant_mine)


def _sample_public(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_file(rng, ws), "anyone": "reader"}


def _solve_unpublic(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    fid = file_by_name(s, p["file"])["id"]
    perms = s(PLIST, fileId=fid)["permissions"]
    s(PDELETE, fileId=fid, permissionId=next(x["id"] for x in perms if x["type"] == "anyone"))
    return s.calls


def _judge_unpublic(j: Judge, p: dict[str, Any]) -> None:
    f = find_file(j.start, p["file"])
    after = j.end.drive.db.files.get(f.id)
    j.check("link_off", after is not None and not any(x.type == "anyone" for x in after.permissions))
    standard_gates(j, may_remove={f"perm:{f.id}/anyone"})


_reg("drive_disable_link_sharing", ("Turn off link sharing for {file}.", "{file} is public to anyone with the link; stop that."),
     _sample_public, _solve_unpublic, _judge_unpublic, (LIST, PLIST, PDELETE), (PCREATE,), plant=_plant_mine)


def _sample_lockdown(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = sample_file(rng, ws)
    people = pick_people(rng, ws, rng.randint(1, 3))
    p["shared"] = {q.email: rng.choice(["reader", "writer", "commenter"]) for q in people}
    if rng.random() < 0.5:
        p["anyone"] = "reader"
    if rng.random() < 0.5:
        p["domain_role"] = "reader"
    return p


def _solve_lockdown(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    fid = file_by_name(s, p["file"])["id"]
    for x in s(PLIST, fileId=fid)["permissions"]:
        if x["role"] != "owner":
            s(PDELETE, fileId=fid, permissionId=x["id"])
    return s.calls


def _judge_lockdown(j: Judge, p: dict[str, Any]) -> None:
    f = find_file(j.start, p["file"])
    after = j.end.drive.db.files.get(f.id)
    left = [x for x in (after.permissions if after else ()) if x.role != "owner"]
    total = len([x for x in f.permissions if x.role != "owner"])
    j.check("private", 1 - len(left) / total, f"{len(left)} permissions left")
    j.guard("kept", after is not None and not after.trashed)
    keys = {f"perm:{f.id}/{(x.emailAddress or x.domain or x.type).lower()}" for x in f.permissions}
    standard_gates(j, may_remove=keys)


_reg("drive_make_private", ("Make {file} private: remove every permission except mine.",
                            "Nobody but me should have access to {file} any more. Clean up its sharing."),
     _sample_lockdown, _solve_lockdown, _judge_lockdown, (LIST, PLIST, PDELETE), (PCREATE, UPDATE), plant=_plant_mine)


# -- file edits ----------------------------------------------------------------------------------

def _update(tid: str, phrasings: tuple[str, ...], sample: Any, body_of: Any, check: Any, may_remove: bool = False,
            starter: bool = False) -> None:
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        fid = file_by_name(s, p["file"])["id"]
        s(UPDATE, fileId=fid, body=body_of(p))
        return s.calls

    def judge(j: Judge, p: dict[str, Any]) -> None:
        f = find_file(j.start, p["file"])
        after = j.end.drive.db.files.get(f.id)
        j.check("updated", after is not None and check(p, after))
        standard_gates(j, may_remove={f"file:{f.id}"} if may_remove else ())

    _reg(tid, phrasings, sample, solve, judge, (LIST, UPDATE), ("drive_files_delete", "drive_files_copy"),
         plant=_plant_mine, starter=starter)


_update("drive_rename_file", ("Rename {file} to {file2}.", "Change the name of the file {file} to {file2}."),
        lambda rng, ws: sample_file(rng, ws, 2), lambda p: {"name": p["file2"]}, lambda p, f: f.name == p["file2"])
_update("drive_trash_file", ("Move {file} to the trash.", "Delete the file {file} (trash is fine)."),
        lambda rng, ws: sample_file(rng, ws), lambda p: {"trashed": True}, lambda p, f: f.trashed, may_remove=True)
_update("drive_star_file", ("Star {file} in Drive.", "Add {file} to my starred files."),
        lambda rng, ws: sample_file(rng, ws), lambda p: {"starred": True}, lambda p, f: f.starred, starter=True)


def _sample_desc(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_file(rng, ws), "line": rng.choice(DOC_LINES)}


_update("drive_set_description", ('Set the description of {file} to "{line}".', 'Describe {file} as: {line}'),
        _sample_desc, lambda p: {"description": p["line"]}, lambda p, f: (f.description or "").strip() == p["line"])


def _sample_move(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_file(rng, ws), "folder": sample_folder(rng, ws)}


def _plant_move(ws: Any, p: dict[str, Any]) -> None:
    ws.drive.add_folder(p["folder"])
    _plant_mine(ws, p)


def _solve_move(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    f = file_by_name(s, p["file"], fields="files(id,name,parents)")
    folder = file_by_name(s, p["folder"])
    s(UPDATE, fileId=f["id"], addParents=folder["id"], removeParents=",".join(f["parents"]))
    return s.calls


def _judge_move(j: Judge, p: dict[str, Any]) -> None:
    f, folder = find_file(j.start, p["file"]), find_file(j.start, p["folder"])
    after = j.end.drive.db.files.get(f.id)
    j.check("moved", after is not None and after.parents == (folder.id,))
    standard_gates(j)


_reg("drive_move_to_folder", ("Move {file} into the {folder} folder.", "File {file} under the folder {folder}."),
     _sample_move, _solve_move, _judge_move, (LIST, UPDATE), ("drive_files_create", "drive_files_copy"), plant=_plant_move)


def _solve_folder(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("drive_files_create", body={"name": p["folder"], "mimeType": FOLDER})
    return s.calls


def _judge_folder(j: Judge, p: dict[str, Any]) -> None:
    j.check("folder", any(f.name == p["folder"] and f.mimeType == FOLDER for f in new_files(j.start, j.end)))
    standard_gates(j)


_reg("drive_create_folder", ("Create a folder called {folder} in my Drive.", "Make a new Drive folder named {folder}."),
     lambda rng, ws: {"folder": sample_folder(rng, ws)}, _solve_folder, _judge_folder, ("drive_files_create",), (LIST,),
     starter=True)


def _solve_copy(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    fid = file_by_name(s, p["file"])["id"]
    s("drive_files_copy", fileId=fid, body={"name": p["file2"]})
    return s.calls


def _judge_copy(j: Judge, p: dict[str, Any]) -> None:
    made = [f for f in new_files(j.start, j.end) if f.name == p["file2"]]
    j.check("copied", bool(made))
    src = find_file(j.start, p["file"])
    j.check("content", any((f.content or "") == (src.content or "") for f in made))
    j.guard("original_kept", src.id in j.end.drive.db.files and j.end.drive.db.files[src.id].name == p["file"])
    standard_gates(j)


_reg("drive_copy_file", ("Make a copy of {file} called {file2}.", "Duplicate {file} and name the copy {file2}."),
     lambda rng, ws: sample_file(rng, ws, 2), _solve_copy, _judge_copy, (LIST, "drive_files_copy"), (UPDATE,),
     plant=_plant_mine)


def _sample_text(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_file(rng, ws), "line": rng.choice(DOC_LINES)}


def _solve_text(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("drive_files_create", body={"name": p["file"], "mimeType": "text/plain"}, content=p["line"])
    return s.calls


def _judge_text(j: Judge, p: dict[str, Any]) -> None:
    made = [f for f in new_files(j.start, j.end) if f.name == p["file"]]
    j.check("created", bool(made))
    j.check("content", any(p["line"].lower() in (f.content or "").lower() for f in made))
    standard_gates(j)


_reg("drive_create_text_file", ('Create a text file named {file} containing "{line}".',
                                'Upload a new plain-text file {file} with the single line: {line}'),
     _sample_text, _solve_text, _judge_text, ("drive_files_create",), (LIST, UPDATE))


# -- questions ---------------------------------------------------------------------------------------

def _plant_theirs(ws: Any, p: dict[str, Any]) -> None:
    plant_file(ws, p["file"], owner=p["email"], shared_with={ws.me.email: "reader"})


def _solve_owner(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    file_by_name(s, p["file"], fields="files(id,name,owners)")
    return s.calls


_reg("drive_who_owns_file", ("Who owns the file {file}?", "Find out who the owner of {file} is."),
     _sample_person_file, _solve_owner,
     lambda j, p: (j.answer_mentions_any("owner", [[p["name"], p["email"]]]), standard_gates(j)),
     (LIST,), ("drive_files_get", PLIST), plant=_plant_theirs, answer=lambda ws, p: f"{p['name']} ({p['email']})")


def _sample_access(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = sample_file(rng, ws)
    p["shared"] = {q.email: "reader" for q in pick_people(rng, ws, rng.randint(1, 3))}
    return p


def _solve_access(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    fid = file_by_name(s, p["file"])["id"]
    s(PLIST, fileId=fid)
    return s.calls


_reg("drive_who_has_access", ("Who besides me has access to {file}?", "List the people {file} is shared with."),
     _sample_access, _solve_access,
     lambda j, p: (j.answer_mentions_any("people", [[e, j.start.person(e).name] for e in p["shared"]]), standard_gates(j)),
     (LIST, PLIST), ("drive_files_get",), plant=_plant_mine,
     answer=lambda ws, p: ", ".join(ws.person(e).name for e in p["shared"]))
