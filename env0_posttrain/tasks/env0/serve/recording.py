"""What a package's scripts did to our services, recorded at the HTTP layer, and how it is replayed.

The surface (serve/server.py) records every request a script makes to a service (the harness's own reads of
`/_admin/state`, `/_admin/diff`, `/_admin/action_log` and `/health` aside), whether or not it reached one of our
tools: the request as sent (method, path, query, headers, body), the status it got, and the tool calls answering
it made, refused ones included (a refused call is still in env0's action log, which verifiers read).

Two replays follow from it. `replay_http` sends the same requests through a fresh surface (auth tokens minted
again are substituted for the recorded ones): the scripts' effect without running the scripts. `oracle_calls`
turns the recording into the tool calls the in-process oracle teacher makes.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...model import ToolCall
from ..services import face

# the harness's reads of a service: never part of what a script did
SURFACE_READS = frozenset({"/health", "/_admin/health", "/_admin/state", "/_admin/diff", "/_admin/action_log"})
_DROPPED_HEADERS = {b"content-length", b"connection", b"accept-encoding", b"user-agent", b"accept", b"expect"}
_TOKENS = re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|\brt_[0-9a-f]{48}\b")


class RecordedCall(BaseModel):
    """One tool call a request made (as `Workspace.call` received it) and whether the API took it."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    status: int | None = None


class RecordedRequest(BaseModel):
    """One HTTP request of a script to a service (`prefix` as in services.py), as sent, and what it did."""

    model_config = ConfigDict(extra="forbid")

    prefix: str
    method: str
    path: str
    query: str = ""
    headers: list[tuple[str, str]] = Field(default_factory=list)
    body: str = ""
    body_base64: bool = False  # the body was not UTF-8: `body` holds its bytes in base64
    body_cut_from: int | None = None  # a refused body that reached no tool, kept to its first REFUSED_BODY_KEPT bytes
    status: int
    response_tokens: list[str] = Field(default_factory=list, description="auth tokens the answer carried")
    calls: list[RecordedCall] = Field(default_factory=list)

    def body_bytes(self) -> bytes:
        return base64.b64decode(self.body) if self.body_base64 else self.body.encode()

    def header_pairs(self) -> list[tuple[bytes, bytes]]:
        return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in self.headers]


REFUSED_BODY_KEPT = 64 * 1024


def recorded(prefix: str, method: str, path: str, query: bytes, headers: list[tuple[bytes, bytes]], body: bytes,
             status: int, log: list[dict[str, Any]], payload: bytes = b"") -> RecordedRequest:
    """The request as sent; a body over REFUSED_BODY_KEPT that was refused (4xx/5xx) without reaching a tool is
    kept cut: it changed nothing and env0's action log holds at most its first 2,000 characters, and a flood of
    such bodies (a body attack) would otherwise pile up whole in the runner for the episode."""
    cut = None
    if status >= 400 and not log and len(body) > REFUSED_BODY_KEPT:
        cut, body = len(body), body[:REFUSED_BODY_KEPT]
    try:
        text, b64 = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, b64 = base64.b64encode(body).decode(), True
    calls = [RecordedCall(tool=e["tool"], arguments=_jsonable(e["args"]), ok=e["ok"], status=e.get("status"))
             for e in log]
    issuer = (port := face(prefix)) is not None and port.issuer
    tokens = _TOKENS.findall(payload.decode("utf-8", "replace")) if issuer and payload else []
    return RecordedRequest(prefix=prefix, method=method, path=path, query=query.decode("latin-1"),
                           headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers
                                    if k.lower() not in _DROPPED_HEADERS],
                           body=text, body_base64=b64, body_cut_from=cut, status=status, response_tokens=tokens,
                           calls=calls)


def _jsonable(args: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as JSON keeps them (an upload's bytes become text, as the tool layer reads them)."""
    try:
        json.dumps(args)
        return args
    except (TypeError, ValueError):
        return json.loads(json.dumps(args, default=lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes)
                                     else repr(v)))


def oracle_calls(requests: list[RecordedRequest]) -> list[ToolCall]:
    """The recording as the in-process oracle's tool calls, in order: every call a request made, refused ones
    included (the verifier reads env0's action log, where solve.sh's refused requests are too)."""
    return [ToolCall(name=c.tool, arguments=c.arguments) for r in requests for c in r.calls]


def replay_http(surface: Any, requests: list[RecordedRequest]) -> int:
    """Send the recorded requests through `surface` in order. Tokens the auth service mints again differ from the
    recorded ones (they carry the clock), so each recorded token is replaced by the one the replay got."""
    swap: dict[str, str] = {}
    for r in requests:
        body, headers, query = r.body_bytes(), r.header_pairs(), r.query.encode("latin-1")
        if swap:
            body, query = _swapped(body, swap), _swapped(query, swap)
            headers = [(k, _swapped(v, swap)) for k, v in headers]
        _, _, payload = surface.respond(r.prefix, r.method, r.path, query, headers, body)
        if r.response_tokens:
            got = _TOKENS.findall(payload.decode("utf-8", "replace"))
            swap.update({old: new for old, new in zip(r.response_tokens, got) if old != new})
    return len(requests)


def _swapped(raw: bytes, swap: dict[str, str]) -> bytes:
    text = raw.decode("latin-1")
    for old, new in swap.items():
        if old in text:
            text = text.replace(old, new)
    return text.encode("latin-1")
