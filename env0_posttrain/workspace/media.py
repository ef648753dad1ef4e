"""Media: what a download answers (Drive's alt=media, exports), bytes with their content type, and what an
upload carries into a handler.

Over HTTP a Media answer is its bytes, typed as the file is, with Range support as Google's download servers
have (a `Range: bytes=a-b` request gets 206 and Content-Range; googleapiclient's MediaIoBaseDownload reads it).
An agent's tool call cannot carry bytes: it gets the text when the bytes are UTF-8, else a short description.
An upload reaches a handler as `media_body` (the bytes, base64) and `media_mime_type` (the part's or the
request's Content-Type): googleapiclient's own names for them, so the action log keeps a JSON-safe record.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from typing import Any

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


@dataclass(frozen=True)
class Media:
    data: bytes
    mime_type: str

    def for_tool(self) -> Any:
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return {"mimeType": self.mime_type, "size": str(len(self.data)), **digests(self.data),
                    "note": "binary content: download it over HTTP with alt=media"}


def digests(data: bytes) -> dict[str, str]:
    """Drive's checksums of a file's bytes (hex, as files.get returns them)."""
    return {"md5Checksum": hashlib.md5(data).hexdigest(), "sha1Checksum": hashlib.sha1(data).hexdigest(),
            "sha256Checksum": hashlib.sha256(data).hexdigest()}


def encode(data: bytes) -> str:
    """An upload's bytes as the `media_body` argument carries them."""
    return base64.b64encode(data).decode("ascii")


def decode(media_body: str) -> bytes:
    """`media_body` back to bytes; ValueError when it is not base64."""
    return base64.b64decode(media_body, validate=True)


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """(first, last) byte of a single `Range: bytes=...` request over `size` bytes; None: serve it all (no header,
    a form we do not serve). ValueError: unsatisfiable (416)."""
    if not header:
        return None
    hit = _RANGE.fullmatch(header.strip())
    if hit is None or hit.group(1) == hit.group(2) == "":
        return None
    first, last = hit.groups()
    if first == "":  # the last N bytes
        n = int(last)
        if n == 0:
            raise ValueError("empty suffix range")
        return max(size - n, 0), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or end < start:
        raise ValueError("range not satisfiable")
    return start, end
