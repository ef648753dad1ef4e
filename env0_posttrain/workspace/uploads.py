"""Google's resumable upload protocol, on every upload path (Drive files.create / files.update, Gmail's).

1. The client starts a session: the method's upload path with `uploadType=resumable`, the metadata as a JSON body
   (or none), `X-Upload-Content-Type` and optionally `X-Upload-Content-Length`. The answer is 200 with the session
   URI in `Location` (the same path and query plus `upload_id`).
2. It PUTs the bytes there, whole or in chunks, each with `Content-Range: bytes FIRST-LAST/TOTAL` (`*` while the
   total is unknown). Until the last byte arrives the answer is 308 Resume Incomplete with `Range: bytes=0-N`
   (the bytes kept so far; no Range before the first). `Content-Range: bytes */TOTAL` with no body asks for the
   status. A chunk may start before the end of what is kept (a client resending after an error): the rest is
   overwritten from there; a chunk starting past it is refused.
3. With the last byte the method runs, once, as a multipart upload of the same metadata and bytes would, and its
   answer (the file's metadata) is the final answer; a later PUT gets that answer again. DELETE cancels (499).

Sessions belong to the workspace they were started on: a reseed ends them (404, as an expired session is on
Google). At most MAX_OPEN unfinished sessions are kept per workspace (the oldest is dropped), each at most
RESUMABLE_UPLOAD_LIMIT bytes (request_limits.py). Chunks may be any size here; Google wants multiples of 256 KiB
except the last.
"""

from __future__ import annotations

import re
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlencode
from weakref import WeakKeyDictionary

from .errors import ApiError, bad_request, google_error
from .http_routes import Upload, json_object, media_type
from .request_limits import RESUMABLE_UPLOAD_LIMIT, too_large

if TYPE_CHECKING:
    from .environment import Workspace

MAX_OPEN = 8
Answer = tuple[int, list[tuple[str, str]], bytes, str]  # status, headers, body, content type
_CONTENT_RANGE = re.compile(r"bytes (?:(\d+)-(\d+)|\*)/(\d+|\*)")


@dataclass
class Session:
    complete: Callable[[Upload], tuple[int, bytes, str]]  # runs the method with the whole upload
    meta: dict[str, Any]
    media_type: str
    total: int | None
    data: bytearray = field(default_factory=bytearray)
    final: tuple[int, bytes, str] | None = None


_SESSIONS: "WeakKeyDictionary[Workspace, OrderedDict[str, Session]]" = WeakKeyDictionary()


def is_session_request(query: list[tuple[str, str]]) -> bool:
    return any(k == "upload_id" for k, _ in query) or ("uploadType", "resumable") in query


def start(ws: "Workspace", location: str, query: list[tuple[str, str]], headers: dict[str, str], body: bytes,
          complete: Callable[[Upload], tuple[int, bytes, str]]) -> Answer:
    """Open a session (step 1); `location` is the upload path's absolute URL, `complete` runs the method."""
    meta = json_object(body) if body.strip() else {}
    declared = headers.get("x-upload-content-length")
    total = None
    if declared is not None:
        if not declared.strip().isdigit():
            raise bad_request("Invalid X-Upload-Content-Length header.", "invalid")
        total = int(declared)
        if total > RESUMABLE_UPLOAD_LIMIT:
            raise ApiError(413, too_large("/upload/", RESUMABLE_UPLOAD_LIMIT))
    sid = secrets.token_urlsafe(36)
    open_ = _SESSIONS.setdefault(ws, OrderedDict())
    open_[sid] = Session(complete, meta, media_type(headers.get("x-upload-content-type")), total)
    for finished, keep in ((False, MAX_OPEN), (True, 4 * MAX_OPEN)):  # a finished one keeps only its answer
        for k in [k for k, s in open_.items() if (s.final is not None) == finished][:-keep]:
            del open_[k]
    uri = f"{location}?{urlencode([*query, ('upload_id', sid)])}"
    return 200, [("location", uri), ("x-guploader-uploadid", sid)], b"", ""


def resume(ws: "Workspace", method: str, query: list[tuple[str, str]], headers: dict[str, str],
           body: bytes) -> Answer:
    """A PUT of bytes or a status query (step 2), or a DELETE, on a session URI."""
    sid = dict(query).get("upload_id", "")
    open_ = _SESSIONS.get(ws) or {}
    session = open_.get(sid)
    if session is None:
        raise google_error(404, "No such upload session (it ended, or the workspace was reseeded).", "notFound")
    if method == "DELETE":
        del open_[sid]
        return 499, [], b"", ""
    if session.final is not None:
        return _final(session.final)
    _take(session, headers.get("content-range"), body)
    if len(session.data) > RESUMABLE_UPLOAD_LIMIT:
        del open_[sid]
        raise ApiError(413, too_large("/upload/", RESUMABLE_UPLOAD_LIMIT))
    if session.total is None or len(session.data) < session.total:
        kept = [("range", f"bytes=0-{len(session.data) - 1}")] if session.data else []
        return 308, [*kept, ("x-guploader-uploadid", sid)], b"", ""
    session.final = session.complete(Upload(session.meta, bytes(session.data), session.media_type))
    session.data = bytearray()
    return _final(session.final)


def _final(final: tuple[int, bytes, str]) -> Answer:
    status, payload, ctype = final
    return status, [], payload, ctype


def _take(session: Session, content_range: str | None, body: bytes) -> None:
    """Add a PUT's bytes to the session as its Content-Range places them."""
    if content_range is None:  # the whole upload in one request
        session.data = bytearray(body)
        session.total = len(body)
        return
    hit = _CONTENT_RANGE.fullmatch(content_range.strip())
    if hit is None:
        raise bad_request(f"Invalid Content-Range header: {content_range[:80]}", "invalid")
    first, last, total = hit.groups()
    if total != "*":
        if session.total is not None and int(total) != session.total:
            raise bad_request(f"The total size {total} differs from the size declared before ({session.total}).",
                              "invalid")
        session.total = int(total)
    if first is None:  # a status query: `bytes */TOTAL`
        if body:
            raise bad_request("A Content-Range of bytes */N carries no body.", "invalid")
        return
    start, end = int(first), int(last)
    if end < start or end - start + 1 != len(body):
        raise bad_request(f"Content-Range {content_range} does not match the {len(body)} bytes sent.", "invalid")
    if start > len(session.data):
        raise bad_request(f"Invalid request. According to the Content-Range header, the upload offset is {start} "
                          f"byte(s), which exceeds the {len(session.data)} byte(s) already uploaded.", "invalid")
    if session.total is not None and end >= session.total:
        raise bad_request(f"Content-Range {content_range} runs past the total size.", "invalid")
    del session.data[start:]
    session.data += body

