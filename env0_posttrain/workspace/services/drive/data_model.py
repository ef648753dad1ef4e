"""Drive state: files (folders, uploaded files and Google Docs stubs) with their permissions, comments and
their replies, past revisions, the change log (changes.list), shared drives and watch channels.

A file's only revision is implied by the file itself; rows are stored once its content changes (the
earlier content is kept as revision "1"). A shared drive's root is a folder row with the drive's id.
"""

from __future__ import annotations

from typing import Any

from ...base import DB, Row, table

FOLDER = "application/vnd.google-apps.folder"
GDOC = "application/vnd.google-apps.document"
GOOGLE_PREFIX = "application/vnd.google-apps."


class Permission(Row):
    id: str
    type: str  # user | group | domain | anyone
    role: str  # owner | organizer | fileOrganizer | writer | commenter | reader
    emailAddress: str | None = None
    domain: str | None = None
    displayName: str | None = None
    allowFileDiscovery: bool | None = None


class File(Row):
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
    content: str | None = None  # text content of uploaded files (Google Docs text lives in the docs service)
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


class Revision(Row):
    id: str
    fileId: str
    mimeType: str
    modifiedTime: str
    lastModifyingEmail: str
    content: str = ""
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
