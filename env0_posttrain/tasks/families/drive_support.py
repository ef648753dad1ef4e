"""Drive helpers shared by drive, docs and multi-app templates."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.common import Script
from env0_posttrain.tasks.pools import FILE_TITLES, FOLDER_NAMES

FOLDER = "application/vnd.google-apps.folder"


def free_names(ws: Any, pool: tuple[str, ...]) -> list[str]:
    """Pool names no file in the company already uses, so an instruction names exactly one file."""
    used = {f.name.lower() for f in ws.drive.db.files.values()}
    return [n for n in pool if n.lower() not in used]


def sample_file(rng: random.Random, ws: Any, k: int = 1) -> dict[str, Any]:
    names = rng.sample(free_names(ws, FILE_TITLES), k)
    out = {"file": names[0]}
    if k > 1:
        out["file2"] = names[1]
    return out


def sample_folder(rng: random.Random, ws: Any) -> str:
    return rng.choice(free_names(ws, FOLDER_NAMES))


def content_of(name: str) -> str:
    return f"{name}\n\nOwner notes and figures for {name.lower()}.\n"


def plant_file(ws: Any, name: str, **kw: Any) -> Any:
    return ws.drive.add_file(name=name, content=content_of(name), **kw)


def find_file(ws: Any, name: str) -> Any:
    for f in ws.drive.db.files.values():
        if f.name == name and not f.trashed:
            return f
    raise LookupError(f"no file named {name!r}")


def file_by_name(s: Script, name: str, fields: str | None = None) -> dict[str, Any]:
    """What an agent does: search by exact name and take the hit."""
    quoted = name.replace("\\", "\\\\").replace("'", "\\'")
    args: dict[str, Any] = {"q": f"name = '{quoted}' and trashed = false"}
    if fields:
        args["fields"] = fields
    return s("drive_files_list", **args)["files"][0]


def role_for(f: Any, email: str) -> str | None:
    for p in f.permissions if f else ():
        if (p.emailAddress or "").lower() == email.lower():
            return p.role
    return None


def new_files(start: Any, end: Any) -> list[Any]:
    before = start.drive.db.files
    return [f for fid, f in end.drive.db.files.items() if fid not in before and not f.trashed]
