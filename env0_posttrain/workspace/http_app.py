"""One FastAPI app serving all six services at their real paths, plus the admin surface under /_admin.

A client reaches it the way it reaches Google or Slack: base URL = this server + the service path
(`googleapiclient.discovery.build(..., client_options={"api_endpoint": ...})`, `slack_sdk.WebClient(base_url=...)`).
Every request goes through the same handlers as the agent tools; bad input gets the API's own 4xx body.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.responses import Response

from .environment import SERVICE_NAMES, Workspace
from .errors import ApiError, google_error
from .http_routes import Router, google_kwargs, slack_kwargs
from .paging import select_fields

JSON = "application/json; charset=UTF-8"


def _json(body: Any, status: int = 200) -> Response:
    return Response(json.dumps(body, ensure_ascii=False).encode(), status_code=status, media_type=JSON)


def _service(name: str | None) -> str | None:
    if name is not None and name not in SERVICE_NAMES:
        raise ApiError(404, google_error(404, f"Unknown service {name!r}", "notFound").body)
    return name


def create_app(workspace_factory: Callable[[], Workspace] | None = None) -> FastAPI:
    """The app over one workspace; `POST /_admin/seed` swaps in a freshly seeded one."""
    factory = workspace_factory or (lambda: Workspace.seeded(0))
    app = FastAPI(title="env0-posttrain workspace", docs_url="/_admin/docs", openapi_url="/_admin/openapi.json")
    app.state.ws = factory()
    router = Router()

    def ws() -> Workspace:
        return app.state.ws

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> Response:
        return _json(exc.body, exc.status)

    # -- admin surface ------------------------------------------------------------------------------
    @app.get("/_admin/health")
    def health() -> dict[str, Any]:
        return {"ok": True, "seed": ws().seed, "now": ws().now.isoformat(), "services": list(SERVICE_NAMES)}

    @app.get("/_admin/state")
    @app.get("/_admin/{service}/state")
    def state(service: str | None = None) -> Response:
        return _json(ws().state(_service(service)))

    @app.get("/_admin/state_hash")
    @app.get("/_admin/{service}/state_hash")
    def state_hash(service: str | None = None) -> dict[str, str]:
        return {"state_hash": ws().state_hash(_service(service))}

    @app.get("/_admin/diff")
    @app.get("/_admin/{service}/diff")
    def diff(service: str | None = None, since: str = "seed") -> Response:
        if since not in ws().snapshots():
            raise ApiError(404, google_error(404, f"no snapshot named {since!r}", "notFound").body)
        return _json(ws().diff(since, _service(service)))

    @app.get("/_admin/actions")
    @app.get("/_admin/{service}/actions")
    def actions(service: str | None = None) -> Response:
        return _json(ws().log(_service(service)))

    @app.post("/_admin/reset")
    @app.post("/_admin/{service}/reset")
    def reset(service: str | None = None) -> dict[str, Any]:
        ws().reset(_service(service))
        return {"ok": True, "state_hash": ws().state_hash()}

    @app.post("/_admin/seed")
    async def seed(request: Request) -> dict[str, Any]:
        args = await _admin_args(request)
        try:
            seed_value = int(args.get("seed", 0))
            now = datetime.fromisoformat(str(args["now"]).replace("Z", "+00:00")) if args.get("now") else None
        except (TypeError, ValueError):
            raise ApiError(400, google_error(400, "seed must be an integer, now an ISO datetime", "invalid").body)
        new = Workspace.seeded(seed_value, now)
        with ws().lock:
            app.state.ws = new
        return {"ok": True, "seed": seed_value, "state_hash": new.state_hash()}

    @app.get("/_admin/snapshots")
    def snapshots() -> dict[str, Any]:
        return {"snapshots": ws().snapshots()}

    @app.post("/_admin/snapshot")
    @app.post("/_admin/{service}/snapshot")
    async def snapshot(request: Request, service: str | None = None) -> dict[str, Any]:
        _service(service)
        name = str((await _admin_args(request)).get("name") or "default")
        ws().snapshot(name)
        return {"ok": True, "name": name, "state_hash": ws().state_hash(service)}

    @app.post("/_admin/restore")
    @app.post("/_admin/{service}/restore")
    async def restore(request: Request, service: str | None = None) -> dict[str, Any]:
        name = str((await _admin_args(request)).get("name") or "default")
        try:
            ws().restore(name, _service(service))
        except KeyError:
            raise ApiError(404, google_error(404, f"no snapshot named {name!r}", "notFound").body) from None
        return {"ok": True, "name": name, "state_hash": ws().state_hash(service)}

    # -- the APIs: a pure ASGI layer in front of FastAPI's router (one regex table, no per-route dependency
    # solving), so list requests stay cheap; everything under /_admin falls through to the routes above.
    app.add_middleware(ApiDispatch, router=router, get_ws=ws)
    return app


async def _admin_args(request: Request) -> dict[str, Any]:
    args: dict[str, Any] = dict(request.query_params)
    raw = await request.body()
    if raw.strip():
        try:
            value = json.loads(raw)
        except ValueError:
            raise ApiError(400, google_error(400, "Invalid JSON payload received.", "parseError").body) from None
        if isinstance(value, dict):
            args.update(value)
    return args


def serve(host: str = "127.0.0.1", port: int = 8765, seed: int = 0,
          workspace_factory: Callable[[], Workspace] | None = None, log_level: str = "warning") -> None:
    """Run the app with uvicorn (blocking). Bound to loopback unless told otherwise."""
    import uvicorn

    app = create_app(workspace_factory or (lambda: Workspace.seeded(seed)))
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False)


def _base_url(scope: dict[str, Any]) -> str:
    host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
    if host is None:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}"


class ApiDispatch:
    """ASGI middleware answering the Google and Slack API paths with the same handlers as the agent tools."""

    def __init__(self, app: Any, router: Router, get_ws: Callable[[], Workspace]):
        self.app, self.router, self.get_ws = app, router, get_ws

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/_admin"):
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            status, payload, ctype = self.handle(scope, body)
        except ApiError as e:
            status, payload, ctype = e.status, json.dumps(e.body).encode(), JSON
        except Exception:  # never a 500 page from bad input; a bug still answers in the API's own shape
            status, payload, ctype = 500, json.dumps(google_error(500, "Internal error encountered.",
                                                                  "backendError").body).encode(), JSON
        headers = [(b"content-length", str(len(payload)).encode())]
        if status != 204:
            headers.append((b"content-type", ctype.encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    def handle(self, scope: dict[str, Any], body: bytes) -> tuple[int, bytes, str]:
        from urllib.parse import parse_qsl

        path, method = scope["path"], scope["method"]
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        ctype = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"content-type"), "")
        if path.startswith("/api/"):
            spec = self.router.slack.get(path[5:])
            if spec is None or method not in ("GET", "POST"):
                return 200, json.dumps({"ok": False, "error": "unknown_method", "req_method": path[5:]}).encode(), JSON
            res = self.get_ws().call(spec.name, slack_kwargs(query, body, ctype), source="http")
            if res.ok and spec.method_id == "files.getUploadURLExternal":  # the bytes come back to this server
                res.body["upload_url"] = f"{_base_url(scope)}/upload/v1/{res.body['file_id']}"
            return 200, json.dumps(res.body).encode(), JSON
        if path.startswith("/upload/v1/") and method == "POST":  # Slack's v2 upload step 2
            ws = self.get_ws()
            with ws.lock:
                stored = ws.slack.receive_upload(path[len("/upload/v1/"):], body)
            return (200, f"OK - {len(body)}".encode(), "text/plain") if stored else \
                (404, b'{"ok":false,"error":"file_not_found"}', JSON)
        hit = self.router.match(method, path)
        if hit is None:
            raise ApiError(404, google_error(404, f"Method not found: {method} {path}", "notFound").body)
        spec, path_params, upload = hit
        kwargs, fields = google_kwargs(spec, path_params, query, body, ctype, upload)
        res = self.get_ws().call(spec.name, kwargs, source="http")
        if not res.ok:
            return res.status, json.dumps(res.body).encode(), JSON
        if res.status == 204:
            return 204, b"", ""
        if isinstance(res.body, str):
            return 200, res.body.encode(), "text/plain; charset=UTF-8"
        out = select_fields(res.body, fields) if fields else res.body
        return res.status, json.dumps(out).encode(), JSON  # the default encoder is the fastest path
