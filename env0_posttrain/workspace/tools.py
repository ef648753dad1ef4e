"""Agent tools: one OpenAI function per implemented API method, dispatched to the same handlers as HTTP.

`call_tool` never raises on agent input: bad arguments get the real API's error body and the
workspace is left exactly as it was (a write that fails half-way is rolled back).
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .errors import ApiError, google_error, slack_error

if TYPE_CHECKING:
    from .environment import Workspace

_KIND = {str: "string", int: "integer", bool: "boolean", dict: "object", list: "array", float: "number"}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    service: str
    description: str
    parameters: dict[str, Any]
    writes: bool
    method_id: str
    http_method: str
    path: str
    status: int = 200
    upload_path: str | None = None
    func_name: str = ""
    kinds: dict[str, str] = field(default_factory=dict)
    required: tuple[str, ...] = ()

    @property
    def path_params(self) -> tuple[str, ...]:
        return tuple(re.findall(r"{\+?(\w+)}", self.path))


TOOLS: dict[str, ToolSpec] = {}


def tool_name(service: str, method_id: str) -> str:
    parts = method_id.split(".")
    if service == "slack":
        return "slack_" + "_".join(parts)
    rest = parts[1:]
    if service == "gmail" and rest[:1] == ["users"] and len(rest) >= 2:
        rest = rest[1:]
    return "_".join([service, *rest])


def _kind(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _kind(args[0])
    return _KIND.get(origin or tp, "string")


def register(cls: type) -> None:
    """Collect the @api methods of a service class into TOOLS."""
    for fname, fn in inspect.getmembers(cls, predicate=inspect.isfunction):
        meta = getattr(fn, "__api__", None)
        if meta is None:
            continue
        hints = typing.get_type_hints(fn)
        sig = inspect.signature(fn)
        kinds, required, props = {}, [], {}
        for pname, p in list(sig.parameters.items())[1:]:
            kinds[pname] = _kind(hints.get(pname, str))
            if p.default is inspect.Parameter.empty:
                required.append(pname)
        for pname, desc in meta["shown"].items():
            if pname not in kinds:
                raise TypeError(f"{cls.__name__}.{fname}: shown param {pname!r} is not in the signature")
            prop: dict[str, Any] = {"type": kinds[pname]}
            if kinds[pname] == "array":
                prop["items"] = {"type": "string"}
            if desc:
                prop["description"] = desc
            props[pname] = prop
        hidden_required = [r for r in required if r not in props]
        if hidden_required:
            raise TypeError(f"{cls.__name__}.{fname}: required params {hidden_required} must be shown")
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        name = meta["name"] or tool_name(cls.name, meta["method_id"])
        TOOLS[name] = ToolSpec(
            name=name, service=cls.name, description=meta["description"], parameters=schema,
            writes=meta["writes"], method_id=meta["method_id"], http_method=meta["http_method"], path=meta["path"],
            status=meta["status"], upload_path=meta["upload_path"], func_name=fname, kinds=kinds,
            required=tuple(required),
        )


def openai_tools(names: list[str] | None = None) -> list[dict[str, Any]]:
    """OpenAI function-tool definitions (all tools when names is None)."""
    out = []
    for n in (names if names is not None else list(TOOLS)):
        spec = TOOLS[n]
        out.append({"type": "function", "function": {"name": spec.name, "description": spec.description,
                                                      "parameters": spec.parameters}})
    return out


def service_tools(service: str) -> list[str]:
    return [n for n, s in TOOLS.items() if s.service == service]


def _arg_error(spec: ToolSpec, message: str, param: str | None) -> ApiError:
    if spec.service == "slack":
        return slack_error("invalid_arguments", response_metadata={"messages": [f"[ERROR] {message}"]})
    return google_error(400, message, "invalid" if param else "badRequest", param)


_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no", ""}


def coerce_args(spec: ToolSpec, args: Any) -> dict[str, Any]:
    """Check names, presence and types; coerce wire strings ("10", "true") the way the real APIs do."""
    if not isinstance(args, dict):
        raise _arg_error(spec, "arguments must be a JSON object", None)
    out: dict[str, Any] = {}
    for k, v in args.items():
        kind = spec.kinds.get(k)
        if kind is None:
            if spec.service == "slack":
                continue  # Slack ignores unknown arguments
            raise _arg_error(spec, f'Invalid JSON payload received. Unknown name "{k}": Cannot bind query parameter.', k)
        if v is None:
            continue
        if spec.service == "slack":
            v = _slack_wire(kind, v)
        try:
            out[k] = _coerce(kind, v)
        except (TypeError, ValueError):
            raise _arg_error(spec, f"Invalid value for {kind} parameter {k}: {str(v)[:60]!r}", k) from None
    for r in spec.required:
        if r not in out:
            if spec.service == "slack":
                raise _arg_error(spec, f"missing required field: {r}", r)
            raise google_error(400, f"Required parameter: {r}", "required", r)
    return out


def _slack_wire(kind: str, v: Any) -> Any:
    """Slack sends structured arguments as JSON strings in forms (`profile`, `files`): accept either form."""
    if kind == "object" and isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    if kind == "string" and (isinstance(v, dict) or (isinstance(v, list) and not all(isinstance(x, str) for x in v))):
        return json.dumps(v)
    return v


def _coerce(kind: str, v: Any) -> Any:
    if kind == "string":
        if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            return ", ".join(v)  # e.g. to=["a@x", "b@x"] for a comma-separated address list
        if isinstance(v, (dict, list)):
            raise TypeError
        return v if isinstance(v, str) else (str(v).lower() if isinstance(v, bool) else str(v))
    if kind == "integer":
        if isinstance(v, bool):
            raise TypeError
        if isinstance(v, float) and not v.is_integer():
            raise ValueError
        return int(v)
    if kind == "boolean":
        if isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        raise ValueError
    if kind == "object":
        if not isinstance(v, dict):
            raise TypeError
        return v
    if kind == "array":
        if isinstance(v, str):
            return [v]
        if not isinstance(v, (list, tuple)) or not all(isinstance(x, (str, int)) for x in v):
            raise TypeError
        return [str(x) for x in v]
    return v


def internal_error(spec: ToolSpec) -> ApiError:
    if spec.service == "slack":
        return slack_error("internal_error")
    return google_error(500, "Internal error encountered.", "backendError")


def call_tool(ws: "Workspace", name: str, arguments: Any, *, source: str = "tool") -> dict[str, Any]:
    """Run one tool: {"ok": True, "result": <API JSON>} or {"ok": False, "error": <API error body>}."""
    res = ws.call(name, arguments, source=source)
    if res.ok:
        return {"ok": True, "result": res.body}
    return {"ok": False, "error": res.body}


@dataclass
class CallResult:
    ok: bool
    status: int
    body: Any
    spec: ToolSpec | None = None


def unknown_tool(name: str) -> CallResult:
    body = google_error(404, f"Unknown tool: {name!r}", "notFound").body
    return CallResult(False, 404, body)


def dispatch(ws: "Workspace", spec: ToolSpec, args: Any) -> CallResult:
    """Validate, run and (on any error) roll back one call. Caller holds the workspace lock."""
    try:
        kwargs = coerce_args(spec, args)
    except ApiError as e:
        return CallResult(False, e.status, e.body, spec)
    service = getattr(ws, spec.service)
    fn: Callable = getattr(service, spec.func_name)
    saved = ws._savepoint() if spec.writes else None
    try:
        body = fn(**kwargs)
    except ApiError as e:
        if saved is not None:
            ws._rollback(saved)
        return CallResult(False, e.status, e.body, spec)
    except Exception:  # a handler bug must not corrupt state or kill the episode
        if saved is not None:
            ws._rollback(saved)
        err = internal_error(spec)
        return CallResult(False, err.status, err.body, spec)
    if isinstance(body, dict) and spec.service == "slack" and body.get("ok") is False:
        if saved is not None:
            ws._rollback(saved)
        return CallResult(False, 200, body, spec)
    return CallResult(True, spec.status, body if body is not None else {}, spec)
