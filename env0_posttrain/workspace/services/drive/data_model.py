"""Drive state: files (folders, uploaded files and Google Docs stubs) with their permissions, comments and
their replies, past revisions, the change log (changes.list), shared drives and watch channels.

A file's only revision is implied by the file itself; rows are stored once its content changes (the
earlier content is kept as revision "1"). A shared drive's root is a folder row with the drive's id.

A file's bytes are kept exactly as uploaded: as `content` (text) when they are UTF-8, which is what search,
exports and verifiers read, else as `blob` (bytes; base64 in the state's JSON, as env0 keeps `content_blob`).
`data` gives the bytes back either way, so downloads, `size` and the checksums are byte-exact.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from ...base import DB, Row, table

FOLDER = "application/vnd.google-apps.folder"
GDOC = "application/vnd.google-apps.document"
GOOGLE_PREFIX = "application/vnd.google-apps."


def content_fields(data: bytes | str | None) -> dict[str, Any]:
    """The `content` / `blob` pair that stores `data` exactly: text when it is UTF-8 (or given as text)."""
    if data is None or isinstance(data, str):
        return {"content": data, "blob": None}
    try:
        return {"content": data.decode("utf-8"), "blob": None}
    except UnicodeDecodeError:
        return {"content": None, "blob": bytes(data)}


class _Stored(Row):
    """A row holding a file's bytes: text in `content`, anything else in `blob`."""

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
    content: str | None = None
    blob: bytes | None = None

    @property
    def data(self) -> bytes:
        return self.blob if self.blob is not None else (self.content or "").encode("utf-8")


class Permission(Row):
    id: str
    type: str  # user | group | domain | anyone
    role: str  # owner | organizer | fileOrganizer | writer | commenter | reader
    emailAddress: str | None = None
    domain: str | None = None
    displayName: str | None = None
    allowFileDiscovery: bool | None = None


class File(_Stored):
    id: str
    name: str
    mimeType: str
    parents: tuple[str, ...] = ()
    ownerEmail: str
    createdTime: str
    modifiedTime: str
    trashed: bool = False
    starred: bool = False
    description: str | None = None
    # content / blob (_Stored): an uploaded file's bytes (Google Docs text lives in the docs service)
    permissions: tuple[Permission, ...] = ()
    version: int = 1
    driveId: str | None = None  # the shared drive holding the file (its members have their drive role on it)
    kept: dict[str, Any] = {}  # fields kept as written (file_fields.KEPT): properties, contentHints, ...


class Comment(Row):
    id: str
    fileId: str
    authorEmail: str
    authorName: str
    content: str
    quotedText: str | None = None
    createdTime: str
    modifiedTime: str
    resolved: bool = False
    deleted: bool | None = None


class Reply(Row):
    id: str
    commentId: str
    fileId: str
    authorEmail: str
    authorName: str
    content: str
    action: str | None = None  # resolve | reopen
    createdTime: str
    modifiedTime: str
    deleted: bool | None = None


class Revision(_Stored):
    id: str
    fileId: str
    mimeType: str
    modifiedTime: str
    lastModifyingEmail: str
    keepForever: bool = False
    published: bool | None = None


class Change(Row):
    """One entry of changes.list: the file's state is read live; `owner` says who saw a removed file."""
    id: int
    fileId: str
    owner: str
    time: str
    removed: bool = False


class SharedDrive(Row):
    id: str
    name: str
    createdTime: str
    requestId: str
    creatorEmail: str
    hidden: bool = False
    colorRgb: str | None = None


class DriveDB(DB):
    files: dict[str, File] = table()
    comments: dict[str, Comment] = table()
    replies: dict[str, Reply] = table()
    revisions: dict[str, Revision] = table()  # key "<fileId>/<revisionId>"
    changeLog: dict[str, Change] = table()  # key: zero-padded change id
    drives: dict[str, SharedDrive] = table()
    channels: dict[str, Any] = table()  # calendar's Channel rows (one watch-channel shape for both APIs)
    changeId: int = 0
