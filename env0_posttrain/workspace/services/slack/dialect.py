"""Slack's Web API conventions: methods at /api/<method> with their arguments (and the token) in the query string or
a form/JSON body, unknown arguments ignored, every failure HTTP 200 with {"ok": false, "error": ...}."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import parse_qsl

from pydantic import BeforeValidator

from ...dialects.base import Dialect, HttpRoute, OwnRoute, shell_json
from ...errors import ApiError, slack_error
from ...http_routes import slack_kwargs
from ..auth.gate import slack_refusal
from ...request_limits import loads

if TYPE_CHECKING:
    from ...environment import Workspace
    from ...tools import ToolSpec

UPLOAD_ROUTE = "slack_upload_v1"  # Slack's v2 upload step 2: the bytes come back to this server
JSON = "application/json; charset=UTF-8"


def _object(v: Any) -> Any:
    """Slack forms carry structured arguments (`profile`, `files`) as JSON strings: accept either form."""
    if isinstance(v, str):
        try:
            return loads(v)
        except ValueError:
            return v
    return v


class Slack(Dialect):
    family = "slack"
    args_in_body = True
    errors_in_ok_body = True

    def unknown_args(self) -> Literal["forbid", "ignore"]:
        return "ignore"

    def object_type(self) -> Any:
        return Annotated[dict, BeforeValidator(_object)]

    def refused(self, body: Any) -> bool:
        return isinstance(body, dict) and body.get("ok") is False

    def tool_name(self, service: str, method_id: str) -> str:
        return "slack_" + "_".join(method_id.split("."))

    def string_arg(self, v: Any) -> Any:
        """Structured arguments (blocks, an empty array included) travel as their JSON text, as in a form."""
        if isinstance(v, dict) or (isinstance(v, list) and not (v and all(isinstance(x, str) for x in v))):
            return json.dumps(v)
        return super().string_arg(v)

    def arg_error(self, message: str, param: str | None, code: str | None = None) -> ApiError:
        return slack_error("invalid_arguments", response_metadata={"messages": [f"[ERROR] {message}"]})

    def missing_arg(self, name: str) -> ApiError:
        return self.arg_error(f"missing required field: {name}", name)

    def internal_error(self) -> ApiError:
        return slack_error("internal_error")

    def curl(self, spec: ToolSpec, arguments: dict[str, Any], base: str) -> str:
        """Every argument as one JSON body, POSTed to the method's /api/<method> path."""
        return f"curl -sS -X POST \"{base}/{spec.path}\" -H 'content-type: application/json' -d {shell_json(arguments)}"

    def http_routes(self, spec: ToolSpec) -> tuple[HttpRoute, ...]:
        return (HttpRoute(("api", spec.method_id), ("GET", "POST")),)

    def own_routes(self) -> tuple[OwnRoute, ...]:
        return (OwnRoute(("upload", "v1", "{file_id}"), ("POST",), UPLOAD_ROUTE, "Slack upload step 2: the bytes for "
                         "files.getUploadURLExternal's upload_url", "slack", _receive_upload),)

    def answer_http(self, ws: Workspace, spec: ToolSpec, path_params: dict[str, str], query: list[tuple[str, str]],
                    body: bytes, ctype: str, headers: list[tuple[bytes, bytes]], base_url: str) -> tuple[int, Any] | None:
        """Every method at /api/<method>, HTTP 200 whatever the answer; files.getUploadURLExternal's upload_url
        points back at this server's upload step 2."""
        res = ws.call(spec.name, slack_kwargs(query, body, ctype), source="http")
        if res.ok and spec.method_id == "files.getUploadURLExternal":
            res.body["upload_url"] = f"{base_url}/upload/v1/{res.body['file_id']}"
        return 200, res.body

    def openapi_operation(self, spec: ToolSpec) -> tuple[list[str], dict[str, Any]] | None:
        """A form or JSON body (GET with a query string works too)."""
        schema = {"type": "object", **{k: v for k, v in spec.parameters.items() if k in ("properties", "required")}}
        return ["POST"], {"requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": schema},
                                                      "application/json": {"schema": schema}}}}

    def unrouted(self, method: str, path: str) -> tuple[int, dict[str, Any]] | None:
        if path.startswith("/api/"):
            return 200, {"ok": False, "error": "unknown_method", "req_method": path[5:]}
        return None

    def refusal(self, r: Any) -> ApiError:
        return ApiError(200, slack_refusal(r))

    def bearer(self, headers: dict[str, str], query: bytes, body: bytes) -> str | None:
        """Slack takes its token as a Bearer header or a `token` argument (query string or form body)."""
        if headers.get("authorization"):
            return headers["authorization"]
        args = dict(parse_qsl(query.decode("latin-1")))
        if "token" not in args and headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            args = dict(parse_qsl(body.decode("utf-8", "replace")))
        return f"Bearer {args['token']}" if args.get("token") else None


def _receive_upload(ws: Workspace, path_params: dict[str, str], body: bytes) -> tuple[int, bytes, str]:
    with ws.lock:
        stored = ws.slack.receive_upload(path_params["file_id"], body)
    return (200, f"OK - {len(body)}".encode(), "text/plain") if stored else \
        (404, b'{"ok":false,"error":"file_not_found"}', JSON)


SLACK = Slack()
