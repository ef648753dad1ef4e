"""Limits on what a request may carry: JSON nesting depth, strings UTF-8 can hold, finite numbers and body size,
with the APIs' own error shapes.

A body nested 1,000 deep made Python's JSON decoder raise RecursionError (a 500 on every JSON route), and a
value nested a few hundred deep, once stored, broke the snapshot and the state hash later. A 20 MB body was
stored whole. Google's front end refuses a payload over 10,485,760 bytes ("Request payload size exceeds the
limit"); Drive's simple and multipart uploads take at most 5 MB; Slack and Stripe publish no request limit, so
their routes get Google's (each in its own error shape). A resumable upload (uploads.py) takes up to
RESUMABLE_UPLOAD_LIMIT (32 MiB) in all, in one request or many: Google takes 5 TB; a test workspace holds files in
memory. Protobuf's JSON parser, behind every Google API, stops at a nesting depth of 100.

JSON can carry a lone surrogate (`"\\ud800"`) that UTF-8 cannot: stored, it broke every later read of the state
(its hash, snapshots, diffs, the action log answered 500). Google's parser refuses such a string and a non-finite
number (`NaN`, `1e999`) with a 400; so does `loads`, and `hostile` finds them in a tool call's arguments (an
agent's JSON never passed through `loads`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .errors import google_error

MAX_DEPTH = 100
GOOGLE_PAYLOAD_LIMIT = 10 * 1024 * 1024
DRIVE_UPLOAD_LIMIT = 5 * 1024 * 1024
RESUMABLE_UPLOAD_LIMIT = 32 * 1024 * 1024


_SURROGATE = re.compile("[\ud800-\udfff]")


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


def loads(raw: bytes | str) -> Any:
    """json.loads that raises ValueError (never RecursionError) and refuses nesting deeper than MAX_DEPTH, strings
    with a lone surrogate and non-finite numbers."""
    try:
        value = json.loads(raw, parse_constant=_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    problem = hostile(value)
    if problem is not None:
        raise ValueError(problem[1])
    return value


def hostile(value: Any) -> tuple[str, str] | None:
    """(where, what) of the first thing in a decoded JSON value that no API stores: nesting deeper than MAX_DEPTH,
    a string (or key) with a lone surrogate, a non-finite number; None when there is none. Without recursion."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        node, d, where = stack.pop()
        if isinstance(node, str):
            hit = _SURROGATE.search(node)
            if hit:
                return where, f"a lone surrogate (\\u{ord(hit.group()):04x}) at '{where}' is not valid UTF-8"
        elif isinstance(node, float):
            if not math.isfinite(node):
                return where, f"the number at '{where}' is not finite"
        elif isinstance(node, (dict, list, tuple)):
            if d + 1 > MAX_DEPTH:
                return where, f"JSON nested deeper than {MAX_DEPTH} levels"
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for k, v in items:
                at = _SURROGATE.sub("\ufffd", f"{where}.{k}" if where and isinstance(k, str) else
                                    f"{where}[{k}]" if where else str(k))
                if isinstance(k, str) and _SURROGATE.search(k):
                    return at, f"a lone surrogate in the name '{at}' is not valid UTF-8"
                stack.append((v, d + 1, at))
    return None


def sanitized(value: Any) -> Any:
    """A copy that any JSON encoder takes: lone surrogates -> U+FFFD, non-finite numbers -> None, nesting past
    MAX_DEPTH cut (for logging what a refused call carried)."""
    def clean(node: Any, d: int) -> Any:
        if isinstance(node, str):
            return _SURROGATE.sub("\ufffd", node)
        if isinstance(node, float):
            return node if math.isfinite(node) else None
        if isinstance(node, (dict, list, tuple)):
            if d >= MAX_DEPTH:
                return "..."
            if isinstance(node, dict):
                return {clean(str(k), d): clean(v, d + 1) for k, v in node.items()}
            return [clean(v, d + 1) for v in node]
        return node
    return clean(value, 0)


def depth(value: Any) -> int:
    """Nesting depth of a decoded JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, d + 1)
            stack.extend((child, d + 1) for child in node)
    return deepest


def body_limit(path: str, query: bytes = b"") -> int:
    if path.startswith("/upload/") and (b"upload_id=" in query or b"uploadType=resumable" in query):
        return RESUMABLE_UPLOAD_LIMIT
    return DRIVE_UPLOAD_LIMIT if path.startswith("/upload/drive/") else GOOGLE_PAYLOAD_LIMIT


def too_large(path: str, limit: int) -> dict[str, Any]:
    if path.startswith("/api/"):
        return {"ok": False, "error": "request_too_large", "limit_bytes": limit}
    if path.startswith("/v1/") and not path.startswith("/v1/documents"):  # Stripe's paths (Docs has /v1/documents)
        return {"error": {"type": "invalid_request_error", "message": f"Request payload exceeds {limit} bytes."}}
    return google_error(413, f"Request payload size exceeds the limit: {limit} bytes.", "uploadTooLarge").body


class BodyLimit:
    """ASGI middleware: read the body up to its route's limit and answer 413 past it (by Content-Length when
    given, else while reading), so nothing over the limit is buffered or reaches a handler."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, limit = scope["path"], body_limit(scope["path"], scope.get("query_string", b""))
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _answer(send, path, limit)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _answer(send, path, limit)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body, replayed = b"".join(chunks), False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _answer(send: Any, path: str, limit: int) -> None:
    payload = json.dumps(too_large(path, limit)).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json; charset=UTF-8"),
                            (b"content-length", str(len(payload)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})


async def read_body(receive: Any) -> bytes:
    """The whole request body of an ASGI http request (what Starlette's Request.body() does, for raw ASGI apps)."""
    chunks = []
    while True:
        msg = await receive()
        chunks.append(msg.get("body", b""))
        if not msg.get("more_body"):
            return b"".join(chunks)
