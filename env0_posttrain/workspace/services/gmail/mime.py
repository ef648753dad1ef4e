"""RFC 822 in and out: parse a sent `raw` message, render a stored one as raw or as a Gmail payload."""

from __future__ import annotations

import base64
import html
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime, getaddresses
from datetime import datetime, timezone
from typing import Any

from ...errors import bad_request
from .data_model import Message


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64url(s: str) -> bytes:
    s = s.strip()
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def split_addresses(value: str | None, me: str | None = None) -> tuple[str, ...]:
    """The addresses of a header; with `me` (the sending mailbox), a bare `me` is that mailbox, as env0's Gmail
    takes it (Google answers "Invalid To header"; env0's packages send `To: me`)."""
    if not value:
        return ()
    out = []
    for name, addr in getaddresses([value]):
        if me and addr.strip().lower() == "me":
            addr = me
        if addr and "@" in addr:
            out.append(f"{name} <{addr}>" if name else addr)
    return tuple(out)


def address_of(header: str) -> str:
    pairs = getaddresses([header])
    return (pairs[0][1] if pairs else header).strip().lower()


def parse_raw(raw: str | bytes, me: str | None = None) -> dict[str, Any]:
    """Fields of a Message from an RFC 822 message (base64url string or bytes)."""
    try:
        data = unb64url(raw) if isinstance(raw, str) else raw
        msg = BytesParser(policy=policy.default).parsebytes(data)
    except Exception:
        raise bad_request("Invalid value for ByteString: raw", "invalidArgument") from None
    if not isinstance(msg, EmailMessage) or (not msg.keys() and not data.strip()):
        raise bad_request("Invalid value for ByteString: raw", "invalidArgument")
    body_part = msg.get_body(preferencelist=("plain", "html"))
    try:
        body = body_part.get_content() if body_part is not None else ""
    except Exception:
        body = ""
    attachments = []
    for part in msg.iter_attachments():
        payload = part.get_payload(decode=True) or b""
        attachments.append({"filename": part.get_filename() or "attachment", "mimeType": part.get_content_type(),
                            "data": b64url(payload), "size": len(payload)})
    return {
        "to": split_addresses(msg.get("To"), me), "cc": split_addresses(msg.get("Cc"), me),
        "bcc": split_addresses(msg.get("Bcc"), me), "subject": str(msg.get("Subject") or ""), "body": body,
        "inReplyTo": msg.get("In-Reply-To"), "references": msg.get("References"), "attachments": attachments,
        "from": msg.get("From"),
    }


def headers_of(m: Message) -> list[dict[str, str]]:
    date = format_datetime(datetime.fromtimestamp(m.internalDate / 1000, tz=timezone.utc))
    hs = [("MIME-Version", "1.0"), ("Date", date), ("Message-ID", m.messageIdHeader)]
    if m.inReplyTo:
        hs.append(("In-Reply-To", m.inReplyTo))
    if m.references:
        hs.append(("References", m.references))
    hs += [("Subject", m.subject), ("From", m.sender)]
    if m.to:
        hs.append(("To", ", ".join(m.to)))
    if m.cc:
        hs.append(("Cc", ", ".join(m.cc)))
    if m.bcc and "SENT" in m.labelIds:
        hs.append(("Bcc", ", ".join(m.bcc)))
    ctype = "multipart/mixed; boundary=\"000000000000b0undary\"" if m.attachments else "text/plain; charset=\"UTF-8\""
    hs.append(("Content-Type", ctype))
    return [{"name": k, "value": v} for k, v in hs]


def to_raw(m: Message) -> bytes:
    em = EmailMessage()
    for h in headers_of(m):
        if h["name"] not in ("Content-Type", "MIME-Version"):
            em[h["name"]] = h["value"]
    em.set_content(m.body)
    for a in m.attachments:
        maintype, _, subtype = a.mimeType.partition("/")
        em.add_attachment(unb64url(a.data), maintype=maintype or "application", subtype=subtype or "octet-stream",
                          filename=a.filename)
    return em.as_bytes()


def snippet(body: str) -> str:
    return html.escape(" ".join(body.split())[:140], quote=True)


def payload(m: Message, headers: list[dict[str, str]]) -> dict[str, Any]:
    text = m.body.encode()
    text_part = {"mimeType": "text/plain", "filename": "",
                 "headers": [{"name": "Content-Type", "value": "text/plain; charset=\"UTF-8\""}],
                 "body": {"size": len(text), "data": b64url(text)}}
    if not m.attachments:
        return {"partId": "", "mimeType": "text/plain", "filename": "", "headers": headers, "body": text_part["body"]}
    parts = [{"partId": "0", **text_part}]
    for i, a in enumerate(m.attachments, start=1):
        parts.append({"partId": str(i), "mimeType": a.mimeType, "filename": a.filename,
                      "headers": [{"name": "Content-Type", "value": f"{a.mimeType}; name=\"{a.filename}\""},
                                  {"name": "Content-Disposition", "value": f"attachment; filename=\"{a.filename}\""}],
                      "body": {"attachmentId": a.attachmentId, "size": a.size}})
    return {"partId": "", "mimeType": "multipart/mixed", "filename": "", "headers": headers, "body": {"size": 0},
            "parts": parts}


def size_estimate(m: Message) -> int:
    return 600 + len(m.subject) + len(m.body.encode()) + sum(a.size * 4 // 3 for a in m.attachments)
