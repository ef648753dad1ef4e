"""Google's HTTP batch endpoints: a multipart/mixed request whose parts are HTTP requests, answered by a
multipart/mixed response whose parts are their HTTP responses, in order.

Paths: each discovery document's `batchPath` (`batch/drive/v3`, `batch/calendar/v3`; Gmail's documented
`batch/gmail/v1`) and `/batch`, which Gmail's, Docs' and the Admin SDK's documents name: on Google the host says
which API `/batch` serves; here one host serves them all, so `/batch` takes parts of any of them (as Google's retired
global endpoint did), while `/batch/API/VERSION` takes that API's requests only (Google: "all the inner requests
must go to the same Google API"; a part for another API gets a 404 part).

Each part is `Content-Type: application/http` with an optional Content-ID; its body is a request line
(`GET /drive/v3/files/ID?fields=id HTTP/1.1`, a path or an absolute URL), headers and a body. The outer request's
headers (all but Content-*) apply to every part unless the part sets its own, as on Google: an Authorization sent
once on the batch covers its calls. A response part carries `Content-ID: <response-ID>` for a request part's
`<ID>`, which is how googleapiclient's BatchHttpRequest pairs answers with callbacks.

Each part goes through the server as a request of its own (the app's router, auth gate and action log: the caller
passes a `send` that does exactly what a single request does). Refused as Google refuses them: more calls than the
API allows in one batch (Gmail and Drive 100, Calendar and others 1,000; the whole batch gets 400), a batch inside
a batch, media uploads and downloads (per part, 400).
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Awaitable, Callable
from urllib.parse import unquote, urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from . import multipart
from .errors import ApiError, bad_request, google_error
from .services import registry

Headers = list[tuple[bytes, bytes]]
Answer = tuple[int, Headers, bytes]  # status, headers (lowercased names), body
JSON = b"application/json; charset=UTF-8"
# each API with its own batch endpoint: (api, version) -> its path prefix, and that prefix's calls per batch (the
# limit a call's API sets in a batch at /batch too; any other API: DEFAULT_LIMIT)
PER_API: dict[tuple[str, str], str] = {}
LIMITS: dict[str, int] = {}


def _refresh() -> None:
    batched = [(s.google_api, s.batch_limit) for s in registry.SERVICES if s.google_api and s.batch_limit]
    PER_API.clear()
    PER_API.update({api: "/{}/{}/".format(*api) for api, _ in batched})
    LIMITS.clear()
    LIMITS.update({PER_API[api]: limit for api, limit in batched})


registry.watch(_refresh)
DEFAULT_LIMIT = 1000
_PER_API_PATH = re.compile(r"/batch/([^/]+)/([^/]+)")


@dataclass(frozen=True)
class Call:
    """One part's request, with the outer request's headers merged in."""

    content_id: str | None
    method: str
    path: str  # as sent (percent-encoded), without the query
    query: bytes
    headers: Headers
    body: bytes

    @property
    def decoded_path(self) -> str:
        return unquote(self.path)


def is_batch_path(path: str) -> bool:
    return path == "/batch" or path.startswith("/batch/")


def plan(path: str, content_type: str, body: bytes, outer: Headers) -> list[tuple[Call, Answer | None]]:
    """The batch at `path` as calls to make, each with its ready answer when it is refused on its own.
    Raises ApiError (the whole batch's answer) for an unknown batch path or a body that is not a batch."""
    prefix = None
    if path != "/batch":
        hit = _PER_API_PATH.fullmatch(path)
        prefix = PER_API.get(hit.groups()) if hit else None  # type: ignore[arg-type]
        if prefix is None:
            raise google_error(404, f"Method not found: POST {path}", "notFound")
    if not content_type.lower().startswith("multipart/mixed"):
        raise bad_request("A batch request is a multipart/mixed body.", "badContent")
    calls = [_call(p, outer) for p in multipart.split(content_type, body)]
    if not calls:
        raise bad_request("The batch has no requests.", "badContent")
    limit = min([LIMITS.get(_api_of(c.decoded_path), DEFAULT_LIMIT) for c in calls])
    if len(calls) > limit:
        raise bad_request(f"Too many requests in one batch: {len(calls)}; the limit is {limit}.", "batchSizeTooLarge")
    return [(c, _refusal(c, path, prefix)) for c in calls]


def _api_of(path: str) -> str:
    return next((p for p in LIMITS if path.startswith(p)), "")


def _call(part: multipart.Part, outer: Headers) -> Call:
    if part.content_type.split(";", 1)[0].strip().lower() != "application/http":
        raise bad_request("Each part of a batch is Content-Type: application/http.", "badContent")
    payload = part.payload.lstrip(b"\r\n")
    eol = payload.find(b"\n")
    line = (payload if eol < 0 else payload[:eol]).rstrip(b"\r").decode("latin-1")
    words = line.split()
    if len(words) not in (2, 3) or not words[0].isalpha():
        raise bad_request(f"Invalid request line in a batch part: {line[:100]!r}", "badContent")
    target = urlsplit(words[1])
    headers, at = multipart.read_headers(payload, len(payload) if eol < 0 else eol + 1, open_end=True)
    body = payload[at:]
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) < len(body):
        body = body[:int(declared)]
    merged = {k.lower(): v for k, v in outer if not k.lower().startswith(b"content-")}
    merged.update((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items() if k != "content-length")
    merged[b"content-length"] = str(len(body)).encode()
    cid = part.headers.get("content-id")
    return Call(cid.strip().removeprefix("<").removesuffix(">") if cid else None, words[0].upper(),
                target.path or "/", target.query.encode("latin-1"), list(merged.items()), body)


def _refusal(call: Call, path: str, prefix: str | None) -> Answer | None:
    at = call.decoded_path
    if is_batch_path(at):
        return _error(400, "A batch request cannot contain another batch.", "badRequest")
    if at.startswith("/upload/") or b"alt=media" in call.query:
        return _error(400, "Media uploads and downloads cannot be part of a batch.", "badRequest")
    if at.startswith("/_") or (prefix is not None and not at.startswith(prefix)):
        return _error(404, f"Method not found: {call.method} {at} (the batch endpoint {path} takes "
                           f"{prefix.strip('/') if prefix else 'API'} requests only)", "notFound")
    return None


def _error(status: int, message: str, reason: str) -> Answer:
    return status, [(b"content-type", JSON)], json.dumps(google_error(status, message, reason).body).encode()


def render(calls: list[Call], answers: list[Answer]) -> tuple[str, bytes]:
    """The multipart/mixed response: (its Content-Type, its body)."""
    boundary = "batch_" + secrets.token_hex(16)
    out = bytearray()
    for call, (status, headers, payload) in zip(calls, answers):
        out += f"--{boundary}\r\nContent-Type: application/http\r\n".encode()
        if call.content_id is not None:
            out += f"Content-ID: <response-{call.content_id}>\r\n".encode("latin-1")
        phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        out += f"\r\nHTTP/1.1 {status} {phrase}\r\n".encode()
        for k, v in headers:
            if k.lower() != b"content-length":
                out += k + b": " + v + b"\r\n"
        out += f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return f"multipart/mixed; boundary={boundary}", bytes(out)


def run(path: str, content_type: str, body: bytes, outer: Headers,
        send: Callable[[Call], Answer]) -> tuple[int, Headers, bytes]:
    """A whole batch answered with `send` answering each call (synchronous servers)."""
    try:
        planned = plan(path, content_type, body, outer)
    except ApiError as e:
        return e.status, [(b"content-type", JSON)], json.dumps(e.body).encode()
    ctype, payload = render([c for c, _ in planned], [refused or send(c) for c, refused in planned])
    return 200, [(b"content-type", ctype.encode())], payload


async def run_async(path: str, content_type: str, body: bytes, outer: Headers,
                    send: Callable[[Call], Awaitable[Answer]]) -> tuple[int, Headers, bytes]:
    """`run` for an ASGI server: each call awaited in turn, in order."""
    try:
        planned = plan(path, content_type, body, outer)
    except ApiError as e:
        return e.status, [(b"content-type", JSON)], json.dumps(e.body).encode()
    answers = [refused or await send(c) for c, refused in planned]
    ctype, payload = render([c for c, _ in planned], answers)
    return 200, [(b"content-type", ctype.encode())], payload


async def through_app(app: Any, outer_scope: dict[str, Any], call: Call) -> Answer:
    """One call as a request of its own through the ASGI `app` (its middleware, router and handlers)."""
    scope = {k: outer_scope[k] for k in ("asgi", "http_version", "scheme", "server", "client", "state")
             if k in outer_scope}
    scope.update(type="http", method=call.method, path=call.decoded_path, raw_path=call.path.encode("latin-1"),
                 query_string=call.query, headers=call.headers, root_path="")
    sent = False
    status, headers, chunks = 500, [], []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": call.body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], list(message.get("headers") or [])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, headers, b"".join(chunks)


async def _endpoint(request: Request) -> Response:
    body = await request.body()
    scope = request.scope
    status, headers, payload = await run_async(
        scope["path"], request.headers.get("content-type", ""), body, list(scope["headers"]),
        lambda call: through_app(request.app, scope, call))
    return Response(payload, status, headers={k.decode("latin-1"): v.decode("latin-1") for k, v in headers})


def routes() -> list[Route]:
    """The batch paths as routes of the app (each part re-enters the app itself)."""
    return [Route("/batch", _endpoint, methods=["POST"], name="batch"),
            Route("/batch/{api}/{version}", _endpoint, methods=["POST"], name="batch_api")]
