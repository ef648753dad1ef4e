"""Drive v3 files: list (with Drive's query language), get, export, create, update, copy, delete, emptyTrash,
generateIds and watch."""

from __future__ import annotations

from typing import Any

from ...base import DRIVE_ALPHABET, api
from ...errors import bad_request, forbidden, google_error, not_found
from ...media import Media, decode
from ...paging import check_size, page, select_fields
from ..push_channels import CHANNEL_PARAMS
from . import file_fields
from .access import FileView, file_json, listed_for, role_of
from ..docs.export import FORMATS
from .data_model import FOLDER, GDOC, GOOGLE_PREFIX, File, content_fields
from .query import DriveQuery
from .state import DriveState

D = 'drive/v3'
EXPORTS = {GDOC: FORMATS}  # what files.export serves, and what about.exportFormats says

_DEFAULT_FILE_FIELDS = "kind,id,name,mimeType"

_ORDER = {"name": lambda f: f.name.lower(), "modifiedTime": lambda f: f.modifiedTime,
          "createdTime": lambda f: f.createdTime, "folder": lambda f: f.mimeType != FOLDER,
          "starred": lambda f: not f.starred}


def _media(media_body: str | None, content: str | None) -> str | bytes | None:
    """The new content of a create or update: an upload's bytes (`media_body`), else the agent's text."""
    if media_body is None:
        return content
    try:
        return decode(media_body)
    except ValueError:
        raise bad_request("Invalid media body: not base64.", "badContent", "media_body") from None


class Files(DriveState):
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

    @api("drive.files.export", f"GET {D}/files/{{fileId}}/export",
         "Export a Google Doc: text/plain, text/markdown, text/html, application/pdf, Word (.docx), "
         "OpenDocument (.odt) or EPUB.",
         params={"fileId": "", "mimeType": "text/plain"})
    def files_export(self, fileId: str, mimeType: str) -> Media:
        f = self._file(fileId)
        if not f.mimeType.startswith(GOOGLE_PREFIX) or f.mimeType == FOLDER:
            raise forbidden("Export only supports Docs Editors files.", "fileNotExportable")
        if mimeType not in EXPORTS.get(f.mimeType, ()):
            raise bad_request("The requested conversion is not supported.", "badRequest", "convertTo")
        return Media(self.ws.docs.export(f.id, mimeType), mimeType)

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

    def _given_id(self, fid: Any) -> str:
        """files.create body.id: an id from files.generateIds (well-formed and not yet used)."""
        if not isinstance(fid, str) or len(fid) != 33 or any(c not in DRIVE_ALPHABET for c in fid):
            raise bad_request("The provided file ID is not usable.", "fileIdNotUsable", "id")
        if fid in self.db.files:
            raise google_error(409, "A file already exists with the provided ID.", "fileIdInUse", "id")
        return fid

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
        if src.mimeType == GDOC:
            self.ws.docs.copy_structure(src.id, fid)
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

    @api("drive.files.watch", f"POST {D}/files/{{fileId}}/watch", "Watch one file for changes.", writes=True,
         params={"fileId": "", **CHANNEL_PARAMS})
    def files_watch(self, fileId: str, body: dict, supportsAllDrives: bool | None = None,
                    acknowledgeAbuse: bool | None = None) -> dict[str, Any]:
        f = self._file(fileId)
        return self.open_channel(body, f"https://www.googleapis.com/drive/v3/files/{f.id}?alt=json")

    @api("drive.files.generateIds", f"GET {D}/files/generateIds",
         "Ids to give files.create in body.id (so a retried create cannot make a duplicate).",
         params={"count": "1-1000, default 10"})
    def files_generateIds(self, count: int | None = None, space: str = "drive", type: str = "files",
                          fields: str | None = None) -> dict[str, Any]:
        n = check_size(count, 10, 1000, "count")
        if space not in ("drive", "appDataFolder"):
            raise bad_request(f"Invalid Value: space {space}", "invalid", "space")
        ids = [self.new_id("file", DRIVE_ALPHABET, 33) for _ in range(n)]
        return {"kind": "drive#generatedIds", "space": space, "ids": ids}

    @api("drive.files.emptyTrash", f"DELETE {D}/files/trash", "Permanently delete every file you own in the trash.",
         writes=True, status=204)
    def files_emptyTrash(self, driveId: str | None = None, enforceSingleParent: bool | None = None) -> None:
        me = self.ws.me.email
        if driveId is not None:
            d = self.db.drives.get(driveId)
            if d is None:
                raise not_found(f"Shared drive not found: {driveId}")
            if role_of(self.ws, self.db.files[d.id]) < 5:
                raise forbidden("The user does not have sufficient permissions for this file.",
                                "insufficientFilePermissions")
        for f in list(self.db.files.values()):
            in_scope = (driveId in f.parents) if driveId else (f.ownerEmail == me and not self._in_shared_drive(f))
            if f.trashed and in_scope and f.id in self.db.files and f.id not in self.db.drives:
                self.files_delete(f.id)

    def _in_shared_drive(self, f: File) -> bool:
        return any(p in self.db.drives for p in f.parents)
