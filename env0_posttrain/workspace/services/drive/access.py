"""Who may see and change a Drive file, and the file's JSON as Drive v3 returns it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import google_error
from ...media import digests
from .data_model import FOLDER, GOOGLE_PREFIX, File

if TYPE_CHECKING:
    from ...environment import Workspace

_RANK = {"reader": 1, "commenter": 2, "writer": 3, "fileOrganizer": 4, "organizer": 5, "owner": 6}


def file_not_found(fid: str, location: str = "fileId") -> Exception:
    return google_error(404, f"File not found: {fid}.", "notFound", location)


def role_of(ws: "Workspace", f: File, email: str | None = None) -> int:
    email = email or ws.me.email
    if f.ownerEmail == email:
        return _RANK["owner"]
    best = 0
    if f.driveId is not None and f.driveId != f.id:  # shared-drive membership reaches every item in it
        root = ws.drive.db.files.get(f.driveId)
        best = role_of(ws, root, email) if root is not None else 0
    for p in f.permissions:
        if (p.type == "user" and p.emailAddress == email) or (p.type == "domain" and p.domain == email.split("@")[-1]) \
                or p.type == "anyone" or (p.type == "group" and email in ws.gmail.expand([p.emailAddress or ""])):
            best = max(best, _RANK.get(p.role, 0))
    return best


def listed_for(ws: "Workspace", f: File) -> bool:
    """Visible in files.list: owned, or shared to me or my domain (link-only 'anyone' files are not listed)."""
    me = ws.me.email
    if f.ownerEmail == me:
        return True
    if f.driveId is not None and f.driveId != f.id:
        return role_of(ws, f) >= 1
    return any((p.type == "user" and p.emailAddress == me) or (p.type == "domain" and p.domain == ws.domain)
               or (p.type == "group" and me in ws.gmail.expand([p.emailAddress or ""])) for p in f.permissions)


class FileView:
    """What the q grammar sees of a file, from the agent user's point of view."""

    __slots__ = ("f", "ws", "text")

    def __init__(self, ws: "Workspace", f: File):
        self.ws, self.f, self.text = ws, f, None

    def field(self, name: str) -> Any:
        f = self.f
        if name == "sharedWithMe":
            return f.ownerEmail != self.ws.me.email
        if name == "fullText":
            body = f.content or ""
            if f.mimeType.startswith(GOOGLE_PREFIX):
                doc = self.ws.docs.db.documents.get(f.id)
                body = doc.text if doc else ""
            return f"{f.name} {f.description or ''} {body}"
        return getattr(f, name)

    def in_field(self, field: str, value: str) -> bool:
        f = self.f
        if field == "parents":
            return value in f.parents or (value == "root" and self.ws.drive.root_id() in f.parents)
        if field == "owners":
            return f.ownerEmail == value.lower()
        need = 3 if field == "writers" else 1
        return role_of(self.ws, f, value.lower()) >= need


def perm_json(p: Any) -> dict[str, Any]:
    return {"kind": "drive#permission", **p.dump()}


def file_json(ws: "Workspace", f: File) -> dict[str, Any]:
    owner = ws.person(f.ownerEmail)
    me = ws.me.email
    out: dict[str, Any] = {"kind": "drive#file", "id": f.id, "name": f.name, "mimeType": f.mimeType}
    if f.description is not None:
        out["description"] = f.description
    if f.driveId is not None:
        out["driveId"] = f.driveId
    out.update(starred=f.starred, trashed=f.trashed, parents=list(f.parents), version=str(f.version),
               webViewLink=_link(f), createdTime=f.createdTime, modifiedTime=f.modifiedTime,
               owners=[{"kind": "drive#user", "displayName": owner.name if owner else f.ownerEmail,
                        "emailAddress": f.ownerEmail, "me": f.ownerEmail == me,
                        "permissionId": owner.user_id if owner else ""}],
               shared=len(f.permissions) > 1, ownedByMe=f.ownerEmail == me)
    if role_of(ws, f) >= 3:
        out["permissions"] = [perm_json(p) for p in f.permissions]
        out["permissionIds"] = [p.id for p in f.permissions]
    if not f.mimeType.startswith(GOOGLE_PREFIX):
        data = f.data
        out["size"] = str(len(data))
        out.update(digests(data))
    out["capabilities"] = {"canEdit": role_of(ws, f) >= 3, "canShare": role_of(ws, f) >= 3,
                           "canTrash": f.ownerEmail == me, "canDownload": f.mimeType != FOLDER}
    out.update(f.kept)
    return out


def _link(f: File) -> str:
    if f.mimeType == FOLDER:
        return f"https://drive.google.com/drive/folders/{f.id}"
    if f.mimeType.startswith(GOOGLE_PREFIX):
        return f"https://docs.google.com/document/d/{f.id}/edit"
    return f"https://drive.google.com/file/d/{f.id}/view"
