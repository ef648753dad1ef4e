"""The questions a shared module asks of an API family: how a tool is named, how arguments coerce and are refused,
where a request's arguments and token travel, and how a failure is answered."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal
from urllib.parse import parse_qsl, quote, urlencode

from ..errors import ApiError

if TYPE_CHECKING:
    from ..environment import Workspace
    from ..tools import ToolSpec


@dataclass(frozen=True)
class HttpRoute:
    """One path a method is served at over HTTP, named after its tool plus `suffix`; `upload`: its upload path,
    `session`: a resumable upload session's URI there."""

    segments: tuple[str, ...]
    methods: tuple[str, ...]
    suffix: str = ""
    upload: bool = False
    session: bool = False


@dataclass(frozen=True)
class OwnRoute:
    """A path a family serves beside its methods (Slack's upload step 2); `answer(ws, path_params, body)` returns
    (status, body bytes, content type). `tag`: its service, for the OpenAPI document."""

    segments: tuple[str, ...]
    methods: tuple[str, ...]
    name: str
    summary: str
    tag: str
    answer: Callable[[Workspace, dict[str, str], bytes], tuple[int, bytes, str]]


class Dialect:
    """One API family's wire conventions. Flags say where the family departs from Google's REST conventions."""

    family: str
    args_in_body = False  # Slack: every argument (the token too) in the query string or a form/JSON body, at /api/<method>
    errors_in_ok_body = False  # Slack: a refusal is HTTP 200 with {"ok": false, "error": ...}
    keyed_requests = False  # Stripe: an API key and Idempotency-Key in the headers, checked by the service's wire module
    form_bodies = False  # Stripe: a POST's parameters are its form body
    own_http_surface = False  # auth: form posts, redirects and cookies, served by auth_http.py rather than the API routes

    def tool_name(self, service: str, method_id: str) -> str:
        raise NotImplementedError

    def string_arg(self, v: Any) -> Any:
        """A list of strings is one comma-separated value (to=["a@x", "b@x"]); booleans are spelled as in JSON."""
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            return ", ".join(v)
        if isinstance(v, bool):
            return "true" if v else "false"
        return v  # numbers: coerce_numbers_to_str; dicts and other lists: rejected by str

    def arg_error(self, message: str, param: str | None, code: str | None = None) -> ApiError:
        raise NotImplementedError

    def missing_arg(self, name: str) -> ApiError:
        raise NotImplementedError

    def unknown_arg(self, name: str) -> ApiError:
        return self.arg_error(f'Invalid JSON payload received. Unknown name "{name}": Cannot bind query parameter.', name)

    def bad_value(self, kind: str | None, name: str, value: Any) -> ApiError:
        return self.arg_error(f"Invalid value for {kind} parameter {name}: {str(value)[:60]!r}", name)

    def internal_error(self) -> ApiError:
        raise NotImplementedError

    def bearer(self, headers: dict[str, str], query: bytes, body: bytes) -> str | None:
        """The request's credentials (headers: lower-cased names): an Authorization header."""
        return headers.get("authorization")

    def precondition(self, writes: bool, headers: dict[str, str], current: Callable[[], str | None]) -> ApiError | None:
        """A write's conditional headers against the resource's current version (`current()`: its etag, None when
        it has none): None lets the request go on. Families without entity versions ignore the headers."""
        return None

    def answered_conditionally(self, headers: dict[str, str], body: Any) -> ApiError | None:
        """A read's conditional headers against the version it is about to answer: 304 or 412, or None."""
        return None

    def object_type(self) -> Any:
        """The annotation an object-valued handler argument validates as (Google's: a JSON object as given)."""
        return dict

    def refused(self, body: Any) -> bool:
        """Whether a handler's answer refuses although the handler returned it (its writes are rolled back)."""
        return False

    def own_gate(self, ws: Workspace) -> bool | None:
        """Whether the family's own credential check guards a tool call now (None: the OAuth Bearer gate decides)."""
        return None

    def check_credential(self, ws: Workspace, spec: ToolSpec, credential: str | None) -> ApiError | None:
        """The family's own check of the tool channel's credential (asked where `own_gate` answered True)."""
        return None

    def answer_http(self, ws: Workspace, spec: ToolSpec, path_params: dict[str, str], query: list[tuple[str, str]],
                    body: bytes, ctype: str, headers: list[tuple[bytes, bytes]], base_url: str) -> tuple[int, Any] | None:
        """The family's own answer to an HTTP request for one of its methods: (status, JSON body), or None where the
        shared REST path answers (`base_url`: the server's, as the request reached it)."""
        return None

    def upload_body(self, tool: str, service: str, meta: dict[str, Any], media: bytes) -> dict[str, Any] | None:
        """The handler's `body` for an upload whose bytes are the resource itself (None: bytes go as media_body)."""
        return None

    # shared surfaces, round 3: what shared code asks once where it used to test a flag (arguments, shell, routes)

    def unknown_args(self) -> Literal["forbid", "ignore"]:
        """What a method's arguments model does with a name it does not know (pydantic's `extra`): Google refuses it."""
        return "forbid"

    def curl(self, spec: ToolSpec, arguments: dict[str, Any], base: str) -> str:
        """The curl command that makes this call's API request from a shell (`base`: the service's URL as the shell
        spells it, `$GMAIL_URL`): path parameters in the path, the rest in the query string, `body` as JSON."""
        path = spec.path
        rest = dict(arguments)
        for p in spec.path_params:
            path = path.replace("{" + p + "}", quote(str(rest.pop(p, "")), safe="")).replace("{+" + p + "}", "")
        body = rest.pop("body", None)
        query = urlencode([(k, str(v).lower() if isinstance(v, bool) else v) for k, v in rest.items()])
        url = f"{base}/{path}" + (f"?{query}" if query else "")
        data = f" -H 'content-type: application/json' -d {shell_json(body)}" if body is not None else ""
        return f"curl -sS -X {spec.http_method} \"{url}\"{data}"

    def http_routes(self, spec: ToolSpec) -> tuple[HttpRoute, ...]:
        """Where the API routes serve a method: REST's path and verb, and its upload path (a resumable session's URI
        there takes PUT and DELETE; where the method itself is PUT, as Gmail's drafts.update, its upload route takes
        the session's PUTs too, told apart by upload_id)."""
        out = [HttpRoute(tuple(spec.path.split("/")), (spec.http_method,))]
        if spec.upload_path:
            at = tuple(spec.upload_path.lstrip("/").split("/"))
            out.append(HttpRoute(at, (spec.http_method,), "_upload", upload=True))
            verbs = tuple(m for m in ("DELETE", "PUT") if m != spec.http_method)
            out.append(HttpRoute(at, verbs, "_upload_session", upload=True, session=True))
        return tuple(out)

    def own_routes(self) -> tuple[OwnRoute, ...]:
        """Paths the family serves beside its methods' routes."""
        return ()

    def openapi_operation(self, spec: ToolSpec) -> tuple[list[str], dict[str, Any]] | None:
        """The verbs and OpenAPI extras that document a method whose arguments do not travel as REST's (None: the
        shared REST documentation: path and query parameters, a JSON body)."""
        return None

    def unrouted(self, method: str, path: str) -> tuple[int, dict[str, Any]] | None:
        """The family's answer to a request no route takes, where the path is among the family's (None: not its)."""
        return None

    def refusal(self, r: Any) -> ApiError:
        """The family's answer to a request the OAuth gate refused (`r`: the gate's refusal): Google's by default."""
        return r.answer()

    def http_gate(self, ws: Workspace, spec: ToolSpec, guard: Any, headers: dict[str, str], query: bytes, body: bytes,
                  params: dict[str, Any]) -> ApiError | None:
        """The refusal of an HTTP request for one of the family's methods whose credential (`bearer`) the OAuth gate
        (`guard`: services/descriptor.py's Guard) does not pass; None lets it through."""
        token = self.bearer(headers, query, body)
        try:
            with ws.lock:
                guard.authorize(ws, spec, token, params)
        except guard.refused as r:
            return self.refusal(r)
        return None

    # env0 serving verbs
    def forwarded_headers(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """The request headers, besides its content type, that the family's wire reads when a script's request is
        passed on to the API (Stripe's key and Idempotency-Key); the others read none."""
        return [(k, v) for k, v in headers if k != b"content-type"] if self.keyed_requests else []

    def logged_body(self, body: bytes) -> Any:
        """A request body that is not JSON as env0's action log records it: a form's fields for a family that posts
        forms (Stripe), else its text cut at 2,000 characters."""
        if self.form_bodies:
            return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        return {"_raw": body.decode("utf-8", "replace")[:2000]}

    def logged_request(self, spec: ToolSpec, arguments: dict[str, Any]) -> tuple[str, Any, dict[str, Any]]:
        """(HTTP method, body, query arguments) of the request a tool call stands for, as env0's action log records it:
        Google's REST (the body argument as body, the others beside the path in the query string); Slack's Web API
        (a read is a GET with every argument in the query, a write a POST with them as its body); Stripe's (a POST's
        parameters are its form body)."""
        in_query = {k: v for k, v in arguments.items() if k != "body" and k not in spec.path_params}
        if self.args_in_body:
            return ("GET", None, arguments) if not spec.writes else ("POST", arguments, {})
        if self.form_bodies and spec.http_method == "POST":
            return spec.http_method, in_query, {}
        return spec.http_method, arguments.get("body"), in_query


def shell_json(value: Any) -> str:
    """A JSON value as one shell word."""
    return shlex.quote(json.dumps(value, ensure_ascii=False, sort_keys=True))
