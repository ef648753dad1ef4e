"""Gmail state: messages (every mailbox in one table, keyed by id), user labels, drafts."""

from __future__ import annotations

from ...base import DB, Row, table

SYSTEM_LABELS = ("INBOX", "SENT", "DRAFT", "SPAM", "TRASH", "UNREAD", "STARRED", "IMPORTANT", "CHAT",
                 "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS")


class Attachment(Row):
    attachmentId: str
    filename: str
    mimeType: str
    data: str  # base64url, as attachments.get serves it
    size: int


class Message(Row):
    id: str
    threadId: str
    userId: str  # mailbox owner (email); not part of the API resource
    labelIds: tuple[str, ...] = ()
    historyId: int
    internalDate: int  # epoch ms
    sender: str  # From header
    to: tuple[str, ...] = ()
    cc: tuple[str, ...] = ()
    bcc: tuple[str, ...] = ()
    subject: str = ""
    body: str = ""  # text/plain body
    messageIdHeader: str
    inReplyTo: str | None = None
    references: str | None = None
    attachments: tuple[Attachment, ...] = ()


class Label(Row):
    id: str
    userId: str
    name: str
    type: str = "user"
    messageListVisibility: str | None = "show"
    labelListVisibility: str | None = "labelShow"
    color: dict[str, str] | None = None


class Draft(Row):
    id: str
    userId: str
    messageId: str


class GmailDB(DB):
    messages: dict[str, Message] = table()
    labels: dict[str, Label] = table()  # key "owner/labelId"
    drafts: dict[str, Draft] = table()
    history: int = 1000
