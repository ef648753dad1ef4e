"""Our Drive rows in env0's mock-gdrive /_admin/state and /_admin/diff JSON (`files[].parentId`, permissions matched
on (fileId, id))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..env0_shapes import diff_rows, iso, now_iso

if TYPE_CHECKING:
    from ...environment import Workspace

FOLDER = "application/vnd.google-apps.folder"


def _size(f: Any) -> int:
    """env0's size: the blob's bytes, or the text's characters."""
    return len(f.blob) if f.blob is not None else len(f.content or "")


def drive_state(ws: Workspace) -> dict[str, Any]:
    files, perms = [], []
    roots = {ws.drive.root_id(p.email) for p in ws.directory}
    for f in ws.drive.db.files.values():
        if f.id in roots or f.id in ws.drive.db.drives:  # env0 has no row for My Drive (nor a shared drive's root)
            continue
        owner = ws.person(f.ownerEmail)
        files.append({"id": f.id, "name": f.name, "mimeType": f.mimeType, "parentId": f.parents[0] if f.parents else None,
                      "ownerId": owner.user_id if owner else f.ownerEmail, "lastModifyingUserId": owner.user_id if owner else None,
                      "createdTime": iso(f.createdTime), "modifiedTime": iso(f.modifiedTime), "viewedByMeTime": None,
                      "trashed": f.trashed, "starred": f.starred, "explicitlyTrashed": f.trashed,
                      "size": _size(f) if f.mimeType != FOLDER else None, "description": f.description,
                      "properties": None, "version": f.version, "webViewLink": f"https://drive.google.com/file/d/{f.id}/view",
                      "writersCanShare": True, "shortcutTargetId": None, "shortcutTargetMimeType": None,
                      "hasContentText": f.content is not None or f.id in ws.docs.db.documents,
                      "hasContentBlob": f.blob is not None})
        for p in f.permissions:
            perms.append({"id": p.id, "fileId": f.id, "role": p.role, "type": p.type,
                          "emailAddress": p.emailAddress, "displayName": p.displayName, "domain": p.domain,
                          "inherited": False, "inheritedFrom": None, "expirationTime": None, "pendingOwner": False})
    me = ws.me
    return {"users": {me.user_id: {"user": {"id": me.user_id, "email": me.email, "displayName": me.name}}},
            "files": files, "permissions": perms, "timestamp": now_iso(ws)}


def drive_diff(old: dict, cur: dict) -> dict:
    # our permission ids are unique per file (a user's id, "anyoneWithLink"), as in Drive; env0's are global,
    # so permissions are matched on (fileId, id) and reported with Drive's id
    keyed = lambda ps: [{**p, "_k": f"{p['fileId']}/{p['id']}"} for p in ps]  # noqa: E731
    perms = diff_rows(keyed(old["permissions"]), keyed(cur["permissions"]), key="_k", deleted="full")
    strip = lambda p: {"id": p["id"], **{k: v for k, v in p.items() if k not in ("_k", "id")}}  # noqa: E731
    perms = {"added": [strip(p) for p in perms["added"]],
             "updated": [{"id": p["_k"].split("/", 1)[1], **{k: v for k, v in p.items() if k != "_k"}}
                         for p in perms["updated"]],
             "deleted": [{"id": p["id"]} for p in perms["deleted"]]}
    return {"files": diff_rows(old["files"], cur["files"], deleted="id"), "permissions": perms}


def comment_replies(ws: Workspace, comment_id: str) -> list[dict[str, Any]]:
    return [{"id": r.id, "commentId": r.commentId, "authorId": r.authorEmail, "content": r.content,
             "createdTime": r.createdTime.replace(".000Z", ""), "modifiedTime": r.modifiedTime.replace(".000Z", "")}
            for r in ws.drive.replies_of(comment_id)]

