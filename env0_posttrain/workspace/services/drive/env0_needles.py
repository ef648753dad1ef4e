"""Plant an env0 package's Drive and Docs needles: TASK_FOLDERS (paths), NEEDLES / NORMAL_FILES (ids kept where the
package fixes them: verifiers look them up, shares with their own permission ids), COMMENTS. One planter serves both
faces: a package naming Docs alone still plants its files through Drive."""

from __future__ import annotations

from datetime import timedelta
from types import ModuleType
from typing import TYPE_CHECKING

from ...base import DIGITS, make_id
from ..env0_planting import Planting

if TYPE_CHECKING:
    from ...environment import Workspace

FOLDER = "application/vnd.google-apps.folder"
GDOC = "application/vnd.google-apps.document"


def plant(ws: Workspace, mod: ModuleType, p: Planting) -> None:
    _drive(ws, mod)


def _folder(ws: Workspace, path: str | None, cache: dict[str, str]) -> str | None:
    if not path:
        return None
    parent = None
    for i, part in enumerate(path.strip("/").split("/")):
        key = "/".join(path.strip("/").split("/")[: i + 1])
        if key not in cache:
            cache[key] = ws.drive.add_folder(part, parent=parent).id
        parent = cache[key]
    return parent


def _put_file(ws: Workspace, spec: dict, cache: dict[str, str]) -> None:
    now = ws.now
    shares = list(spec.get("shared_with") or [])
    if spec.get("overshare"):
        shares.append(spec["overshare"])
    users = {s["email"]: s.get("role", "reader") for s in shares if s.get("type", "user") in ("user", "group") and s.get("email")}
    anyone = next((s.get("role", "reader") for s in shares if s.get("type") == "anyone"), None)
    domain = next((s.get("role", "reader") for s in shares if s.get("type") == "domain"), None)
    modified = now - timedelta(days=spec.get("modified_days_ago", spec.get("days_ago", 0)))
    f = ws.drive.add_file(name=spec["name"], content=spec.get("content_text", ""), mime_type=spec.get("mimeType", GDOC),
                          parent=_folder(ws, spec.get("folder"), cache), shared_with=users, anyone=anyone,
                          domain_role=domain, modified=modified, description=spec.get("description"))
    created = (now - timedelta(days=spec.get("days_ago", 0))).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    fid = spec.get("id") or f.id
    # env0 gives every planted share its own permission id and its verifiers map a deleted id back to one file
    # through the action log; Drive reuses a user's id across files, so planted shares get per-file ids here
    perms = tuple(p if p.role == "owner" else
                  p.model_copy(update={"id": make_id(ws.seed, f"perm.{fid}", i, DIGITS, 20),
                                       "displayName": next((s.get("display_name") for s in shares
                                                            if s.get("email") == p.emailAddress), p.displayName)})
                  for i, p in enumerate(f.permissions))
    row = f.model_copy(update={"id": fid, "createdTime": min(created, f.modifiedTime), "permissions": perms})
    del ws.drive.db.files[f.id]
    ws.drive.db.files[fid] = row
    if fid != f.id and f.id in ws.docs.db.documents:
        doc = ws.docs.db.documents.pop(f.id)
        ws.docs.db.documents[fid] = doc.model_copy(update={"documentId": fid})
    if row.mimeType == GDOC and fid not in ws.docs.db.documents:
        ws.docs.ensure_document(fid, row.name, spec.get("content_text", ""))


def _drive(ws: Workspace, mod: ModuleType) -> None:
    cache: dict[str, str] = {}
    for path in getattr(mod, "TASK_FOLDERS", None) or []:
        _folder(ws, path, cache)
    for spec in list(getattr(mod, "NEEDLES", None) or []) + list(getattr(mod, "NORMAL_FILES", None) or []):
        if isinstance(spec, dict) and "name" in spec and "subject" not in spec:
            _put_file(ws, spec, cache)
    for c in getattr(mod, "COMMENTS", None) or []:
        if c.get("file_id") in ws.drive.db.files:
            ws.drive.add_comment(c["file_id"], c["content"], author=c.get("author"),
                                 quoted=c.get("quoted_text"), when=ws.now - timedelta(days=c.get("days_ago", 0)))
