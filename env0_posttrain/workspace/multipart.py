"""MIME multipart bodies as Google's upload (multipart/related) and batch (multipart/mixed) endpoints take them,
split byte-exact.

A part's payload ends where the next delimiter line starts: RFC 2046 puts the line break before `--boundary` in
the delimiter, so exactly one line break is removed, in the style the body uses (googleapiclient's generator
writes LF, most others CRLF; the style is read from the first delimiter line). A payload that itself ends in CR
or LF keeps it, so binary media survives whatever its last byte. Headers are read up to the first empty line
(either style); a part sent with `Content-Transfer-Encoding: base64` is decoded.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from email import policy
from email.parser import BytesParser

from .errors import bad_request


@dataclass(frozen=True)
class Part:
    headers: dict[str, str]  # names lowercased
    payload: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def boundary_of(content_type: str) -> str | None:
    header = BytesParser(policy=policy.default).parsebytes(b"Content-Type: " + content_type.encode("latin-1", "replace")
                                                           + b"\r\n\r\n")
    value = header.get_param("boundary")
    return str(value) if value else None


def read_headers(block: bytes, start: int = 0, open_end: bool = False) -> tuple[dict[str, str], int]:
    """Header lines of `block` from `start` up to the first empty line: (lowercased name -> value, offset of what
    follows the empty line). ValueError when no empty line ends them, unless `open_end` (a message with no body:
    its headers may run to the end)."""
    headers: dict[str, str] = {}
    pos = start
    while True:
        eol = block.find(b"\n", pos)
        if eol < 0 and not open_end:
            raise ValueError("headers not terminated by an empty line")
        line, pos = (block[pos:], len(block)) if eol < 0 else (block[pos:eol], eol + 1)
        line = line.rstrip(b"\r")
        if not line:
            return headers, pos
        name, sep, value = line.partition(b":")
        if sep:
            headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
        if eol < 0:
            return headers, pos


def _next_delimiter(body: bytes, delim: bytes, pos: int) -> int:
    """Offset of the LF before the next delimiter line from `pos`: `--boundary` then `--`, blanks and a line end, or
    the end of the body (the same bytes followed by anything else are data); -1 when there is none."""
    while True:
        at = body.find(b"\n" + delim, pos)
        if at < 0:
            return -1
        rest = body[at + 1 + len(delim):at + 1 + len(delim) + 80]
        if rest.startswith(b"--") or not rest.lstrip(b" \t") or rest.lstrip(b" \t")[:1] in (b"\r", b"\n"):
            return at
        pos = at + 1


def split(content_type: str, body: bytes) -> list[Part]:
    """The parts of a multipart body; 400 (Google's badContent) when it is not one."""
    boundary = boundary_of(content_type)
    if not boundary:
        raise bad_request("Missing multipart boundary.", "badContent")
    delim = b"--" + boundary.encode("latin-1")
    start = body.find(delim)
    if start < 0 or (start > 0 and body[start - 1:start] != b"\n"):
        raise bad_request("Multipart body without its boundary.", "badContent")
    crlf = body[start + len(delim):start + len(delim) + 2] == b"\r\n"
    parts: list[Part] = []
    pos = start + len(delim)
    while not body.startswith(b"--", pos):  # `--boundary--` closes the body
        eol = body.find(b"\n", pos)  # the rest of the delimiter line (transport padding)
        nxt = _next_delimiter(body, delim, eol) if eol >= 0 else -1
        if nxt < 0:
            raise bad_request("Multipart body not closed by its boundary.", "badContent")
        end = nxt - 1 if crlf and body[nxt - 1:nxt] == b"\r" and nxt - 1 >= eol + 1 else nxt
        try:
            headers, at = read_headers(body[eol + 1:end])
        except ValueError:
            raise bad_request("Multipart part without headers.", "badContent") from None
        payload = body[eol + 1 + at:end]
        if headers.get("content-transfer-encoding", "").lower() == "base64":
            try:
                payload = base64.b64decode(payload)
            except ValueError:
                raise bad_request("Invalid base64 part.", "badContent") from None
        parts.append(Part(headers, payload))
        pos = nxt + 1 + len(delim)
    return parts
