"""Drive state: files (folders, uploaded files and Google Docs stubs) with their permissions, and comments."""

from __future__ import annotations

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


class DriveDB(DB):
    files: dict[str, File] = table()
    comments: dict[str, Comment] = table()
