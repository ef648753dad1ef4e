"""Tool arguments as pydantic models built from the handlers' signatures.

One model per tool gives both sides of the contract: the OpenAI `parameters` schema the agent reads
(from `model_json_schema`, cut down to the compact form the prompts have always shown) and the
validation of what the agent or an HTTP client sends. Pydantic's lax mode does the ordinary coercion
("10" -> 10, 10.0 -> 10, numbers -> strings); the wire rules below cover where the real APIs differ.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from typing import TYPE_CHECKING, Annotated, Any, Callable, Iterable

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from .dialects import Dialect, dialect
from .errors import ApiError

if TYPE_CHECKING:
    from .tools import ToolSpec

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no", ""}
_INT_LITERAL = re.compile(r"\s*[+-]?[0-9](_?[0-9])*\s*")  # Python's int(): "10", " +5 ", "1_000"


def _invalid(v: Any) -> PydanticCustomError:
    return PydanticCustomError("wire_value", "not a valid wire value: {v}", {"v": str(v)[:60]})


def _integer(v: Any) -> Any:
    """Pydantic's lax int, less booleans and decimal strings ("10.0"), which the real APIs reject."""
    if isinstance(v, bool) or (isinstance(v, str) and not _INT_LITERAL.fullmatch(v)):
        raise _invalid(v)
    return v


def _boolean(v: Any) -> Any:
    """Query-string booleans: true/1/yes and false/0/no/"" in any case; not pydantic's on/off/t/f/y/n or 1.0."""
    if isinstance(v, str):
        s = v.strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        raise _invalid(v)
    if isinstance(v, float):
        raise _invalid(v)
    return v  # bool, or the integers 0 and 1 (pydantic rejects the rest)


def _array(v: Any) -> Any:
    """A single string is a one-item list (a repeated query parameter given once); ids may be numbers."""
    if isinstance(v, str):
        return [v]
    if isinstance(v, (list, tuple)) and all(isinstance(x, (str, int)) for x in v):
        return [str(x) for x in v]
    raise _invalid(v)


class IntRange(dict):
    """A Stripe range filter (`created`): an integer (exactly that) or an object of `gt` / `gte` / `lt` / `lte`
    integers, e.g. `created[gte]=1700000000`. Handlers receive a dict of those keys (an integer is `{"eq": n}`)."""


_RANGE_KEYS = ("gt", "gte", "lt", "lte")


def _int_range(v: Any) -> Any:
    if isinstance(v, bool):
        raise _invalid(v)
    if isinstance(v, int) or (isinstance(v, str) and _INT_LITERAL.fullmatch(v)):
        return {"eq": int(v)}
    if not isinstance(v, dict) or not v:
        raise _invalid(v)
    out = {}
    for k, x in v.items():
        if k not in _RANGE_KEYS or isinstance(x, bool) or not (isinstance(x, int) or
                                                               (isinstance(x, str) and _INT_LITERAL.fullmatch(x))):
            raise _invalid(f"{k}={x}")
        out[k] = int(x)
    return out


@functools.cache
def _wire_types(d: Dialect) -> dict[Any, Any]:
    """The annotated type of each handler annotation in a dialect: its own string and object coercion."""
    return {
        str: Annotated[str, BeforeValidator(d.string_arg)],
        int: Annotated[int, BeforeValidator(_integer)],
        bool: Annotated[bool, BeforeValidator(_boolean)],
        dict: d.object_type(),
        list: Annotated[list[str], BeforeValidator(_array)],
        IntRange: Annotated[dict, BeforeValidator(_int_range)],
    }


class GoogleArgs(BaseModel):
    """Google rejects unknown names ("Unknown name ... Cannot bind query parameter"); null means absent."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    @model_validator(mode="before")
    @classmethod
    def _none_is_absent(cls, data: Any) -> Any:
        if isinstance(data, dict) and None in data.values():
            return {k: v for k, v in data.items() if v is not None or k not in cls.model_fields}  # unknown stays unknown
        return data


class LenientArgs(GoogleArgs):
    """Slack ignores arguments it does not know."""

    model_config = ConfigDict(extra="ignore")


_ARGS_BASE: dict[str, type[GoogleArgs]] = {"forbid": GoogleArgs, "ignore": LenientArgs}


def _wire_type(hint: Any, where: str, service: str) -> Any:
    """The annotated wire type for a handler annotation (`X | None` is X: None means absent)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"{where}: no wire rule for {hint!r}")
        hint = args[0]
    base = typing.get_origin(hint) or hint
    if base is list and typing.get_args(hint) not in ((), (str,)):
        raise TypeError(f"{where}: arrays are lists of strings, not {hint!r}")
    table = _wire_types(dialect(service))
    if base not in table:
        raise TypeError(f"{where}: no wire rule for {hint!r}")
    return table[base]


def arg_fields(service: str, qualname: str, fn: Callable, shown: dict[str, str]) -> dict[str, tuple[Any, FieldInfo]]:
    """`create_model`'s field definitions for one @api handler: every parameter but self, in signature
    order, with its default (required if none) and, when shown, its description. Cheap: registration
    checks every handler with it, while the models themselves are built on first use."""
    hints = typing.get_type_hints(fn)
    fields: dict[str, tuple[Any, FieldInfo]] = {}
    for p in list(inspect.signature(fn).parameters.values())[1:]:
        tp = _wire_type(hints.get(p.name, str), f"{qualname}({p.name})", service)
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (tp, Field(default, description=shown.get(p.name) or None))
    return fields


def args_model(service: str, name: str, fields: dict[str, tuple[Any, FieldInfo]]) -> type[GoogleArgs]:
    return create_model(name, __base__=_ARGS_BASE[dialect(service).unknown_args()], **fields)


def _compact(prop: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's compact property: type, items for arrays, description (no titles, defaults or anyOf)."""
    out: dict[str, Any] = {"type": prop["type"]}
    if "items" in prop:
        out["items"] = {"type": prop["items"]["type"]}
    if prop.get("description"):
        out["description"] = prop["description"]
    return out


def tool_schema(model: type[BaseModel], shown: Iterable[str]) -> tuple[dict[str, Any], dict[str, str], tuple[str, ...]]:
    """(OpenAI parameters of the shown params in `shown` order, JSON type of every param, required params)."""
    full = model.model_json_schema()
    props = full["properties"]
    kinds = {name: p["type"] for name, p in props.items()}
    required = tuple(full.get("required", ()))
    schema: dict[str, Any] = {"type": "object", "properties": {n: _compact(props[n]) for n in shown}}
    if required:
        schema["required"] = list(required)
    return schema, kinds, required


def arg_error(spec: "ToolSpec", message: str, param: str | None, code: str | None = None) -> ApiError:
    return dialect(spec.service).arg_error(message, param, code)


def api_error(spec: "ToolSpec", args: Any, exc: ValidationError) -> ApiError:
    """The real API's error body for the first problem, in the order the APIs check: the arguments in the
    order sent (unknown name or bad value), then the first missing required parameter."""
    errors = exc.errors(include_url=False, include_context=False)
    order = {k: i for i, k in enumerate(args)} if isinstance(args, dict) else {}
    last = len(order)
    err = min(errors, key=lambda e: -1 if not e["loc"] else last if e["type"] == "missing"
              else order.get(e["loc"][0], last))
    if not err["loc"]:
        return arg_error(spec, "arguments must be a JSON object", None)
    name, d = err["loc"][0], dialect(spec.service)
    if err["type"] == "missing":
        return d.missing_arg(name)
    if err["type"] in ("extra_forbidden", "invalid_key"):
        return d.unknown_arg(name)
    return d.bad_value(spec.kinds.get(name), name, err["input"] if len(err["loc"]) == 1 else args[name])
