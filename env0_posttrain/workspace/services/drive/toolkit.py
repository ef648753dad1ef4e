"""Drive v3 methods (files, permissions) and the seeding helpers; comments, replies, revisions, changes,
shared drives and permissions get/update are mixins from the sibling modules."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base import DRIVE_ALPHABET, DIGITS, Service, api, make_id
from ...errors import bad_request, forbidden, google_error
from ...media import Media, decode
from ...paging import check_size, page, select_fields
from .access import FileView, file_json, file_not_found, listed_for, perm_json, role_of
from .changes import Changes
from .comments import Comments
from . import file_fields
from .data_model import FOLDER, GDOC, GOOGLE_PREFIX, DriveDB, File, Permission, content_fields
from .query import DriveQuery
from .replies import Replies
from .revisions import Revisions
from .shared_drives import SharedDrives

D = "drive/v3"
_DEFAULT_FILE_FIELDS = "kind,id,name,mimeType"
_ROLES = ("owner", "organizer", "fileOrganizer", "writer", "commenter", "reader")
_ORDER = {"name": lambda f: f.name.lower(), "modifiedTime": lambda f: f.modifiedTime,
          "createdTime": lambda f: f.createdTime, "folder": lambda f: f.mimeType != FOLDER,
          "starred": lambda f: not f.starred}


class Drive(Comments, Replies, Revisions, Changes, SharedDrives, Service):
    name = "drive"
    DB = DriveDB
    db: DriveDB

    def bootstrap(self) -> None:
        for p in self.ws.directory:
            rid = self.root_id(p.email)
            self.db.files[rid] = File(id=rid, name="My Drive", mimeType=FOLDER, ownerEmail=p.email,
                                      createdTime="2024-01-08T09:00:00.000Z", modifiedTime="2024-01-08T09:00:00.000Z",
                                      permissions=(self._owner_perm(p.email),))

    def root_id(self, email: str | None = None) -> str:
        return "0A" + make_id(self.ws.seed, f"drive.root.{email or self.ws.me.email}", 0, DRIVE_ALPHABET, 17) + "Uk9PVA"

    def _owner_perm(self, email: str) -> Permission:
        p = self.ws.person(email)
        return Permission(id=p.user_id if p else self._perm_id(email), type="user", role="owner", emailAddress=email,
                          displayName=p.name if p else None)

    def _perm_id(self, key: str) -> str:
        return make_id(self.ws.seed, f"drive.perm.{key}", 0, DIGITS, 20)

    # -- access ---------------------------------------------------------------------------------
    def _file(self, fid: str, need: int = 1, location: str = "fileId") -> File:
        if fid == "root":
            fid = self.root_id()
        f = self.db.files.get(fid)
        if f is None or role_of(self.ws, f) < 1:
            raise file_not_found(fid, location)
        if role_of(self.ws, f) < need:
            raise forbidden("The user does not have sufficient permissions for this file.",
                            "insufficientFilePermissions")
        return f

    # -- what the Docs API asks of Drive (a Doc is a Drive file) ----------------------------------
    def caller_role(self, file_id: str) -> int:
        """The signed-in user's role rank on the file (access.py's ranks; 0: none, or no such file)."""
        f = self.db.files.get(file_id)
        return role_of(self.ws, f) if f is not None else 0

    def create_document_file(self, title: str, owner: str) -> File:
        """docs.documents.create: a new Google Doc file in My Drive, with a Docs-length id."""
        return self._new_file(self.new_id("file", DRIVE_ALPHABET, 44), title, GDOC, (self.root_id(),), owner, "")

    def document_edited(self, file_id: str, old_text: str, new_text: str) -> None:
        """A Doc's text changed through the Docs API: its version and modified time move, and a changed text is
        kept as a revision."""
        before = self.db.files[file_id]
        self._touch(before)
        if new_text != old_text:
            self.record_revision(before, old_text, new_text)

    def _touch(self, f: File, **upd: Any) -> File:
        f = f.model_copy(update={**upd, "modifiedTime": self.ws.now_rfc3339(), "version": f.version + 1})
        self.db.files[f.id] = f
        self.record_change(f)
        return f

    def _parents(self, parents: Any) -> tuple[str, ...]:
        if parents is None:
            return (self.root_id(),)
        if not isinstance(parents, list) or len(parents) > 1:
            raise bad_request("Increasing the number of parents is not allowed.", "cannotAddParent")
        out = []
        for pid in parents:
            folder = self._file(str(pid), need=3, location="parents")
            if folder.mimeType != FOLDER:
                raise bad_request("The specified parent is not a folder.", "invalidParent")
            out.append(folder.id)
        return tuple(out)

    # -- files ----------------------------------------------------------------------------------
    @api("drive.files.list", f"GET {D}/files", "Search files. Default fields: id,name,mimeType.",
         params={"q": "e.g. name contains 'budget' and trashed = false", "pageSize": "", "pageToken": "",
                 "orderBy": "e.g. modifiedTime desc", "fields": "e.g. files(id,name,parents,owners)"})
    def files_list(self, q: str | None = None, pageSize: int | None = None, pageToken: str | None = None,
                   orderBy: str | None = None, fields: str | None = None, corpora: str | None = None,
                   spaces: str | None = None, includeItemsFromAllDrives: bool | None = None,
                   supportsAllDrives: bool | None = None, driveId: str | None = None) -> dict[str, Any]:
        query = DriveQuery(q or "") if q else None
        size = check_size(pageSize, 100, 1000, "pageSize")
        if driveId is not None and not (includeItemsFromAllDrives and supportsAllDrives):
            raise bad_request("The includeItemsFromAllDrives and supportsAllDrives parameters must be set to true "
                              "when driveId is specified.", "invalid", "driveId")
        files = self._visible(orderBy or "folder,modifiedTime desc,name", bool(includeItemsFromAllDrives))
        if driveId is not None:
            files = [f for f in files if f.driveId == driveId]
        if query is not None:
            files = [f for f in files if query.pred(FileView(self.ws, f))]
        chunk, nxt = page(files, pageToken, size)
        if fields is None:  # the default partial response, without building full resources
            out: dict[str, Any] = {"kind": "drive#fileList", "incompleteSearch": False, "files": [
                {"kind": "drive#file", "mimeType": f.mimeType, "id": f.id, "name": f.name} for f in chunk]}
            if nxt:
                out["nextPageToken"] = nxt
            return out
        out = {"kind": "drive#fileList", "incompleteSearch": False, "files": [file_json(self.ws, f) for f in chunk]}
        if nxt:
            out["nextPageToken"] = nxt
        return select_fields(out, fields)

    def _visible(self, order_by: str, all_drives: bool = False) -> list[File]:
        """Files listed for the agent user in the given order (shared-drive items only with all_drives, as
        includeItemsFromAllDrives asks); memoised until the files table changes."""
        keys = [k.strip() for k in order_by.split(",") if k.strip()]
        for key in keys:
            if key.partition(" ")[0] not in _ORDER:
                raise bad_request(f"Invalid sort order: {key.partition(' ')[0]}", "invalid", "orderBy")

        def build() -> list[File]:
            root = self.root_id()
            drives = self.db.drives
            files = sorted((f for f in self.db.files.values() if f.id != root and f.id not in drives
                            and (all_drives or f.driveId is None) and listed_for(self.ws, f)),
                           key=lambda f: f.id)
            for key in reversed(keys):
                name, _, direction = key.partition(" ")
                files.sort(key=_ORDER[name], reverse=direction.strip().lower() == "desc")
            return files
        return self.db.cached(("visible", tuple(keys), all_drives), self.db.files.version, build)

    @api("drive.files.get", f"GET {D}/files/{{fileId}}", "Get file metadata; alt='media' returns its content.",
         params={"fileId": "", "fields": "e.g. * for all", "alt": "json|media"})
    def files_get(self, fileId: str, fields: str | None = None, alt: str = "json",
                  supportsAllDrives: bool | None = None, acknowledgeAbuse: bool | None = None) -> Any:
        f = self._file(fileId)
        if alt == "media":
            if f.mimeType.startswith(GOOGLE_PREFIX):
                raise forbidden("Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                                "fileNotDownloadable")
            return Media(f.data, f.mimeType)
        if alt != "json":
            raise bad_request(f"Invalid value for alt: {alt}", "invalid", "alt")
        return select_fields(file_json(self.ws, f), fields or _DEFAULT_FILE_FIELDS)

    @api("drive.files.export", f"GET {D}/files/{{fileId}}/export", "Export a Google Doc as text.",
         params={"fileId": "", "mimeType": "text/plain"})
    def files_export(self, fileId: str, mimeType: str) -> Media:
        f = self._file(fileId)
        if not f.mimeType.startswith(GOOGLE_PREFIX) or f.mimeType == FOLDER:
            raise forbidden("Export only supports Docs Editors files.", "fileNotExportable")
        if mimeType not in ("text/plain", "text/markdown", "text/html"):
            raise bad_request("The requested conversion is not supported.", "badRequest")
        doc = self.ws.docs.db.documents.get(f.id)
        return Media((doc.text if doc else "").encode("utf-8"), mimeType)

    @api("drive.files.create", f"POST {D}/files", "Create a file or folder; content is the file's text.",
         writes=True, upload=f"/upload/{D}/files",
         params={"body": "{name, mimeType, parents: [folderId], description}", "content": "text content"})
    def files_create(self, body: dict | None = None, content: str | None = None, fields: str | None = None,
                     uploadType: str | None = None, supportsAllDrives: bool | None = None,
                     media_body: str | None = None, media_mime_type: str | None = None) -> dict[str, Any]:
        body = body or {}
        data = _media(media_body, content)
        name = body.get("name") or "Untitled"
        mime = body.get("mimeType") or (media_mime_type if media_body is not None else None) or \
            ("text/plain" if content is not None else "application/octet-stream")
        if not isinstance(name, str) or not isinstance(mime, str):
            raise bad_request("Invalid value for name or mimeType.", "invalid")
        parents = self._parents(body.get("parents"))
        if mime.startswith(GOOGLE_PREFIX) and mime not in (FOLDER, GDOC):
            raise bad_request(f"Unsupported Google mimeType {mime}.", "badRequest")
        fid = self._given_id(body.get("id")) if "id" in body else self.new_id("file", DRIVE_ALPHABET, 33)
        extra = file_fields.kept(body)
        f = self._new_file(fid, name, mime, parents, self.ws.me.email, data, body.get("description"),
                           bool(body.get("starred", False)))
        f = self.db.files[f.id] = file_fields.applied(f, extra)
        return select_fields(file_json(self.ws, f), fields or _DEFAULT_FILE_FIELDS)

    def _drive_of(self, parents: tuple[str, ...]) -> str | None:
        parent = self.db.files.get(parents[0]) if parents else None
        return None if parent is None else parent.driveId or (parent.id if parent.id in self.db.drives else None)

    def _given_id(self, fid: Any) -> str:
        """files.create body.id: an id from files.generateIds (well-formed and not yet used)."""
        if not isinstance(fid, str) or len(fid) != 33 or any(c not in DRIVE_ALPHABET for c in fid):
            raise bad_request("The provided file ID is not usable.", "fileIdNotUsable", "id")
        if fid in self.db.files:
            raise google_error(409, "A file already exists with the provided ID.", "fileIdInUse", "id")
        return fid

    def _new_file(self, fid: str, name: str, mime: str, parents: tuple[str, ...], owner: str,
                  content: str | bytes | None, description: str | None = None, starred: bool = False,
                  when: str | None = None) -> File:
        """A new file row; `content` is its text or its bytes (a Google Doc's is converted to the Doc's text)."""
        now = when or self.ws.now_rfc3339()
        f = File(id=fid, name=name, mimeType=mime, parents=parents, ownerEmail=owner, createdTime=now,
                 modifiedTime=now, description=description, starred=starred, driveId=self._drive_of(parents),
                 **content_fields(None if mime.startswith(GOOGLE_PREFIX) else (content or "")),
                 permissions=(self._owner_perm(owner),))
        self.db.files[fid] = f
        if mime == GDOC:
            text = content.decode("utf-8", errors="replace") if isinstance(content, bytes) else content
            self.ws.docs.ensure_document(fid, name, text or "")
        self.record_change(f)
        return f

    @api("drive.files.update", f"PATCH {D}/files/{{fileId}}",
         "Rename, move (addParents/removeParents), star, trash or replace content.", writes=True,
         upload=f"/upload/{D}/files/{{fileId}}",
         params={"fileId": "", "body": "{name, description, starred, trashed}", "addParents": "folder id",
                 "removeParents": "folder id", "content": "new text content"})
    def files_update(self, fileId: str, body: dict | None = None, addParents: str | None = None,
                     removeParents: str | None = None, content: str | None = None, fields: str | None = None,
                     uploadType: str | None = None, supportsAllDrives: bool | None = None,
                     media_body: str | None = None, media_mime_type: str | None = None) -> dict[str, Any]:
        f = self._file(fileId, need=3)
        body = body or {}
        data = _media(media_body, content)
        upd: dict[str, Any] = {}
        for k in ("name", "description"):
            if k in body:
                if not isinstance(body[k], str):
                    raise bad_request(f"Invalid value for {k}.", "invalid")
                upd[k] = body[k]
        for k in ("starred", "trashed"):
            if k in body:
                if not isinstance(body[k], bool):
                    raise bad_request(f"Invalid value for {k}.", "invalid")
                upd[k] = body[k]
        if "trashed" in upd and f.ownerEmail != self.ws.me.email:
            raise forbidden("The user does not have sufficient permissions for this file.",
                            "insufficientFilePermissions")
        extra = file_fields.kept(body)
        mime = body.get("mimeType")
        if mime is not None and not isinstance(mime, str):
            raise bad_request("Invalid value for mimeType.", "invalid", "mimeType")
        if mime and not (mime.startswith(GOOGLE_PREFIX) or f.mimeType.startswith(GOOGLE_PREFIX)):
            upd["mimeType"] = mime  # a binary file's type follows its new content; Google types are not converted
        unknown = set(body) - {"name", "description", "starred", "trashed", "mimeType", *file_fields.KEPT,
                               "modifiedTime"}
        if unknown:
            raise bad_request(f"The resource body includes fields which are not directly writable: {sorted(unknown)}",
                              "fieldNotWritable")
        parents = list(f.parents)
        for pid in [p for p in (removeParents or "").split(",") if p]:
            pid = self.root_id() if pid == "root" else pid
            if pid not in parents:
                raise bad_request(f"Parent {pid} is not a parent of this file.", "invalidParent")
            parents.remove(pid)
        for pid in [p for p in (addParents or "").split(",") if p]:
            folder = self._file(pid, need=3, location="addParents")
            if folder.mimeType != FOLDER or folder.id == f.id:
                raise bad_request("The specified parent is not a folder.", "invalidParent")
            if folder.id not in parents:
                parents.append(folder.id)
        if len(parents) > 1:
            raise forbidden("Increasing the number of parents is not allowed.", "cannotAddParent")
        if tuple(parents) != f.parents:
            upd["parents"] = tuple(parents)
            upd["driveId"] = self._drive_of(tuple(parents))
        if data is not None:
            if f.mimeType.startswith(GOOGLE_PREFIX):
                raise forbidden("Content of Docs Editors files cannot be replaced here.", "fileNotDownloadable")
            upd.update(content_fields(data))
        before = f
        f = self.db.files[f.id] = file_fields.applied(self._touch(f, **upd), extra)
        if data is not None and f.data != before.data:
            self.record_revision(before, before.data, f.data)
        if "name" in upd and f.mimeType == GDOC:
            self.ws.docs.rename(f.id, f.name)
        return select_fields(file_json(self.ws, f), fields or _DEFAULT_FILE_FIELDS)

    @api("drive.files.copy", f"POST {D}/files/{{fileId}}/copy", "Copy a file.", writes=True,
         params={"fileId": "", "body": "{name, parents}"})
    def files_copy(self, fileId: str, body: dict | None = None, fields: str | None = None,
                   supportsAllDrives: bool | None = None) -> dict[str, Any]:
        src = self._file(fileId)
        if src.mimeType == FOLDER:
            raise forbidden("This file cannot be copied by the user.", "cannotCopyFile")
        body = body or {}
        parents = self._parents(body["parents"]) if "parents" in body else (
            src.parents if src.ownerEmail == self.ws.me.email else (self.root_id(),))
        text: str | bytes | None = src.data
        if src.mimeType == GDOC:
            doc = self.ws.docs.db.documents.get(src.id)
            text = doc.text if doc else ""
        fid = self.new_id("file", DRIVE_ALPHABET, 33)
        f = self._new_file(fid, str(body.get("name") or f"Copy of {src.name}"), src.mimeType, parents,
                           self.ws.me.email, text, src.description)
        return select_fields(file_json(self.ws, f), fields or _DEFAULT_FILE_FIELDS)

    @api("drive.files.delete", f"DELETE {D}/files/{{fileId}}", "Permanently delete a file (owner only).",
         writes=True, status=204, params={"fileId": ""})
    def files_delete(self, fileId: str, supportsAllDrives: bool | None = None) -> None:
        f = self._file(fileId)
        if f.ownerEmail != self.ws.me.email or f.id == self.root_id() or f.id in self.db.drives:
            raise forbidden("The user does not have sufficient permissions for this file.",
                            "insufficientFilePermissions")
        doomed, frontier = {f.id}, [f.id]
        while frontier:
            pid = frontier.pop()
            for c in self.db.files.values():
                if pid in c.parents and c.id not in doomed and c.ownerEmail == self.ws.me.email:
                    doomed.add(c.id)
                    frontier.append(c.id)
        for fid in doomed:
            self.record_change(self.db.files.pop(fid), removed=True)
            self.ws.docs.db.documents.pop(fid, None)
        self._forget(doomed)

    def _forget(self, fids: set[str]) -> None:
        """Comments, replies and revisions go with their deleted files."""
        for table, of in ((self.db.comments, lambda r: r.fileId), (self.db.replies, lambda r: r.fileId),
                          (self.db.revisions, lambda r: r.fileId)):
            for k in [k for k, r in table.items() if of(r) in fids]:
                del table[k]

    # -- permissions ----------------------------------------------------------------------------
    @api("drive.permissions.list", f"GET {D}/files/{{fileId}}/permissions", "List who has access to a file.",
         params={"fileId": ""})
    def permissions_list(self, fileId: str, fields: str | None = None, pageSize: int | None = None,
                         pageToken: str | None = None, supportsAllDrives: bool | None = None) -> dict[str, Any]:
        f = self._file(fileId)
        out = {"kind": "drive#permissionList", "permissions": [perm_json(p) for p in f.permissions]}
        return select_fields(out, fields)

    @api("drive.permissions.create", f"POST {D}/files/{{fileId}}/permissions", "Share a file.", writes=True,
         params={"fileId": "", "body": "{type: user|domain|anyone, role: reader|commenter|writer, emailAddress}",
                 "sendNotificationEmail": ""})
    def permissions_create(self, fileId: str, body: dict, sendNotificationEmail: bool | None = None,
                           emailMessage: str | None = None, transferOwnership: bool = False,
                           fields: str | None = None, supportsAllDrives: bool | None = None) -> dict[str, Any]:
        f = self._file(fileId, need=3)
        ptype, role = body.get("type"), body.get("role")
        if ptype not in ("user", "group", "domain", "anyone"):
            raise bad_request("The permission type field is required.", "required") if not ptype else \
                bad_request(f"Invalid permission type: {ptype}", "invalid")
        if role not in _ROLES:
            raise bad_request("The permission role field is required.", "required") if not role else \
                bad_request(f"Invalid permission role: {role}", "invalid")
        if role == "owner" and not transferOwnership:
            raise forbidden("The transferOwnership parameter must be enabled when the permission role is 'owner'.",
                            "forbidden")
        email = str(body.get("emailAddress") or "").strip().lower() or None
        domain = str(body.get("domain") or "").strip().lower() or None
        if ptype in ("user", "group") and (not email or "@" not in email):
            raise bad_request("The permission emailAddress field is required.", "required")
        if ptype == "domain" and not domain:
            raise bad_request("The permission domain field is required.", "required")
        if ptype == "anyone":
            pid = "anyoneWithLink"
        elif ptype == "domain":
            pid = self._perm_id(f"domain.{domain}")
        else:
            person = self.ws.person(email or "")
            pid = person.user_id if person else self._perm_id(email or "")
        person = self.ws.person(email) if email else None
        perm = Permission(id=pid, type=ptype, role=role, emailAddress=email if ptype in ("user", "group") else None,
                          domain=domain if ptype == "domain" else None, displayName=person.name if person else None,
                          allowFileDiscovery=bool(body.get("allowFileDiscovery", False)) if ptype in ("domain", "anyone") else None)
        perms = [p for p in f.permissions if p.id != pid]
        if role == "owner":
            perms = [p.model_copy(update={"role": "writer"}) if p.role == "owner" else p for p in perms]
            f = f.model_copy(update={"ownerEmail": email})
        perms.append(perm)
        self._touch(f, permissions=tuple(perms))
        return select_fields(perm_json(perm), fields or "kind,id,type,role")

    @api("drive.permissions.delete", f"DELETE {D}/files/{{fileId}}/permissions/{{permissionId}}",
         "Remove someone's access.", writes=True, status=204, params={"fileId": "", "permissionId": ""})
    def permissions_delete(self, fileId: str, permissionId: str, supportsAllDrives: bool | None = None) -> None:
        f = self._file(fileId, need=3)
        hit = [p for p in f.permissions if p.id == permissionId]
        if not hit:
            raise google_error(404, f"Permission not found: {permissionId}.", "notFound", "permissionId")
        if hit[0].role == "owner":
            raise forbidden("The owner of a file cannot be removed.", "cannotRemoveOwner")
        self._touch(f, permissions=tuple(p for p in f.permissions if p.id != permissionId))

    # -- seeding helpers ------------------------------------------------------------------------
    def add_file(self, *, name: str, content: str | None = "", mime_type: str = "text/plain",
                 parent: str | None = None, owner: str | None = None, shared_with: dict[str, str] | None = None,
                 anyone: str | None = None, domain_role: str | None = None, modified: datetime | None = None,
                 description: str | None = None) -> File:
        """Plant a file. shared_with: {email: role} (a group address shares with the group);
        anyone / domain_role: a role for link / domain sharing."""
        owner = owner or self.ws.me.email
        parents = (parent,) if parent else (self.root_id(owner),)
        when = modified.strftime("%Y-%m-%dT%H:%M:%S.000Z") if modified else None
        f = self._new_file(self.new_id("file", DRIVE_ALPHABET, 33), name, mime_type, parents, owner, content,
                           description, when=when)
        perms = list(f.permissions)
        groups = {g.email for g in self.ws.admin.db.groups.values()}
        for email, role in (shared_with or {}).items():
            p = self.ws.person(email)
            perms.append(Permission(id=p.user_id if p else self._perm_id(email), type="group" if email in groups else
                                    "user", role=role, emailAddress=email, displayName=p.name if p else None))
        if domain_role:
            perms.append(Permission(id=self._perm_id(f"domain.{self.ws.domain}"), type="domain", role=domain_role,
                                    domain=self.ws.domain, allowFileDiscovery=True))
        if anyone:
            perms.append(Permission(id="anyoneWithLink", type="anyone", role=anyone, allowFileDiscovery=False))
        f = f.model_copy(update={"permissions": tuple(perms)})
        self.db.files[f.id] = f
        return f

    def add_folder(self, name: str, *, parent: str | None = None, owner: str | None = None,
                   shared_with: dict[str, str] | None = None) -> File:
        return self.add_file(name=name, content=None, mime_type=FOLDER, parent=parent, owner=owner,
                             shared_with=shared_with)


def _media(media_body: str | None, content: str | None) -> str | bytes | None:
    """The new content of a create or update: an upload's bytes (`media_body`), else the agent's text."""
    if media_body is None:
        return content
    try:
        return decode(media_body)
    except ValueError:
        raise bad_request("Invalid media body: not base64.", "badContent", "media_body") from None
