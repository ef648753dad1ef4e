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

Bytes do not bound the work: a few MB of `{}` cost ~0.5 GiB to parse, so one sandbox's 32 connections could take
the runner down with every episode of the round. So `loads` counts a body's values and its nesting in the bytes
(C-speed counts; strings blanked first only when the quick count is over) and refuses one with more than
MAX_ELEMENTS values or nested deeper than MAX_DEPTH before any object is built. Slack's methods take at most
SLACK_PAYLOAD_LIMIT (text is 40,000 characters, blocks 50: each JSON-escaped stays far below it; its file methods
keep Google's) and Stripe's at most STRIPE_PAYLOAD_LIMIT (its largest documented fields are 500-character metadata
values, 50 keys). And a runner-wide budget (BODIES) holds the bytes of the bodies being read and parsed at once
across every app in the process: a body over SMALL_BODY waits for its share (up to BUSY_WAIT_S, then the API's
503 / Slack's `ratelimited`), so the bodies a sandbox floods never outgrow the budget, while small ones, every
honest call here, never wait.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
from typing import Any

from .errors import google_error

MAX_DEPTH = 100
GOOGLE_PAYLOAD_LIMIT = 10 * 1024 * 1024
DRIVE_UPLOAD_LIMIT = 5 * 1024 * 1024
RESUMABLE_UPLOAD_LIMIT = 32 * 1024 * 1024
SLACK_PAYLOAD_LIMIT = 2 * 1024 * 1024
STRIPE_PAYLOAD_LIMIT = 1024 * 1024
MAX_ELEMENTS = 100_000  # values (objects, arrays, scalars) in one body: ~10 MB of Python objects at most
BODY_BUDGET = 32 * 1024 * 1024
SMALL_BODY = 64 * 1024
BUSY_WAIT_S = 30.0

_STRINGS = re.compile(rb'"(?:[^"\\]+|\\.)*"')
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_INNERMOST = re.compile(rb"\[\]|\{\}")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


class TooMuchJson(ValueError):
    """A JSON text refused before parsing: more values or deeper nesting than any API here takes."""


def structure_problem(raw: bytes | str) -> str | None:
    """Why a JSON text holds too much to build (more than MAX_ELEMENTS values, nesting deeper than MAX_DEPTH), read
    from its bytes without building anything; None when it is within both (or is not JSON: the parser says so)."""
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    opens = data.count(b"{") + data.count(b"[")
    if opens + data.count(b",") < MAX_ELEMENTS and opens <= MAX_DEPTH:
        return None  # an upper bound (brackets and commas inside strings count too) already within both
    if b'"' in data:
        data = _STRINGS.sub(b'""', data)
        opens = data.count(b"{") + data.count(b"[")
    if opens + data.count(b",") >= MAX_ELEMENTS:
        return f"JSON with more than {MAX_ELEMENTS} values"
    brackets = data.translate(None, _NOT_BRACKETS)
    for _ in range(MAX_DEPTH + 1):  # each pass drops the innermost pairs: one level
        if not brackets:
            return None
        brackets, dropped = _INNERMOST.subn(b"", brackets)
        if not dropped:
            return None  # unbalanced: not JSON, the parser says so
    return f"JSON nested deeper than {MAX_DEPTH} levels"


def loads(raw: bytes | str) -> Any:
    """json.loads that raises ValueError (never RecursionError) and refuses, before building anything, more than
    MAX_ELEMENTS values and nesting deeper than MAX_DEPTH; then strings with a lone surrogate and non-finite
    numbers."""
    problem = structure_problem(raw)
    if problem is not None:
        raise TooMuchJson(problem)
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


def _stripe(path: str) -> bool:
    return path.startswith("/v1/") and not path.startswith("/v1/documents")  # Docs has /v1/documents


def body_limit(path: str, query: bytes = b"") -> int:
    if path.startswith("/upload/") and (b"upload_id=" in query or b"uploadType=resumable" in query):
        return RESUMABLE_UPLOAD_LIMIT
    if path.startswith("/api/") and not path.startswith("/api/files."):
        return SLACK_PAYLOAD_LIMIT
    if _stripe(path):
        return STRIPE_PAYLOAD_LIMIT
    return DRIVE_UPLOAD_LIMIT if path.startswith("/upload/drive/") else GOOGLE_PAYLOAD_LIMIT


def too_large(path: str, limit: int) -> dict[str, Any]:
    if path.startswith("/api/"):
        return {"ok": False, "error": "request_too_large", "limit_bytes": limit}
    if _stripe(path):
        return {"error": {"type": "invalid_request_error", "message": f"Request payload exceeds {limit} bytes."}}
    return google_error(413, f"Request payload size exceeds the limit: {limit} bytes.", "uploadTooLarge").body


def too_busy(path: str) -> tuple[int, dict[str, Any]]:
    """The API's answer when the runner-wide body budget stays full: try again later."""
    if path.startswith("/api/"):
        return 429, {"ok": False, "error": "ratelimited"}
    if _stripe(path):
        return 429, {"error": {"type": "rate_limit_error", "message": "Too many requests hit the API too quickly."}}
    return 503, google_error(503, "The service is currently unavailable.", "backendError").body


class Budget:
    """Bytes of request bodies held at once in this process, across every app and event loop (one per sandbox's
    services): a thread-safe count, taken without blocking (a waiting coroutine polls)."""

    def __init__(self, total: int):
        self.total, self.used, self.peak = total, 0, 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        with self._lock:
            if self.used + n > self.total and self.used:  # one body larger than the budget may run alone
                return False
            self.used += n
            self.peak = max(self.peak, self.used)
            return True

    def give(self, n: int) -> None:
        with self._lock:
            self.used -= n


BODIES = Budget(BODY_BUDGET)


class TooLarge(Exception):
    pass


class TooBusy(Exception):
    pass


class HeldBody:
    """A request body read within its route's limit, with its share of BODIES (give it back with release())."""

    def __init__(self, budget: Budget):
        self.budget, self.held, self.chunks, self.size = budget, 0, [], 0

    async def _hold(self, upto: int, deadline: float) -> None:
        need = min(upto, self.budget.total) - self.held
        if upto <= SMALL_BODY or need <= 0:
            return
        while not self.budget.take(need):
            if time.monotonic() > deadline:
                raise TooBusy
            await asyncio.sleep(0.01)
        self.held += need

    async def read(self, scope: dict, receive: Any, limit: int) -> bytes:
        """The whole body; TooLarge past `limit` (by Content-Length when given, else while reading), TooBusy when
        the budget stays full for BUSY_WAIT_S. Nothing over the limit is buffered."""
        deadline = time.monotonic() + BUSY_WAIT_S
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit():
            if int(declared) > limit:
                raise TooLarge
            await self._hold(int(declared), deadline)
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            self.size += len(chunk)
            if self.size > limit:
                raise TooLarge
            await self._hold(self.size, deadline)
            self.chunks.append(chunk)
            more = message.get("more_body", False)
        body, self.chunks = b"".join(self.chunks), []
        return body

    def release(self) -> None:
        self.budget.give(self.held)
        self.held = 0


async def limited_body(scope: dict, receive: Any, send: Any, path: str) -> tuple[bytes, HeldBody] | None:
    """(body, its hold) within `path`'s limit and the budget; None once the API's 413 or busy answer is sent."""
    held, limit = HeldBody(BODIES), body_limit(path, scope.get("query_string", b""))
    try:
        return await held.read(scope, receive, limit), held
    except TooLarge:
        held.release()
        await _answer(send, 413, too_large(path, limit))
    except TooBusy:
        held.release()
        await _answer(send, *too_busy(path))
    except BaseException:
        held.release()
        raise
    return None


class BodyLimit:
    """ASGI middleware: read the body within its route's limit and the runner-wide budget (limited_body), so
    nothing over the limit is buffered or reaches a handler; the budget is held until the answer is sent."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        got = await limited_body(scope, receive, send, scope["path"])
        if got is None:
            return
        body, held = got
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            await self.app(scope, replay, send)
        finally:
            held.release()


async def _answer(send: Any, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
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
