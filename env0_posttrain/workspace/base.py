"""The shape every service shares: a pydantic DB of immutable rows plus a toolkit of API methods.

Rows are frozen pydantic models and handlers replace a row instead of mutating it, so a snapshot
is a shallow copy of each table (structural sharing): microseconds, exact, and safe to share
between workspaces built from the same seed.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

if TYPE_CHECKING:
    from .environment import Workspace


class Table(dict):
    """id -> Row, with a change counter so derived views can be memoised safely."""

    __slots__ = ("version",)

    def __init__(self, *a: Any, **kw: Any):
        super().__init__(*a, **kw)
        self.version = 0

    def __setitem__(self, k: Any, v: Any) -> None:
        self.version += 1
        super().__setitem__(k, v)

    def __delitem__(self, k: Any) -> None:
        self.version += 1
        super().__delitem__(k)

    def pop(self, *a: Any) -> Any:
        self.version += 1
        return super().pop(*a)

    def update(self, *a: Any, **kw: Any) -> None:  # type: ignore[override]
        self.version += 1
        super().update(*a, **kw)

    def copy(self) -> "Table":
        t = Table.__new__(Table)
        dict.update(t, self)  # C-level: no __init__ / __setitem__ round trip per copy
        t.version = self.version
        return t


def table() -> Any:
    return Field(default_factory=Table)


class Row(BaseModel):
    """An immutable resource row; update with `row.model_copy(update={...})`.

    Its canonical JSON is computed once and memoised (the row never changes), which makes state hashes
    and dumps of large workspaces cheap; model_copy drops the memo.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    _json: str | None = PrivateAttr(default=None)

    def canonical(self) -> str:
        private = self.__pydantic_private__
        j = private.get("_json")
        if j is None:
            j = private["_json"] = json.dumps(self.model_dump(mode="json", exclude_none=True), sort_keys=True,
                                              separators=(",", ":"), ensure_ascii=False)
        return j

    def dump(self) -> dict[str, Any]:
        """A fresh JSON-able dict (safe to mutate)."""
        return json.loads(self.canonical())

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:  # type: ignore[override]
        new = super().model_copy(update=update, deep=deep)
        new.__pydantic_private__["_json"] = None
        return new

    def __eq__(self, other: object) -> bool:
        # pydantic's equality also compares private attributes, so the memo alone made two copies of
        # one row unequal (a spurious "updated" entry in Workspace.diff).
        if not isinstance(other, Row):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = BaseModel.__hash__


class DB(BaseModel):
    """A service's state: dict fields are tables (id -> Row), other fields are scalars (counters)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    seq: int = 0
    _cache: dict[Any, Any] | None = PrivateAttr(default=None)

    def cached(self, key: Any, version: Any, build: Callable[[], Any]) -> Any:
        """Memo for derived views (sorted mailboxes); a clone starts empty, a version change rebuilds."""
        if self._cache is None:
            self._cache = {}
        hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        value = build()
        self._cache[key] = (version, value)
        return value

    def clone(self) -> "DB":
        """Copy-on-write clone: new table dicts, shared (immutable) rows.

        Exactly what `model_construct(**fields)` makes (every field set, no extra, private attributes at
        their defaults, so the memo starts empty), without its per-call validation machinery: workspaces
        clone every service several times per episode (build, fork, savepoints).
        """
        cls = type(self)
        new = cls.__new__(cls)
        d = {k: (v.copy() if isinstance(v, dict) else v) for k, v in self.__dict__.items()}
        _setattr(new, "__dict__", d)
        _setattr(new, "__pydantic_fields_set__", set(d))
        _setattr(new, "__pydantic_extra__", None)
        _setattr(new, "__pydantic_private__", _private_defaults(cls))
        return new

    def tables(self) -> dict[str, dict[str, Row]]:
        return {k: v for k, v in self.__dict__.items() if isinstance(v, dict)}

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            out[k] = {i: r.dump() for i, r in sorted(v.items())} if isinstance(v, dict) else v
        return out

    def canonical(self) -> str:
        """Exactly json.dumps(self.dump(), sort_keys=True, separators=(",", ":"), ensure_ascii=False), from memos."""
        parts = []
        for k in sorted(self.__dict__):
            v = self.__dict__[k]
            if isinstance(v, dict):
                body = ",".join(f"{_key(i)}:{r.canonical()}" for i, r in sorted(v.items()))
                parts.append(f"{_key(k)}:{{{body}}}")
            else:
                parts.append(f"{_key(k)}:{json.dumps(v, sort_keys=True, separators=(',', ':'), ensure_ascii=False)}")
        return "{" + ",".join(parts) + "}"


_setattr = object.__setattr__
_SHARED_DEFAULTS: dict[type, dict[str, Any] | None] = {}


def _private_defaults(cls: type[BaseModel]) -> dict[str, Any]:
    """A fresh private-attribute dict at the defaults; pydantic's get_default is asked once per class when
    every default is None (nothing mutable to copy), else every time."""
    shared = _SHARED_DEFAULTS.get(cls)
    if shared is None:
        values = {n: a.get_default() for n, a in cls.__private_attributes__.items()}
        if cls in _SHARED_DEFAULTS or any(v is not None for v in values.values()):
            _SHARED_DEFAULTS[cls] = None
            return values
        _SHARED_DEFAULTS[cls] = shared = values
    return dict(shared)


def _key(k: str) -> str:
    return json.dumps(k, ensure_ascii=False)


def api(method_id: str, http: str, doc: str, *, writes: bool = False, params: dict[str, str] | None = None,
        status: int = 200, upload: str | None = None, name: str | None = None) -> Callable:
    """Mark a toolkit method as one real API method.

    http is "VERB path" relative to the server root (the real path, e.g. "GET gmail/v1/users/{userId}/messages").
    params: the parameters shown to the agent, with a short description ("" = no description);
    parameters left out are still accepted (over HTTP and from the agent) but not advertised.
    """

    def deco(fn: Callable) -> Callable:
        verb, path = http.split(" ", 1)
        fn.__api__ = dict(method_id=method_id, http_method=verb, path=path, description=doc, writes=writes,
                          shown=dict(params or {}), status=status, upload_path=upload, name=name)
        return fn

    return deco


@functools.lru_cache(maxsize=65536)
def make_id(seed: int, kind: str, n: int, alphabet: str, length: int) -> str:
    """Deterministic id: same seed and counter -> same id, realistic alphabet and length."""
    h = int.from_bytes(hashlib.blake2b(f"{seed}|{kind}|{n}".encode(), digest_size=24).digest(), "big")
    out = []
    for _ in range(length):
        h, r = divmod(h, len(alphabet))
        out.append(alphabet[r])
    return "".join(out)


HEX = "0123456789abcdef"
BASE32HEX = "0123456789abcdefghijklmnopqrstuv"
DRIVE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
SLACK_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
DIGITS = "0123456789"


class Service:
    """Base toolkit: handlers (decorated with @api) and seeding helpers over one DB."""

    name: ClassVar[str]
    DB: ClassVar[type[DB]]

    def __init__(self, ws: "Workspace", db: DB):
        self.ws = ws
        self.db = db

    def new_id(self, kind: str, alphabet: str = HEX, length: int = 16) -> str:
        self.db.seq += 1
        return make_id(self.ws.seed, f"{self.name}.{kind}", self.db.seq, alphabet, length)
