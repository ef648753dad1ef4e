"""Drive v3 revisions (list / get / update / delete).

A file that never changed content has one implied revision ("1", the file itself); the first content
change stores that one and the new head, and each later change adds a row (`record_revision`, called
by files.update with new content and by Docs batchUpdate). alt=media on a revision returns its content.
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request, forbidden, google_error
from ...media import Media
from ...paging import check_size, page, select_fields
from .data_model import FOLDER, GOOGLE_PREFIX, File, Revision, content_fields
from .state import DriveState

D = "drive/v3"
_DEFAULT = "kind,id,mimeType,modifiedTime"


def _not_found(rid: str) -> Exception:
    return google_error(404, f"Revision not found: {rid}.", "notFound", "revisionId")


class Revisions(DriveState):
    def revisions_of(self, f: File) -> list[Revision]:
        """Every revision of a file, oldest first (verifier helper); the implied one when none is stored."""
        rows = sorted((r for k, r in self.db.revisions.items() if k.startswith(f"{f.id}/")), key=lambda r: int(r.id))
        return rows or [Revision(id="1", fileId=f.id, mimeType=f.mimeType, modifiedTime=f.modifiedTime,
                                 lastModifyingEmail=f.ownerEmail, **content_fields(self._content(f)))]

    def _content(self, f: File) -> str | bytes:
        if f.mimeType.startswith(GOOGLE_PREFIX):
            doc = self.ws.docs.db.documents.get(f.id)
            return doc.text if doc else ""
        return f.data

    def _rev_json(self, r: Revision) -> dict[str, Any]:
        person = self.ws.person(r.lastModifyingEmail)
        out: dict[str, Any] = {"kind": "drive#revision", "id": r.id, "mimeType": r.mimeType,
                               "modifiedTime": r.modifiedTime, "keepForever": r.keepForever,
                               "lastModifyingUser": {"kind": "drive#user", "displayName": person.name if person else
                                                     r.lastModifyingEmail, "emailAddress": r.lastModifyingEmail,
                                                     "me": r.lastModifyingEmail == self.ws.me.email}}
        if not r.mimeType.startswith(GOOGLE_PREFIX):
            out["size"] = str(len(r.data))
        if r.published is not None:
            out["published"] = r.published
        return out

    def _revision(self, fileId: str, revisionId: str, need: int = 1) -> tuple[File, Revision, list[Revision]]:
        f = self._file(fileId, need=need)
        if f.mimeType == FOLDER:
            raise bad_request("Folders have no revisions.", "badRequest")
        rows = self.revisions_of(f)
        rid = rows[-1].id if revisionId == "head" else revisionId
        hit = next((r for r in rows if r.id == rid), None)
        if hit is None:
            raise _not_found(revisionId)
        return f, hit, rows

    @api("drive.revisions.list", f"GET {D}/files/{{fileId}}/revisions", "A file's revisions, oldest first.",
         params={"fileId": "", "pageSize": "", "pageToken": "", "fields": ""})
    def revisions_list(self, fileId: str, pageSize: int | None = None, pageToken: str | None = None,
                       fields: str | None = None) -> dict[str, Any]:
        f = self._file(fileId)
        if f.mimeType == FOLDER:
            raise bad_request("Folders have no revisions.", "badRequest")
        chunk, nxt = page([self._rev_json(r) for r in self.revisions_of(f)], pageToken,
                          check_size(pageSize, 200, 1000, "pageSize"))
        out: dict[str, Any] = {"kind": "drive#revisionList", "revisions": chunk}
        if nxt:
            out["nextPageToken"] = nxt
        return select_fields(out, fields) if fields else out

    @api("drive.revisions.get", f"GET {D}/files/{{fileId}}/revisions/{{revisionId}}",
         "One revision's metadata; alt='media' returns its content (not for Google Docs).",
         params={"fileId": "", "revisionId": "an id or 'head'", "alt": "json|media", "fields": ""})
    def revisions_get(self, fileId: str, revisionId: str, fields: str | None = None, alt: str = "json",
                      acknowledgeAbuse: bool | None = None) -> Any:
        f, r, _ = self._revision(fileId, revisionId)
        if alt == "media":
            if f.mimeType.startswith(GOOGLE_PREFIX):
                raise forbidden("Only revisions of files with binary content can be downloaded.",
                                "fileNotDownloadable")
            return Media(r.data, r.mimeType)
        return select_fields(self._rev_json(r), fields or _DEFAULT)

    @api("drive.revisions.update", f"PATCH {D}/files/{{fileId}}/revisions/{{revisionId}}",
         "Keep a revision forever (or let it expire), or publish it.", writes=True,
         params={"fileId": "", "revisionId": "", "body": "{keepForever, published}"})
    def revisions_update(self, fileId: str, revisionId: str, body: dict, fields: str | None = None) -> dict[str, Any]:
        f, r, rows = self._revision(fileId, revisionId, need=3)
        upd: dict[str, Any] = {}
        for k in body:
            if k not in ("keepForever", "published", "publishAuto", "publishedOutsideDomain"):
                raise bad_request(f"The resource body includes fields which are not directly writable: {k}",
                                  "fieldNotWritable")
            if not isinstance(body[k], bool):
                raise bad_request(f"Invalid value for {k}.", "invalid")
        if "keepForever" in body:
            upd["keepForever"] = body["keepForever"]
        if "published" in body:
            if not f.mimeType.startswith(GOOGLE_PREFIX):
                raise bad_request("Only revisions of Google Docs can be published.", "badRequest")
            upd["published"] = body["published"]
        for row in rows:  # the implied revision becomes a stored row once it is changed
            self.db.revisions.setdefault(f"{f.id}/{row.id}", row)
        r = r.model_copy(update=upd)
        self.db.revisions[f"{f.id}/{r.id}"] = r
        return select_fields(self._rev_json(r), fields or _DEFAULT)

    @api("drive.revisions.delete", f"DELETE {D}/files/{{fileId}}/revisions/{{revisionId}}",
         "Delete an old revision of a binary file (not the head, not Google Docs).", writes=True, status=204,
         params={"fileId": "", "revisionId": ""})
    def revisions_delete(self, fileId: str, revisionId: str) -> None:
        f, r, rows = self._revision(fileId, revisionId, need=3)
        if f.mimeType.startswith(GOOGLE_PREFIX):
            raise forbidden("Revisions of Google Docs cannot be deleted.", "revisionDeletionNotSupported")
        if r.id == rows[-1].id:
            raise bad_request("The head revision of a file cannot be deleted.", "cannotDeleteHeadRevision")
        del self.db.revisions[f"{f.id}/{r.id}"]
