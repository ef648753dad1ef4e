"""Gmail state: messages (every mailbox in one table, keyed by id), user labels, drafts, the history
log, and each mailbox's settings (filters, forwarding addresses, send-as aliases, delegates, and the
single-resource settings: vacation, autoForwarding, imap, pop, language).

Settings tables are keyed "<owner>/<id>"; a mailbox's primary send-as address and its default
single-resource settings are implied (not stored), so a fresh workspace stores none of them.
"""

from __future__ import annotations

from typing import Any

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


class HistoryRecord(Row):
    """One mailbox change, as users.history.list reports it (kind: messageAdded | messageDeleted |
    labelAdded | labelRemoved); keyed by the zero-padded history id, so key order is history order."""
    id: int
    userId: str
    kind: str
    messageId: str
    threadId: str
    labelIds: tuple[str, ...] = ()


class Filter(Row):
    id: str
    userId: str
    criteria: dict[str, Any]
    action: dict[str, Any]


class ForwardingAddress(Row):
    userId: str
    forwardingEmail: str
    verificationStatus: str = "accepted"


class SendAs(Row):
    userId: str
    sendAsEmail: str
    displayName: str = ""
    replyToAddress: str | None = None
    signature: str = ""
    isDefault: bool = False
    treatAsAlias: bool = True
    verificationStatus: str = "accepted"


class Delegate(Row):
    userId: str
    delegateEmail: str
    verificationStatus: str = "accepted"


class MailSetting(Row):
    """A single-resource setting (vacation, autoForwarding, imap, pop, language) once it was changed."""
    userId: str
    name: str
    value: dict[str, Any]


class Watch(Row):
    userId: str
    topicName: str
    labelIds: tuple[str, ...] = ()
    expiration: str


class GmailDB(DB):
    messages: dict[str, Message] = table()
    labels: dict[str, Label] = table()  # key "owner/labelId"
    drafts: dict[str, Draft] = table()
    historyLog: dict[str, HistoryRecord] = table()
    filters: dict[str, Filter] = table()  # key "owner/filterId"
    forwardingAddresses: dict[str, ForwardingAddress] = table()  # key "owner/email"
    sendAs: dict[str, SendAs] = table()  # key "owner/email" (aliases; the primary address is implied)
    delegates: dict[str, Delegate] = table()  # key "owner/email"
    mailSettings: dict[str, MailSetting] = table()  # key "owner/name"
    watches: dict[str, Watch] = table()  # key owner
    history: int = 1000
    historyFloor: int = 1000  # history.list keeps changes after this id (older: 404, the client does a full sync)
