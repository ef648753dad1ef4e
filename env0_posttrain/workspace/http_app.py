"""One FastAPI app serving all six services at their real paths, plus the admin surface under /_admin.

A client reaches it the way it reaches Google or Slack: googleapiclient built from the discovery document this server
serves (discovery.py: its rootUrl is this server, so batches and media uploads come here too; docs/SERVE.md),
`slack_sdk.WebClient(base_url=...)`.
Each tool is a route of the app (api_routes.py), so the router picks it and /_admin/docs lists it; every request
goes through the same handlers as the agent tools; bad input, an unknown path or a wrong verb gets the API's own
4xx body (Slack's unknown_method under /api/), never FastAPI's {"detail": ...}.
"""

from __future__ import annotations

import inspect
import json
from datetime import datetime, timezone
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from starlette.routing import Mount

from . import batch, discovery
from .api_routes import JSON, api_routes, doc_routes, no_route, resolve
from .auth_http import auth_app, register_local_client
from ..util.clock import Clock
from .environment import DEFAULT_NOW, SERVICE_NAMES, Workspace
from .errors import ApiError, google_error
from .request_limits import BodyLimit, loads


def _json(body: Any, status: int = 200) -> Response:
    try:
        payload = json.dumps(body, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate stored by a seeder: escaped, the answer is still valid JSON
        payload = json.dumps(body).encode()
    return Response(payload, status_code=status, media_type=JSON)


def _service(name: str | None) -> str | None:
    if name is not None and name not in SERVICE_NAMES:
        raise ApiError(404, google_error(404, f"Unknown service {name!r}", "notFound").body)
    return name


# FastAPI >= 0.16x instruments every request for OpenTelemetry (~8 µs each, measured); nothing here exports it.
_NO_TELEMETRY: dict[str, Any] = {"telemetry": {"tracing": False, "metrics": False, "logs": False}} \
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters else {}


def create_app(workspace_factory: Callable[[], Workspace] | None = None, gated: bool = False,
               clock: Clock | None = None) -> FastAPI:
    """The app over one workspace; `POST /_admin/seed` swaps in a freshly seeded one. `gated`: Google's and Slack's
    methods need a Bearer token from the auth server, as on the real APIs (auth_http.gate); every workspace the
    app holds then has the local OAuth client (auth_http.register_local_client) and tokens on the wall clock (an
    app's OIDC library checks an ID token's `exp` against its own clock, not the workspace's frozen one).
    `clock`: the clock the user chose (util/clock.py): every workspace the app holds is seeded at its start and reads
    "now" from it, tokens included; None: frozen at the seeded instant."""

    def prepare(ws: Workspace) -> None:
        if clock is not None:
            ws.run_clock(clock.ticker(ws.now))
        if gated:
            register_local_client(ws)
            if clock is None:
                ws.auth.clock = lambda: datetime.now(timezone.utc)
    base_factory = workspace_factory or (lambda: Workspace.seeded(0, clock.start(DEFAULT_NOW) if clock else None))

    def factory() -> Workspace:
        ws = base_factory()
        prepare(ws)
        return ws

    app = FastAPI(title="env0-posttrain workspace", docs_url="/_admin/docs", openapi_url="/_admin/openapi.json",
                  redirect_slashes=False,  # Google answers 404 to a trailing slash, not a redirect
                  **_NO_TELEMETRY)
    app.state.ws = factory()
    app.state.gated = gated
    app.add_middleware(BodyLimit)  # bodies over the APIs' payload limits get 413 before any handler reads them
    # -- the APIs: one route per tool, under Mounts by path segment (api_routes.py), tried before /_admin
    app.router.routes.extend(api_routes())
    app.router.routes.extend([*batch.routes(), discovery.route()])  # /batch...: each part re-enters this app
    app.router.routes.append(Mount("/auth", app=auth_app(lambda: app.state.ws)))  # the OAuth server (auth_http.py)

    def openapi() -> dict[str, Any]:  # FastAPI documents top-level APIRoutes: add one per tool route
        if app.openapi_schema is None:
            app.openapi_schema = get_openapi(title=app.title, version=app.version, routes=[*app.routes, *doc_routes()])
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    def ws() -> Workspace:
        return app.state.ws

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> Response:
        return _json(exc.body, exc.status)

    @app.exception_handler(HTTPException)
    async def _no_route(request: Request, exc: HTTPException) -> Response:
        path = request.scope["path"]
        if exc.status_code not in (404, 405) or path.startswith("/_admin"):
            return await http_exception_handler(request, exc)
        # the scope as it came in: a Mount on the way has moved root_path
        scope = {"type": "http", "path": path, "method": request.method,
                 "root_path": request.scope.get("app_root_path", request.scope.get("root_path", ""))}
        _route, _params, allowed = resolve(api_routes(), scope)
        status, body = no_route(request.method, path, allowed)
        response = _json(body, status)
        if status == 405:
            response.headers["Allow"] = ", ".join(sorted(allowed))
        return response

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
        named = [n for n in ws().snapshots() if n != "seed"]  # a reseed starts a new world: they cannot follow
        if named and args.get("drop_snapshots") is not True:
            raise ApiError(412, google_error(412, f"seeding drops the snapshots {named}: send "
                                             '"drop_snapshots": true to seed anyway', "snapshotsWouldBeDropped").body)
        new = Workspace.seeded(seed_value, now or (clock.start(DEFAULT_NOW) if clock else None))
        prepare(new)
        with ws().lock:
            app.state.ws = new
        return {"ok": True, "seed": seed_value, "state_hash": new.state_hash(), "dropped_snapshots": named}

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
    return app


async def _admin_args(request: Request) -> dict[str, Any]:
    args: dict[str, Any] = dict(request.query_params)
    raw = await request.body()
    if raw.strip():
        try:
            value = loads(raw)
        except ValueError:
            raise ApiError(400, google_error(400, "Invalid JSON payload received.", "parseError").body) from None
        if isinstance(value, dict):
            args.update(value)
    return args


def serve(host: str = "127.0.0.1", port: int = 8765, seed: int = 0,
          workspace_factory: Callable[[], Workspace] | None = None, log_level: str = "warning",
          gated: bool = False, clock: Clock | None = None) -> None:
    """Run the app with uvicorn (blocking). Bound to loopback unless told otherwise."""
    import uvicorn

    from .request_errors import contained

    start = clock.start(DEFAULT_NOW) if clock else None
    app = create_app(workspace_factory or (lambda: Workspace.seeded(seed, start)), gated=gated, clock=clock)
    # a request that raises is one 500 and one log line per distinct error, not a traceback per request
    uvicorn.run(contained(app, "workspace"), host=host, port=port, log_level=log_level, access_log=False)
