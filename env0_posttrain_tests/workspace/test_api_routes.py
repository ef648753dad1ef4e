"""The API routes of the workspace app: every tool's path template reaches that tool through the app's own router
(literal segments before parameters), `{+name}` spans slashes, and 404/405 answer in the API's shape."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from fastapi.testclient import TestClient
from starlette.routing import Mount

from env0_posttrain.workspace import TOOLS, Workspace
from env0_posttrain.workspace.api_routes import Target, _Entry, _tree, api_routes, entries, handle, resolve
from env0_posttrain.workspace.http_app import create_app

ENTRIES = entries()


def concrete(segments: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """A request path for a template, and the path parameters it should bind: each parameter gets its own name
    as value, so a route reached through another template binds the wrong names."""
    params = {}

    def fill(m: re.Match[str]) -> str:
        params[m.group(2)] = f"v-{m.group(2)}" + ("/x/y" if m.group(1) else "")
        return params[m.group(2)]

    return "/" + "/".join(re.sub(r"{(\+?)(\w+)}", fill, s) for s in segments), params


def _endpoints(routes, out=None) -> dict:
    out = {} if out is None else out
    for r in routes:
        if isinstance(r, Mount):
            _endpoints(r.routes, out)
        else:
            out[r.endpoint] = r.name
    return out


ENDPOINTS = _endpoints(api_routes())
APP = create_app(lambda: Workspace.seeded(0))  # requests below may change its state: nothing reads it


def test_the_table_has_one_route_per_tool_upload_path_and_slack_method():
    names = sorted(ENDPOINTS.values())
    assert len(names) == len(set(names)) == len(ENTRIES)
    # auth's tools take forms, answer redirects and set cookies: auth_http.py serves them (workspace/services/auth/test_service.py);
    # an upload path also takes PUT / DELETE on a resumable session's URI
    want = {s.name for s in TOOLS.values() if s.service != "auth"} | \
        {s.name + suffix for s in TOOLS.values() if s.upload_path for suffix in ("_upload", "_upload_session")}
    assert set(names) == want | {"slack_upload_v1"}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_every_template_reaches_its_own_route_through_the_app_router(entry):
    """The app's router (Starlette's matching, Mounts included) picks this tool's route for a concrete path built
    from its template: no other template (a parameter beside ".../messages/send", "generateIds", ":batchUpdate")
    takes it first. The sync resolver used by the env0 surface agrees."""
    app = APP
    path, params = concrete(entry.segments)
    method = entry.methods[-1]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
             "headers": [(b"host", b"t")], "client": ("127.0.0.1", 1), "server": ("t", 80)}

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        pass

    asyncio.run(app(scope, receive, send))  # the router updates this scope with the route it picked
    assert ENDPOINTS.get(scope.get("endpoint")) == entry.name, (path, method)
    assert scope["path_params"] == params
    route, bound, _ = resolve(api_routes(), {"type": "http", "path": path, "method": method, "root_path": ""})
    assert route is not None and route.name == entry.name and bound == params


def _synthetic(*templates: str) -> list:
    return list(_tree([_Entry(tuple(t.split("/")), ("GET",), t, Target(None)) for t in templates], 0))


def _pick(routes, path: str) -> tuple[str | None, dict]:
    route, params, _ = resolve(routes, {"type": "http", "path": path, "method": "GET", "root_path": ""})
    return (route.name if route else None), params


def test_plus_parameters_span_slashes_and_come_after_literals_and_plain_parameters():
    routes = _synthetic("v1/{+name}", "v1/items/{id}", "v1/items/{id}:cancel", "v1/items", "v1/items/{id}/parts",
                        "v1/items/special", "v1/other/{x}")
    assert _pick(routes, "/v1/projects/p/locations/l") == ("v1/{+name}", {"name": "projects/p/locations/l"})
    assert _pick(routes, "/v1/items/a")[0] == "v1/items/{id}"
    assert _pick(routes, "/v1/items/special")[0] == "v1/items/special"
    assert _pick(routes, "/v1/items/a:cancel") == ("v1/items/{id}:cancel", {"id": "a"})
    assert _pick(routes, "/v1/items/a/parts")[0] == "v1/items/{id}/parts"
    assert _pick(routes, "/v1/items/a/b/c") == ("v1/{+name}", {"name": "items/a/b/c"})
    assert any(getattr(r, "path", "").endswith("{name:path}") for r in _flatten_mounts(routes))  # Starlette's :path


def test_a_mount_never_hides_a_route_a_parameter_beside_it_would_match():
    # "lit" has enough routes below it to be mounted; "{a}/x" must still take "lit/x"
    routes = _synthetic("r/lit/p1", "r/lit/p2", "r/lit/p3", "r/lit/p4", "r/lit/p5", "r/{a}/x", "r/{a}/y", "r/{a}/z",
                        "r/{a}/w", "r/{a}/v")
    assert _pick(routes, "/r/lit/p3")[0] == "r/lit/p3"
    assert _pick(routes, "/r/lit/x") == ("r/{a}/x", {"a": "lit"})
    # a lone parameter segment is mounted, and literal leaves beside it still win
    routes = _synthetic("s/{id}/a", "s/{id}/b", "s/{id}/c", "s/{id}/d", "s/{id}/e", "s/send", "s/{id}")
    assert any(isinstance(r, Mount) for r in _flatten_mounts(routes))
    assert _pick(routes, "/s/send")[0] == "s/send"
    assert _pick(routes, "/s/q/c") == ("s/{id}/c", {"id": "q"})
    assert _pick(routes, "/s/send/c") == ("s/{id}/c", {"id": "send"})


def _flatten_mounts(routes):
    for r in routes:
        yield r
        if isinstance(r, Mount):
            yield from _flatten_mounts(r.routes)


CLIENT = TestClient(create_app(lambda: Workspace.seeded(0)))


def test_unknown_google_path_is_the_api_404_and_a_trailing_slash_is_no_redirect():
    for path in ("/no/such/api", "/gmail/v1/users/me/nothing", "/gmail/v1/users/me/messages/"):
        r = CLIENT.get(path, follow_redirects=False)
        assert r.status_code == 404, path
        err = r.json()["error"]
        assert err["code"] == 404 and err["errors"][0]["reason"] == "notFound" and "detail" not in r.json()


def test_wrong_verb_on_a_known_path_is_a_405_in_the_api_shape_naming_every_allowed_verb():
    h0 = CLIENT.app.state.ws.state_hash()
    r = CLIENT.put("/drive/v3/files/abc")
    assert r.status_code == 405
    assert r.headers["allow"] == "DELETE, GET, HEAD, PATCH"
    err = r.json()["error"]
    assert err["code"] == 405 and err["errors"][0]["reason"] == "methodNotAllowed"
    assert CLIENT.delete("/gmail/v1/users/me/messages").headers["allow"] == "GET, HEAD, POST"
    assert CLIENT.app.state.ws.state_hash() == h0


def test_slack_unknown_method_or_verb_is_http_200_unknown_method():
    for r in (CLIENT.post("/api/no.such"), CLIENT.get("/api/no.such"), CLIENT.put("/api/chat.postMessage")):
        assert r.status_code == 200 and r.json()["ok"] is False and r.json()["error"] == "unknown_method"
    assert CLIENT.get("/api/auth.test").json()["ok"] is True


def test_admin_paths_keep_fastapis_answers():
    assert CLIENT.get("/_admin/health").json()["ok"] is True
    assert CLIENT.get("/_admin/nope").json() == {"detail": "Not Found"}


def test_in_process_handle_answers_like_the_app():
    ws = Workspace.seeded(0)
    status, body, _ = handle(ws, {"path": "/gmail/v1/users/me/messages", "method": "GET", "query_string": b"maxResults=2",
                                  "headers": []}, b"")
    assert status == 200 and len(json.loads(body)["messages"]) == 2
    assert handle(ws, {"path": "/drive/v3/files/x", "method": "PUT", "query_string": b"", "headers": []}, b"")[0] == 405
    assert handle(ws, {"path": "/nothing", "method": "GET", "query_string": b"", "headers": []}, b"")[0] == 404


def test_the_openapi_document_lists_every_tool_at_its_method_and_path():
    doc = CLIENT.get("/_admin/openapi.json").json()
    ops = {op["operationId"]: (verb.upper(), path) for path, item in doc["paths"].items() for verb, op in item.items()}
    for e in ENTRIES:
        path = "/" + "/".join(re.sub(r"{\+(\w+)}", r"{\1}", s) for s in e.segments)
        assert ops.get(e.name) == (e.methods[-1], path), e.name
    get = doc["paths"]["/gmail/v1/users/{userId}/messages"]["get"]
    assert {p["name"] for p in get["parameters"]} >= {"userId", "q", "maxResults", "pageToken"}
    assert CLIENT.get("/_admin/docs").status_code == 200
