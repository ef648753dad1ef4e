"""Serve one seeded workspace to an env0 package: each env0 service on its own listener, answered by one surface.

Each service (services.py) gets its own listener: a Unix socket that a sandbox forwards its env0 port to, or a
free loopback port (unconfined). Under each: `/health`, env0's `/_admin/state`, `/_admin/diff` and
`/_admin/action_log` (in env0's JSON shapes, see serve/shapes.py), the real API paths (handled by our workspace app),
and `/_gws`, where our `gws` shim posts one API method call by its method id. Internally the surface routes by
path prefix (`/gmail/...`); each listener adds its service's prefix.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote, urlencode

import uvicorn

from ....workspace import batch, request_errors
from ....workspace.dialects import dialect
from ....workspace.environment import Workspace
from ....workspace.api_routes import handle
from ....workspace.http_app import create_app
from ....workspace.request_limits import TooMuchJson, limited_body, loads
from ....workspace.services.descriptor import Env0Routes
from .auth_surface import AUTH_READS, BY_METHOD, GWS_SERVICES, answer_auth, guard, service_prefix
from .recording import SURFACE_READS, RecordedRequest, recorded
from ..services import LISTENERS, PREFIXES, WORKSPACE, face, issuer_prefix
from .shapes import DIFF, STATE

READ_METHODS = ("GET", "HEAD")  # what the surface's own reads (/health, /_admin/state, diff, action_log) take


class Env0Surface:
    """The ASGI app: the env0 /_admin surface over a workspace, plus its API paths with an HTTP action log."""

    def __init__(self, ws: Workspace, extras: dict[str, Any] | None = None):
        self.ws = ws
        self.extras = dict(extras or {})
        self.triggers = [tuple(t) for t in self.extras.get("triggers", [])]
        self.inner = create_app(lambda: ws)
        self.initial = {svc: self.state(svc) for svc in set(PREFIXES.values())}
        self.log: dict[str, list[dict[str, Any]]] = {p: [] for p in PREFIXES}
        self.requests: list[RecordedRequest] = []  # every request the scripts made (serve/recording.py)

    def state(self, svc: str) -> dict[str, Any]:
        return STATE[svc](self.ws)

    # -- gws: one method call by id --------------------------------------------------------------
    def gws_call(self, prefix: str, req: dict[str, Any]) -> tuple[int, bytes]:
        svc = GWS_SERVICES.get(str(req.get("service")))
        spec = BY_METHOD.get((svc, str(req.get("method_id")))) if svc == PREFIXES[prefix] else None
        if spec is None:  # unknown, or another service's method (guard refuses that first, audited)
            body = {"error": {"code": 400, "message": f"Unknown method: gws {req.get('service')} "
                              f"{' '.join(str(req.get('method_id', '')).split('.')[1:])}", "reason": "unknownMethod"}}
            return 400, json.dumps(body).encode()
        params = req.get("params") or {}
        if not isinstance(params, dict):  # gws sends a JSON object; anything else is the caller's error, not ours
            body = {"error": {"code": 400, "message": f"Invalid params for {spec.method_id}: expected a JSON object",
                              "reason": "invalidParameter"}}
            return 400, json.dumps(body).encode()
        params = dict(params)
        path = spec.path
        for name in spec.path_params:
            value = params.pop(name, "me" if name == "userId" else None)
            if value is None:
                body = {"error": {"code": 400, "message": f"Missing required parameter {name!r} for {spec.method_id}",
                                  "reason": "required"}}
                return 400, json.dumps(body).encode()
            path = re.sub(r"{\+?" + name + "}", quote(str(value), safe=""), path)
        query = urlencode([(k, v if not isinstance(v, bool) else str(v).lower()) for k, v in params.items()
                           for v in (v if isinstance(v, list) else [v])])
        body = json.dumps(req["json"]).encode() if req.get("json") is not None else b""
        status, payload = self.api(prefix, spec.http_method, "/" + path, query.encode(), body)
        return status, payload

    def api(self, prefix: str, method: str, path: str, query: bytes, body: bytes,
            ctype: str = "application/json", headers: list[tuple[bytes, bytes]] | None = None) -> tuple[int, bytes]:
        if prefix == "gcal" and body.strip():
            body = _local_times(body)
        d = dialect(PREFIXES.get(prefix))
        sent = d.forwarded_headers(headers or [])  # Stripe's key and Idempotency-Key; the others need the type only
        scope = {"path": path, "method": method, "query_string": query,
                 "headers": [(b"content-type", ctype.encode()), *sent]}
        status, payload, _ = handle(self.ws, scope, body)
        if self.triggers and path == "/api/chat.postMessage" and status == 200:
            self._fire_triggers(payload)
        if path == "/api/files.list" and status == 200:
            payload = _with_file_content(self.ws, payload)
        try:
            req_body = loads(body) if body.strip() else None
        except ValueError:
            req_body = d.logged_body(body)
        self.log[prefix].append({"timestamp": datetime.now(timezone.utc).isoformat(), "method": method,
                                 "path": path + (("?" + query.decode()) if query else ""),
                                 "user_id": "user1", "request_body": req_body, "response_status": status})
        return status, payload

    def tool_call(self, spec: Any, arguments: dict[str, Any]) -> Any:
        """An agent's tool call, logged as the HTTP request it stands for (env0 verifiers read paths)."""
        res = self.ws.call(spec.name, arguments, source="env0")
        if self.triggers and spec.name == "slack_chat_postMessage" and res.ok:
            self._fire_triggers(json.dumps(res.body).encode())
        logged = log_entry(spec, arguments, res.status if not res.ok else spec.status)
        if logged is not None:
            self.log[logged[0]].append(logged[1])
        return res

    def extra_route(self, prefix: str, routes: Env0Routes, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        """A route env0's mock answers and the real API has not (the port's `Env0Routes`: mock-gdoc's comments and
        permissions, which Drive holds), answered by the tool calls that stand for it, logged under the port."""
        try:
            req = loads(body or b"{}")
        except ValueError:
            req = {}
        status, out = 404, {"detail": "Not Found"}  # no such mock-gdoc route (logged, as env0 logs every request)
        for name, args in routes.calls(method, path, req if isinstance(req, dict) else {}) or []:
            res = self.ws.call(name, args, source="env0")
            status, out = (200 if res.ok else res.status), res.body
            if not res.ok:
                break
        try:
            req_body = loads(body) if body.strip() else None
        except ValueError:
            req_body = None
        self.log[prefix].append({"timestamp": datetime.now(timezone.utc).isoformat(), "method": method, "path": path,
                                 "user_id": "user1", "request_body": req_body, "response_status": status})
        return status, json.dumps(out).encode()

    def _fire_triggers(self, payload: bytes) -> None:
        """A package's invite trigger: DMing that person gets the agent invited to a private channel (env0 does
        this in its mock's chat.postMessage; here the surface does it, the workspace stays the real API)."""
        try:
            answer = json.loads(payload)
        except ValueError:
            return
        chan = self.ws.slack.db.channels.get(str(answer.get("channel"))) if answer.get("ok") else None
        if chan is None or not chan.is_im:
            return
        for user, grant in self.triggers:
            target = self.ws.slack.db.channels.get(grant)
            if user in chan.members and target is not None and self.ws.slack.me not in target.members:
                self.ws.slack.db.channels[grant] = target.model_copy(update={"members": target.members + (self.ws.slack.me,)})

    # -- ASGI ------------------------------------------------------------------------------------
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        parts = scope["path"].split("/", 2)
        prefix, rest = (parts[1], "/" + (parts[2] if len(parts) > 2 else "")) if len(parts) > 1 else ("", "/")
        if prefix not in PREFIXES and prefix != WORKSPACE.prefix:
            await self.inner(scope, receive, send)
            return
        got = await limited_body(scope, receive, send, rest)  # within the API's limit and the runner's budget
        if got is None:
            return
        body, held = got
        try:
            status, headers, payload = self.respond(prefix, scope["method"], rest, scope.get("query_string", b""),
                                                    list(scope["headers"]), body)
            await send({"type": "http.response.start", "status": status,
                        "headers": [*headers, (b"content-length", str(len(payload)).encode())]})
            await send({"type": "http.response.body", "body": payload})
        finally:
            held.release()

    def respond(self, prefix: str, method: str, rest: str, query: bytes, headers: list[tuple[bytes, bytes]],
                body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """One request to service `prefix` (path `rest` below it), answered and, unless it is one of the surface's
        own reads, recorded with the tool calls it made (serve/recording.py): what solve.sh did, at the HTTP layer."""
        with self.ws.lock:
            mark = len(self.ws.action_log)
            status, out, payload = self._dispatch(prefix, method, rest, query, headers, body)
            if rest not in SURFACE_READS:
                self.requests.append(recorded(prefix, method, rest, query, headers, body, status,
                                              self.ws.action_log[mark:], payload))
        return status, out, payload

    def _dispatch(self, prefix: str, method: str, rest: str, query: bytes, headers: list[tuple[bytes, bytes]],
                  body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        scope = {"type": "http", "method": method, "path": rest, "query_string": query, "headers": headers}
        if (denied := guard(self, prefix, scope, rest, body)) is not None:  # this port's service only; the gate
            return denied
        if prefix == WORKSPACE.prefix:
            return self._workspace(scope, body)
        return self._serve(prefix, scope, body)

    def _workspace(self, scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The whole workspace's listener, past the gate: a method is answered as its own service's port answers it
        (and logged there); the Admin SDK, which no env0 port serves, straight by the routes."""
        rest, out = scope["path"], [(b"content-type", b"application/json")]
        if rest == "/health":
            return (200, out, b'{"status":"ok"}') if scope["method"] in READ_METHODS else _read_only(out)
        if rest.startswith("/_") and rest != "/_gws":
            return 404, out, b'{"detail":"Not Found"}'
        home = service_prefix(self, scope, body)
        if home is not None:
            return self._serve(home, scope, body)
        status, payload, _ = handle(self.ws, {"path": rest, "method": scope["method"],
                                              "query_string": scope["query_string"], "headers": scope["headers"]}, body)
        return status, out, payload

    def _serve(self, prefix: str, scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        svc, port = PREFIXES[prefix], face(prefix)
        method, rest, query, headers = scope["method"], scope["path"], scope["query_string"], scope["headers"]
        out = [(b"content-type", b"application/json")]
        if rest in SURFACE_READS and method not in READ_METHODS:
            return _read_only(out)
        if port is not None and port.issuer and rest not in AUTH_READS:
            return answer_auth(self, prefix, scope, rest, body)
        if batch.is_batch_path(rest):  # each part through the same dispatch: this port's gate, the API, the action log
            ctype = next((v.decode("latin-1") for k, v in headers if k == b"content-type"), "")
            return batch.run(rest, ctype, body, headers, lambda c: self._dispatch(
                prefix, c.method, c.decoded_path, c.query, c.headers, c.body))
        if rest in ("/health", "/_admin/health"):
            return 200, out, b'{"status":"ok"}'
        if rest == "/_admin/state":
            return 200, out, json.dumps(self.state(svc)).encode()
        if rest == "/_admin/diff":
            return 200, out, json.dumps(DIFF[svc](self.initial[svc], self.state(svc))).encode()
        if rest == "/_admin/action_log":
            return 200, out, json.dumps({"entries": self.log[prefix], "count": len(self.log[prefix])}).encode()
        if rest == "/_gws":
            try:
                req = loads(body or b"{}")
            except TooMuchJson as e:  # refused before anything was built
                return 400, out, json.dumps({"error": {"code": 400, "message": f"gws: {e}",
                                                       "reason": "parseError"}}).encode()
            except ValueError:
                req = None
            if not isinstance(req, dict):
                return 400, out, json.dumps({"error": {"code": 400, "message": "gws: the request is not a JSON object",
                                                       "reason": "parseError"}}).encode()
            status, payload = self.gws_call(prefix, req)
            return status, out, payload
        if port is not None and port.routes is not None and port.routes.pattern.fullmatch(rest):
            status, payload = self.extra_route(prefix, port.routes, method, rest, body)
            return status, out, payload
        ctype = next((v.decode("latin-1") for k, v in headers if k == b"content-type"), "")
        status, payload = self.api(prefix, method, rest, query, body, ctype, headers)
        return status, out, payload


def _read_only(out: list[tuple[bytes, bytes]]) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """A write method on one of the surface's reads: 405 with its Allow header, as env0's FastAPI mock answers."""
    return 405, [*out, (b"allow", ", ".join(READ_METHODS).encode())], b'{"detail":"Method Not Allowed"}'


def log_entry(spec: Any, arguments: dict[str, Any], status: int) -> tuple[str, dict[str, Any]] | None:
    """(URL prefix, env0 action-log entry) for a tool call: the HTTP request it stands for (verifiers read paths)."""
    prefix = next((p for p, s in PREFIXES.items() if s == spec.service), None)
    if prefix is None:
        return None
    path = spec.path
    for name in spec.path_params:
        path = re.sub(r"{\+?" + name + "}", quote(str(arguments.get(name, "me")), safe=""), path)
    # env0 verifiers read the query string as well as the path (e.g. `q=`, `channel=C..`)
    method, body, in_query = dialect(spec.service).logged_request(spec, arguments)
    query = urlencode([(k, v if not isinstance(v, bool) else str(v).lower()) for k, v in in_query.items()
                       for v in (v if isinstance(v, list) else [v]) if not isinstance(v, (dict, list))])
    path += ("?" + query) if query else ""
    return prefix, {"timestamp": datetime.now(timezone.utc).isoformat(), "method": method, "path": "/" + path,
                    "user_id": "user1", "request_body": body, "response_status": status}


def _with_file_content(ws: Workspace, payload: bytes) -> bytes:
    """env0's files.list carries each file's `content` (Slack's carries a `preview`; files.info has the content);
    env0 packages read it, so the surface adds it."""
    try:
        answer = json.loads(payload)
    except ValueError:
        return payload
    if not answer.get("ok"):
        return payload
    for f in answer.get("files", []):
        row = ws.slack.db.files.get(f.get("id"))
        if row is not None:
            f["content"] = row.content
    return json.dumps(answer).encode()


def _local_times(body: bytes) -> bytes:
    """env0's calendar ignores `timeZone` and reads a dateTime without an offset as UTC (Google reads it in its
    `timeZone`, and answers 400 "Missing time zone definition" without one). env0 packages write local times that
    way and their verifiers read back the hour they wrote, so on env0's surface such a time is read as env0 reads
    it: as UTC (its `timeZone` is kept, as a label)."""
    try:
        req = loads(body)
    except ValueError:
        return body
    if not isinstance(req, dict):
        return body
    changed = False
    for key in ("start", "end", "originalStartTime"):
        t = req.get(key)
        if isinstance(t, dict) and isinstance(t.get("dateTime"), str) \
                and not re.search(r"(Z|[+-]\d\d:?\d\d)$", t["dateTime"].strip(), re.I):
            req[key] = {**t, "dateTime": t["dateTime"].strip() + "Z"}
            changed = True
    return json.dumps(req).encode() if changed else body


def _at_prefix(app: Any, prefix: str) -> Any:
    """The surface as one service's root: `/health` on the gmail listener is the surface's `/gmail/health`."""
    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, "path": f"/{prefix}{scope['path']}", "raw_path": f"/{prefix}".encode() + scope.get(
                "raw_path", scope["path"].encode())}
        await app(scope, receive, send)
    return asgi


@contextmanager
def serve_services(surface: Env0Surface, sock_dir: Path | None = None,
                   errors: request_errors.RequestErrors | None = None) -> Iterator[dict[str, str]]:
    """Every listener of LISTENERS (env0's services and the whole workspace), all in one event-loop thread:
    `sock_dir/<port>.sock` (the sandbox forwards its env0 port there) or, without sock_dir, a loopback socket bound
    here to a port the kernel picks (bound before serving, so no other process can take it in between). Yields
    prefix -> base URL (the unconfined URLs; a sandbox's scripts use http://localhost:<env0 port>). A request that
    raises is answered 500 and counted in `errors` (default: the process's), logged once per distinct error."""
    errors = errors or request_errors.REQUEST_ERRORS
    servers, base, sockets = [], {}, []
    for svc in LISTENERS:
        where: dict[str, Any] = {}
        if sock_dir:
            where["uds"] = str(sock_dir / f"{svc.port}.sock")
            base[svc.prefix] = f"http://localhost:{svc.port}"
            sockets.append(None)
        else:
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
            base[svc.prefix] = f"http://127.0.0.1:{sock.getsockname()[1]}"
        app = request_errors.contained(_at_prefix(surface, svc.prefix), svc.prefix, errors)
        servers.append(uvicorn.Server(uvicorn.Config(app, log_level="error", log_config=None,
                                                     access_log=False, lifespan="off", timeout_graceful_shutdown=1,
                                                     **where)))

    async def main() -> None:
        await asyncio.gather(*(s.serve(sockets=[k] if k is not None else None) for s, k in zip(servers, sockets)))

    surface.ws.auth.issuer = base[issuer_prefix()]  # the discovery document's default (a request's Host header wins)
    surface.ws.auth.clock = lambda: datetime.now(timezone.utc)  # live: tokens expire in wall-clock time, as scripts sleep
    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True, name="env0 services")
    thread.start()
    deadline = time.time() + 20
    try:
        while not all(s.started for s in servers):
            if time.time() > deadline or not thread.is_alive():
                raise RuntimeError("env0 services did not start")
            time.sleep(0.005)
        yield base
    finally:
        for s in servers:  # they stop at their next tick (0.1 s); nobody waits for that
            s.should_exit = s.force_exit = True
