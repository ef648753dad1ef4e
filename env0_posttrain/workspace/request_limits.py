"""Limits on what a request may carry: JSON nesting depth and body size, with the APIs' own error shapes.

A body nested 1,000 deep made Python's JSON decoder raise RecursionError (a 500 on every JSON route), and a
value nested a few hundred deep, once stored, broke the snapshot and the state hash later. A 20 MB body was
stored whole. Google's front end refuses a payload over 10,485,760 bytes ("Request payload size exceeds the
limit"); Drive's simple and multipart uploads take at most 5 MB; Slack and Stripe publish no request limit, so
their routes get Google's (each in its own error shape). Protobuf's JSON parser, behind every Google API, stops at a nesting depth of 100.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import google_error

MAX_DEPTH = 100
GOOGLE_PAYLOAD_LIMIT = 10 * 1024 * 1024
DRIVE_UPLOAD_LIMIT = 5 * 1024 * 1024


def loads(raw: bytes | str) -> Any:
    """json.loads that raises ValueError (never RecursionError) and refuses nesting deeper than MAX_DEPTH."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    if depth(value) > MAX_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


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


def body_limit(path: str) -> int:
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
        path, limit = scope["path"], body_limit(scope["path"])
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
