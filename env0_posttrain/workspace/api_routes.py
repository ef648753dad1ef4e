"""The API paths as routes of the app: one route per tool (and per upload path), mounted by segment.

Starlette's router tries routes in order at about 1 µs each; a flat table of ~290 tool routes cost a late route
more than its handler. So routes sharing a segment go under one `Mount` ("/gmail/v1/users/{userId}", then
"/messages", ...), and a request is matched against a few dozen patterns at most.

Literal segments win over parameters, as on Google's frontends: at every level routes are tried literal first,
then a parameter with a literal suffix ("{documentId}:batchUpdate"), then a parameter, then `{+name}` (Starlette's
`:path` convertor: it may span slashes). A segment is mounted only when no other parameter segment beside it has
routes below it, so a Mount never hides a route another pattern would have matched.

The routes are Starlette `Route`s with a plain `endpoint(request)`: FastAPI's APIRoute solves dependencies on
every request (+40-55 % CPU per request, bench/http_routing_bench.py), so APIRoutes built from the same entries
serve only the OpenAPI document (`doc_routes`). `handle` answers in-process callers through the same routes.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.responses import Response
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Match, Mount, Route, Router

from .auth_http import gate
from .dialects import Dialect, dialect
from .dialects.base import OwnRoute
from .environment import Workspace
from .errors import ApiError, bad_request, google_error
from .http_routes import Upload, google_kwargs, upload_of
from .media import Media, byte_range
from .paging import select_fields
from .services import registry
from .tools import TOOLS, ToolSpec, dispatch
from .uploads import is_session_request, resume, start

JSON = "application/json; charset=UTF-8"
MIN_MOUNT = 4  # fewer routes than this under one segment stay flat: a Mount costs about what 3 route tries do


@dataclass(frozen=True)
class Target:
    """What one route answers: a tool (over its upload path when `upload`), or a path its dialect serves beside its
    methods (`own`: Slack's upload step)."""

    spec: ToolSpec | None
    upload: bool = False
    session: bool = False  # a resumable upload session's URI (the upload path, PUT / DELETE with upload_id)
    own: OwnRoute | None = None


@dataclass(frozen=True)
class _Entry:
    segments: tuple[str, ...]
    methods: tuple[str, ...]
    name: str
    target: Target


def _rank(segment: str) -> int:
    if "{" not in segment:
        return 0
    if segment.startswith("{+"):
        return 3
    return 2 if re.fullmatch(r"{\w+}", segment) else 1


def _key(segments: Iterable[str]) -> tuple[int, ...]:
    return tuple(_rank(s) for s in segments)


def _path(segments: Iterable[str]) -> str:
    return "/" + "/".join(re.sub(r"{\+(\w+)}", r"{\1:path}", s) for s in segments)


def entries() -> list[_Entry]:
    """Every API route: each tool where its dialect serves it (Google's at their path and upload path, Slack's at
    /api/<method>), then the paths the dialects serve beside their methods."""
    out = [_Entry(r.segments, r.methods, spec.name + r.suffix, Target(spec, upload=r.upload, session=r.session))
           for spec in TOOLS.values() for r in dialect(spec.service).http_routes(spec)]
    for d in _dialects():
        out += [_Entry(r.segments, r.methods, r.name, Target(None, own=r)) for r in d.own_routes()]
    return out


def _dialects() -> list[Dialect]:
    """The registered services' dialects, each once, in registry order."""
    return list({id(s.dialect): s.dialect for s in registry.SERVICES}.values())


def _tree(items: list[_Entry], depth: int) -> list[BaseRoute]:
    groups: dict[str, list[_Entry]] = {}
    for e in items:
        groups.setdefault(e.segments[depth], []).append(e)
    # parameter segments with routes below them: a Mount beside one of these could hide its routes
    deep_params = [s for s, group in groups.items() if _rank(s) and any(
        len(e.segments) > depth + 1 or any(_rank(x) == 3 for x in e.segments[depth:]) for e in group)]
    keyed: list[tuple[tuple[int, ...], BaseRoute]] = []
    for seg, group in groups.items():
        deeper = [e for e in group if len(e.segments) > depth + 1]
        mountable = (_rank(seg) == 0 and not deep_params) or (_rank(seg) == 2 and deep_params == [seg])
        if not mountable or len(deeper) < MIN_MOUNT:
            keyed += [(_key(e.segments[depth:]), _route(e, depth)) for e in group]
            continue
        keyed += [(_key([seg]), _route(e, depth)) for e in group if len(e.segments) == depth + 1]
        inner = _tree(deeper, depth + 1)
        if len(inner) == 1 and isinstance(inner[0], Mount):  # one child mount: merge the prefixes
            keyed.append((_key([seg]), Mount(_path([seg]) + inner[0].path, app=inner[0].app)))
        else:
            keyed.append((_key([seg]), Mount(_path([seg]), app=Router(inner, redirect_slashes=False))))
    keyed.sort(key=lambda kr: kr[0])  # stable: literal before parameter, segment by segment
    return [r for _, r in keyed]


def _route(e: _Entry, depth: int) -> Route:
    target = e.target

    async def endpoint(request: Request) -> Response:
        body = await request.body()
        ws, scope = request.app.state.ws, request.scope
        if target.session or (target.upload and is_session_request(parse_qsl(request.url.query, keep_blank_values=True))):
            status, headers, payload, ctype = resumable(ws, target, request.path_params, scope, body)
            return Response(payload, status, headers=dict(headers), media_type=ctype or None)
        status, payload, ctype, headers = answer_with_headers(ws, target, request.path_params, scope, body)
        if headers:
            return Response(payload, status, headers=headers, media_type=ctype or None)
        if status == 200 and request.method == "GET" and ctype and ctype != JSON and "range" in request.headers:
            return _ranged(payload, ctype, request.headers["range"])
        return Response(payload, status, media_type=ctype or None)

    return Route(_path(e.segments[depth:]), endpoint, methods=list(e.methods), name=e.name)


@functools.cache
def api_routes() -> tuple[BaseRoute, ...]:
    """The route tree, built once per process: endpoints find the workspace on the app (`app.state.ws`)."""
    return tuple(_tree(entries(), 0))


@functools.cache
def targets() -> dict[str, Target]:
    return {e.name: e.target for e in entries()}


def _ranged(payload: bytes, ctype: str, header: str) -> Response:
    """A download with a Range header: 206 with the bytes asked for (416 past the end; the whole body when the
    header is not one byte range)."""
    try:
        span = byte_range(header, len(payload))
    except ValueError:
        return Response(b"", 416, headers={"content-range": f"bytes */{len(payload)}"})
    if span is None:
        return Response(payload, 200, media_type=ctype)
    first, last = span
    return Response(payload[first:last + 1], 206, media_type=ctype,
                    headers={"content-range": f"bytes {first}-{last}/{len(payload)}"})


def resumable(ws: Workspace, target: Target, path_params: dict[str, str], scope: dict[str, Any],
              body: bytes) -> tuple[int, list[tuple[str, str]], bytes, str]:
    """A resumable upload request (uploads.py): a session's start on the upload path, or a PUT / DELETE on its URI."""
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    try:
        if any(k == "upload_id" for k, _ in query):
            return resume(ws, scope["method"], query, headers, body)
        if target.session:
            raise bad_request("A PUT to an upload path needs the upload_id of a resumable session.", "badRequest")
        raw = scope.get("raw_path")
        path = raw.decode("latin-1") if raw else scope["path"]
        first = {"type": "http", "method": scope["method"], "path": scope["path"], "root_path": "",
                 "query_string": scope.get("query_string", b""), "headers": list(scope["headers"])}
        params = dict(path_params)
        return start(ws, _base_url(scope) + path, query, headers, body,
                     lambda upload: answer(ws, target, params, first, b"", upload))
    except ApiError as e:
        return e.status, [], json.dumps(e.body).encode(), JSON


def answer(ws: Workspace, target: Target, path_params: dict[str, str], scope: dict[str, Any],
           body: bytes, upload: Upload | None = None) -> tuple[int, bytes, str]:
    """(status, body, content type) of one API request (`upload`: a resumable session's whole upload); a bug still
    answers in the API's own shape, never a 500 page."""
    return answer_with_headers(ws, target, path_params, scope, body, upload)[:3]


def answer_with_headers(ws: Workspace, target: Target, path_params: dict[str, str], scope: dict[str, Any],
                        body: bytes, upload: Upload | None = None) -> tuple[int, bytes, str, dict[str, str]]:
    """`answer` plus the headers a refusal carries (the gate's WWW-Authenticate on a 401 or 403)."""
    try:
        return (*_answer(ws, target, path_params, scope, body, upload), {})
    except ApiError as e:
        return e.status, json.dumps(e.body).encode(), JSON, dict(getattr(e, "headers", None) or {})
    except Exception:  # noqa: BLE001
        return 500, json.dumps(google_error(500, "Internal error encountered.", "backendError").body).encode(), JSON, {}


def _answer(ws: Workspace, target: Target, path_params: dict[str, str], scope: dict[str, Any],
            body: bytes, upload: Upload | None) -> tuple[int, bytes, str]:
    spec = target.spec
    if spec is None:
        assert target.own is not None
        return target.own.answer(ws, path_params, body)
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    if gated(scope) and (denied := gate(ws, spec, scope, {**dict(query), **path_params}, body)) is not None:
        raise denied
    ctype = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"content-type"), "")
    d = dialect(spec.service)
    if (own := d.answer_http(ws, spec, path_params, query, body, ctype, scope["headers"], _base_url(scope))) is not None:
        status, out = own
        return status, json.dumps(out).encode(), JSON
    if target.upload and upload is None:
        if target.session or ("uploadType", "resumable") in query:
            raise bad_request("Resumable uploads are served by the workspace app (its upload session protocol).",
                              "badRequest")
        upload = upload_of(query, body, ctype)
    kwargs, fields = google_kwargs(spec, path_params, query, body, upload)
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    with ws.lock:  # a write's precondition and the write itself see one version
        refused = d.precondition(spec.writes, headers, lambda: current_etag(ws, spec, kwargs))
        if refused is not None:
            return refused.status, json.dumps(refused.body).encode(), JSON
        res = ws.call(spec.name, kwargs, source="http")
    if not res.ok:
        return res.status, json.dumps(res.body).encode(), JSON
    if not spec.writes and (cond := d.answered_conditionally(headers, res.body)) is not None:
        return (304, b"", "") if cond.status == 304 else (cond.status, json.dumps(cond.body).encode(), JSON)
    if res.status == 204:
        return 204, b"", ""
    if isinstance(res.body, Media):
        return 200, res.body.data, res.body.mime_type
    if isinstance(res.body, str):
        return 200, res.body.encode(), "text/plain; charset=UTF-8"
    out = select_fields(res.body, fields) if fields else res.body
    return res.status, json.dumps(out).encode(), JSON  # the default encoder is the fastest path


@functools.cache
def _getter(service: str, method_id: str) -> ToolSpec | None:
    """The `get` of the resource a method writes (calendar.events.patch -> calendar.events.get), if served."""
    want = method_id.rsplit(".", 1)[0] + ".get"
    return next((s for s in TOOLS.values() if s.service == service and s.method_id == want), None)


def current_etag(ws: Workspace, spec: ToolSpec, kwargs: dict[str, Any]) -> str | None:
    """The etag the resource a write names has now (read through its `get`, unlogged); None when it has none."""
    get = _getter(spec.service, spec.method_id)
    if get is None or not all(p in kwargs for p in get.path_params):
        return None
    res = dispatch(ws, get, {p: kwargs[p] for p in get.path_params})
    tag = res.body.get("etag") if res.ok and isinstance(res.body, dict) else None
    return tag if isinstance(tag, str) else None


def gated(scope: dict[str, Any]) -> bool:
    """Does the app serving this request put its APIs behind the auth gate (`create_app(gated=True)`)? A request
    made in process (`handle`: env0's surface, which gates at its own ports) has no app and is not gated here."""
    return bool(getattr(getattr(scope.get("app"), "state", None), "gated", False))


def _base_url(scope: dict[str, Any]) -> str:
    host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
    if host is None:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}"


def no_route(method: str, path: str, allowed: Iterable[str] = ()) -> tuple[int, dict[str, Any]]:
    """The API's answer when no route takes the request: the answer of the dialect whose paths it lies among (Slack's
    unknown_method at HTTP 200 under /api/, Stripe's unrecognized URL), else Google's 404, or 405 where the path is
    known but not with this verb."""
    for d in _dialects():
        if (own := d.unrouted(method, path)) is not None:
            return own
    if allowed:
        return 405, google_error(405, f"Method not allowed: {method} {path} (allowed: {', '.join(sorted(allowed))})",
                                 "methodNotAllowed").body
    return 404, google_error(404, f"Method not found: {method} {path}", "notFound").body


@functools.cache
def _heads() -> tuple[tuple[tuple[str, ...], str], ...]:
    """(the literal segments a route's path starts with, its service), for every tool route."""
    out = set()
    for e in entries():
        if e.target.spec is not None:
            head = tuple(s for s in e.segments[:next((i for i, s in enumerate(e.segments) if "{" in s),
                                                     len(e.segments))])
            out.add((head, e.target.spec.service))
    return tuple(sorted(out))


def path_owners(path: str) -> frozenset[str]:
    """The services whose API paths a path that no route takes lies among: those whose routes share the most leading
    literal segments with it (at least one). `/api/x` is Slack's, `/gmail/v1/users/me/nothing` Gmail's; `/v1/x` is
    both Docs' and Stripe's; `/nothing` nobody's. A port serving one service refuses a path another one owns."""
    parts = tuple(p for p in path.split("/") if p)
    best, owners = 0, set()
    for head, service in _heads():
        n = next((i for i, (a, b) in enumerate(zip(head, parts)) if a != b), min(len(head), len(parts)))
        if n and n > best:
            best, owners = n, {service}
        elif n and n == best:
            owners.add(service)
    return frozenset(owners)


def resolve(routes: Iterable[BaseRoute], scope: dict[str, Any]) -> tuple[Route | None, dict[str, Any], set[str]]:
    """The route the app's router would run for `scope`, its path parameters, and (when none) every verb the path
    takes (Starlette's 405 names only the first route's): Starlette's own `matches`, walked synchronously."""
    allowed: set[str] = set()
    for route in routes:
        match, child = route.matches(scope)
        if match is Match.NONE:
            continue
        if isinstance(route, Mount):  # a Mount takes the whole prefix: the answer is inside it
            return resolve(route.routes, {**scope, **child})
        if match is Match.FULL:
            return route, child["path_params"], set()  # type: ignore[return-value]
        allowed |= set(getattr(route, "methods", None) or ())
    return None, {}, allowed


def handle(ws: Workspace, scope: dict[str, Any], body: bytes) -> tuple[int, bytes, str]:
    """One API request answered in process through the same routes (env0's surface serves these on its own port)."""
    scope = {"type": "http", "root_path": "", **scope}
    route, params, allowed = resolve(api_routes(), scope)
    if route is None:
        status, out = no_route(scope["method"], scope["path"], allowed)
        return status, json.dumps(out).encode(), JSON
    return answer(ws, targets()[route.name], params, scope, body)


@functools.cache
def doc_routes() -> tuple[APIRoute, ...]:
    """One APIRoute per route above, at its full path, for the OpenAPI document only (/_admin/docs): FastAPI documents
    APIRoutes, and serving through them costs more per request than the Starlette routes do (bench/http_routing_bench.py)."""
    return tuple(_doc_route(e) for e in entries())


async def _not_served(request: Request) -> Response:  # pragma: no cover - documentation only, never routed
    raise RuntimeError("documentation route")


def _doc_route(e: _Entry) -> APIRoute:
    spec, own = e.target.spec, e.target.own
    if spec is None:
        assert own is not None
        return APIRoute(_path(e.segments), _not_served, methods=list(e.methods), name=e.name, operation_id=e.name,
                        summary=own.summary, tags=[own.tag], response_class=Response)
    props = spec.parameters.get("properties", {})
    extra: dict[str, Any] = {}
    if (operation := dialect(spec.service).openapi_operation(spec)) is not None:
        methods, extra = operation
    else:
        in_path = spec.path_params
        extra["parameters"] = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
                               for p in in_path] + [
            {"name": k, "in": "query", "required": k in spec.required, "schema": v}
            for k, v in props.items() if k not in in_path and k != "body"]
        if e.target.session:
            extra["requestBody"] = {"content": {"application/octet-stream": {}}, "description":
                                    "a resumable session's bytes (?upload_id=..., Content-Range: bytes FIRST-LAST/"
                                    "TOTAL); DELETE on the same URI cancels the session"}
        elif e.target.upload:
            extra["requestBody"] = {"content": {"multipart/related": {}, "application/octet-stream": {}},
                                    "description": "uploadType=multipart (metadata + media), media, or resumable "
                                                   "(starts an upload session)"}
        elif "body" in spec.kinds:
            extra["requestBody"] = {"content": {"application/json": {"schema": props.get("body", {"type": "object"})}}}
        # one operation id per route: a session's PUT is documented, its DELETE in the description
        methods = [e.methods[-1]] if e.target.session else list(e.methods)
    return APIRoute(_path(e.segments), _not_served, methods=methods, name=e.name, operation_id=e.name,
                    summary=e.name, description=spec.description, tags=[spec.service], status_code=spec.status,
                    response_class=Response, openapi_extra=extra)


def _forget_routes() -> None:
    """A service registered or unregistered: the route tree and its lookups are built again on next use."""
    for cached in (api_routes, targets, _getter, _heads, doc_routes):
        cached.cache_clear()


registry.watch(_forget_routes)
