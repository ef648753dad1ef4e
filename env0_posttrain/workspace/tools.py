"""Agent tools: one OpenAI function per implemented API method, dispatched to the same handlers as HTTP.

`call_tool` never raises on agent input: bad arguments get the real API's error body and the
workspace is left exactly as it was (a write that fails half-way is rolled back).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable

from pydantic import BaseModel, ValidationError

from .dialects import dialect
from .errors import ApiError, google_error
from .media import Media
from .request_limits import hostile
from .tool_args import api_error, arg_error, arg_fields, args_model, tool_schema

if TYPE_CHECKING:
    from .environment import Workspace


@dataclass(frozen=True)
class ToolSpec:
    """One tool. Its arguments model (and from it the schema, kinds and required params) is built on first
    use: pydantic takes milliseconds a model, and most processes touch a few of the ~220 tools."""

    name: str
    service: str
    description: str
    writes: bool
    method_id: str
    http_method: str
    path: str
    status: int = 200
    upload_path: str | None = None
    func_name: str = ""
    shown: tuple[str, ...] = ()  # the params the agent sees, in the order it sees them
    arg_fields: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # see tool_args.arg_fields

    @cached_property
    def args_model(self) -> type[BaseModel]:
        return args_model(self.service, self.name, self.arg_fields)

    @cached_property
    def _schema(self) -> tuple[dict[str, Any], dict[str, str], tuple[str, ...]]:
        return tool_schema(self.args_model, self.shown)

    @property
    def parameters(self) -> dict[str, Any]:
        """OpenAI `parameters`: the shown params, compact (type, items, description), and the required ones."""
        return self._schema[0]

    @property
    def kinds(self) -> dict[str, str]:
        """JSON type of every param, shown or not."""
        return self._schema[1]

    @property
    def required(self) -> tuple[str, ...]:
        return self._schema[2]

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the built model (a class made by create_model has no importable name)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("args_model", "_schema")}

    @property
    def path_params(self) -> tuple[str, ...]:
        return tuple(re.findall(r"{\+?(\w+)}", self.path))


TOOLS: dict[str, ToolSpec] = {}


def tool_name(service: str, method_id: str) -> str:
    return dialect(service).tool_name(service, method_id)


def register(cls: type) -> None:
    """Collect the @api methods of a service class into TOOLS, checking each handler's signature now."""
    for fname, fn in inspect.getmembers(cls, predicate=inspect.isfunction):
        meta = getattr(fn, "__api__", None)
        if meta is None:
            continue
        shown = meta["shown"]
        fields = arg_fields(cls.name, f"{cls.__name__}.{fname}", fn, shown)
        unknown = [p for p in shown if p not in fields]
        if unknown:
            raise TypeError(f"{cls.__name__}.{fname}: shown param {unknown[0]!r} is not in the signature")
        hidden_required = [p for p, (_, info) in fields.items() if info.is_required() and p not in shown]
        if hidden_required:
            raise TypeError(f"{cls.__name__}.{fname}: required params {hidden_required} must be shown")
        name = meta["name"] or tool_name(cls.name, meta["method_id"])
        TOOLS[name] = ToolSpec(
            name=name, service=cls.name, description=meta["description"], writes=meta["writes"],
            method_id=meta["method_id"], http_method=meta["http_method"], path=meta["path"], status=meta["status"],
            upload_path=meta["upload_path"], func_name=fname, shown=tuple(shown), arg_fields=fields,
        )


def forget(service: str) -> None:
    """Take a service's tools out of TOOLS again (services/registry.py's `unregister`)."""
    for name in [n for n, spec in TOOLS.items() if spec.service == service]:
        del TOOLS[name]


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


def coerce_args(spec: ToolSpec, args: Any) -> dict[str, Any]:
    """Check names, presence and types with the tool's model; wire strings ("10", "true") coerce as the real
    APIs do. Returns only the arguments given (a handler's own defaults apply to the rest)."""
    try:
        m = spec.args_model.__pydantic_validator__.validate_python(args)
    except ValidationError as e:
        raise api_error(spec, args, e) from None
    values = m.__dict__
    return {k: values[k] for k in m.__pydantic_fields_set__}


def internal_error(spec: ToolSpec) -> ApiError:
    return dialect(spec.service).internal_error()


def call_tool(ws: "Workspace", name: str, arguments: Any, *, source: str = "tool") -> dict[str, Any]:
    """Run one tool: {"ok": True, "result": <API JSON>} or {"ok": False, "error": <API error body>}."""
    res = ws.call(name, arguments, source=source)
    if res.ok:
        return {"ok": True, "result": res.body.for_tool() if isinstance(res.body, Media) else res.body}
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
    found = hostile(args)
    if found is not None:  # no API stores it, and stored it would break every later read of the state
        where, what = found
        err = arg_error(spec, f"Invalid value: {what}", re.split(r"[.\[]", where, maxsplit=1)[0] or None)
        return CallResult(False, err.status, err.body, spec)
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
        if saved is not None and not getattr(e, "commit", False):  # a Stripe decline keeps its failed charge
            ws._rollback(saved)
        return CallResult(False, e.status, e.body, spec)
    except Exception:  # a handler bug must not corrupt state or kill the episode
        if saved is not None:
            ws._rollback(saved)
        err = internal_error(spec)
        return CallResult(False, err.status, err.body, spec)
    if dialect(spec.service).refused(body):
        if saved is not None:
            ws._rollback(saved)
        return CallResult(False, 200, body, spec)
    return CallResult(True, spec.status, body if body is not None else {}, spec)
