"""Slack's Web API conventions: methods at /api/<method> with their arguments (and the token) in the query string or
a form/JSON body, unknown arguments ignored, every failure HTTP 200 with {"ok": false, "error": ...}."""

from __future__ import annotations

import json
from typing import Annotated, Any
from urllib.parse import parse_qsl

from pydantic import BeforeValidator

from ..errors import ApiError, slack_error
from ..request_limits import loads
from .base import Dialect


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
    ignores_unknown_args = True
    args_in_body = True
    errors_in_ok_body = True

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

    def bearer(self, headers: dict[str, str], query: bytes, body: bytes) -> str | None:
        """Slack takes its token as a Bearer header or a `token` argument (query string or form body)."""
        if headers.get("authorization"):
            return headers["authorization"]
        args = dict(parse_qsl(query.decode("latin-1")))
        if "token" not in args and headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            args = dict(parse_qsl(body.decode("utf-8", "replace")))
        return f"Bearer {args['token']}" if args.get("token") else None


SLACK = Slack()
