"""Drive's state mechanics every resource uses: the root folders, access to a file, storing a new or changed file
and the change log (a page token is a change id: changes.py)."""

from __future__ import annotations

from typing import Any

from ...base import DIGITS, DRIVE_ALPHABET, make_id
from ...errors import bad_request, forbidden
from ..push_channels import PushChannels
from .access import file_not_found, role_of
from .data_model import FOLDER, GDOC, GOOGLE_PREFIX, Change, DriveDB, File, Permission, Revision, content_fields

CHANGES_KEPT = 1000  # changes kept (every write's savepoint copies the log); an older token lists from the oldest kept


class DriveState(PushChannels):
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

    def record_change(self, f: File, removed: bool = False) -> None:
        self.db.changeId += 1
        n = self.db.changeId
        self.db.changeLog[f"{n:012d}"] = Change(id=n, fileId=f.id, owner=f.ownerEmail, time=self.ws.now_rfc3339(),
                                                removed=removed)
        if len(self.db.changeLog) > CHANGES_KEPT:
            self.db.changeLog.pop(next(iter(self.db.changeLog)))

    def _drive_of(self, parents: tuple[str, ...]) -> str | None:
        parent = self.db.files.get(parents[0]) if parents else None
        return None if parent is None else parent.driveId or (parent.id if parent.id in self.db.drives else None)

    def record_revision(self, before: File, old: str | bytes, new: str | bytes) -> None:
        """A file's content changed from `old` to `new` (text or bytes; `before` is the file's row before the
        change)."""
        rows = sorted((r for k, r in self.db.revisions.items() if k.startswith(f"{before.id}/")), key=lambda r: int(r.id))
        if not rows:
            rows = [Revision(id="1", fileId=before.id, mimeType=before.mimeType, modifiedTime=before.modifiedTime,
                             lastModifyingEmail=before.ownerEmail, **content_fields(old))]
            self.db.revisions[f"{before.id}/1"] = rows[0]
        rid = str(int(rows[-1].id) + 1)
        self.db.revisions[f"{before.id}/{rid}"] = Revision(
            id=rid, fileId=before.id, mimeType=before.mimeType, modifiedTime=self.ws.now_rfc3339(),
            lastModifyingEmail=self.ws.me.email, **content_fields(new))
