"""The Drive `q` grammar: `name contains 'x' and 'folderId' in parents and trashed = false`, not, or, ()."""

from __future__ import annotations

import re
from typing import Any, Callable

from ...errors import google_error

_TOK = re.compile(r"\s*(?:(?P<str>'(?:\\.|[^'\\])*')|(?P<op><=|>=|!=|=|<|>)|(?P<par>[()])|(?P<word>[A-Za-z_][\w.]*))")
Pred = Callable[[Any], bool]


def invalid_q() -> Exception:
    return google_error(400, "Invalid Value", "invalid", "q")


def tokenize(q: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    q = q.rstrip()
    while pos < len(q):
        m = _TOK.match(q, pos)
        if not m or m.end() == pos:
            raise invalid_q()
        pos = m.end()
        kind = m.lastgroup or ""
        val = m.group(kind)
        if kind == "str":
            val = re.sub(r"\\(.)", r"\1", val[1:-1])
        out.append((kind, val))
    return out


class DriveQuery:
    """Compiles q into a predicate over a file view object exposing `field(name)` and `in_field(field, value)`."""

    def __init__(self, q: str):
        self.toks = tokenize(q or "")
        self.i = 0
        self.pred: Pred = (lambda f: True) if not self.toks else self._expr()
        if self.i != len(self.toks):
            raise invalid_q()

    def _peek(self, kind: str | None = None, val: str | None = None) -> bool:
        if self.i >= len(self.toks):
            return False
        k, v = self.toks[self.i]
        return (kind is None or k == kind) and (val is None or v.lower() == val)

    def _take(self) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise invalid_q()
        self.i += 1
        return self.toks[self.i - 1]

    def _expr(self) -> Pred:
        left = self._term()
        while self._peek("word", "or"):
            self._take()
            right = self._term()
            left = (lambda a, b: lambda f: a(f) or b(f))(left, right)
        return left

    def _term(self) -> Pred:
        left = self._factor()
        while self._peek("word", "and"):
            self._take()
            right = self._factor()
            left = (lambda a, b: lambda f: a(f) and b(f))(left, right)
        return left

    def _factor(self) -> Pred:
        if self._peek("word", "not"):
            self._take()
            inner = self._factor()
            return lambda f: not inner(f)
        if self._peek("par", "("):
            self._take()
            inner = self._expr()
            if not self._peek("par", ")"):
                raise invalid_q()
            self._take()
            return inner
        return self._cond()

    def _cond(self) -> Pred:
        kind, val = self._take()
        if kind == "str":  # 'value' in parents|owners|writers|readers
            k2, v2 = self._take()
            k3, field = self._take()
            if v2.lower() != "in" or k3 != "word" or field not in ("parents", "owners", "writers", "readers"):
                raise invalid_q()
            return lambda f: f.in_field(field, val)
        if kind != "word":
            raise invalid_q()
        field = val
        if field == "sharedWithMe" and not (self._peek("op") or self._peek("word", "contains")):
            return lambda f: f.field("sharedWithMe")
        if field not in ("name", "fullText", "mimeType", "modifiedTime", "createdTime", "trashed", "starred",
                         "sharedWithMe", "description"):
            raise invalid_q()
        k2, op = self._take()
        k3, value = self._take()
        if k3 == "word" and value.lower() in ("true", "false"):
            value_any: Any = value.lower() == "true"
        elif k3 == "str":
            value_any = value
        else:
            raise invalid_q()
        if k2 == "word" and op.lower() == "contains":
            if not isinstance(value_any, str) or field not in ("name", "fullText", "mimeType", "description"):
                raise invalid_q()
            v = value_any.lower()
            if field == "name":  # Drive matches name prefixes of words
                return lambda f: v in f.field("name").lower()
            return lambda f: v in (f.field(field) or "").lower()
        if k2 != "op":
            raise invalid_q()
        if field in ("trashed", "starred", "sharedWithMe"):
            if not isinstance(value_any, bool) or op not in ("=", "!="):
                raise invalid_q()
            return (lambda f: f.field(field) == value_any) if op == "=" else (lambda f: f.field(field) != value_any)
        if isinstance(value_any, bool):
            raise invalid_q()
        if field in ("name", "mimeType", "description", "fullText") and op not in ("=", "!="):
            raise invalid_q()
        cmp = {"=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
               "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[op]
        if field in ("modifiedTime", "createdTime"):
            norm = value_any.replace("Z", "").replace("+00:00", "")[:19]
            if len(norm) < 10:
                raise invalid_q()
            return lambda f: cmp(f.field(field).replace("Z", "")[:len(norm)], norm)
        return lambda f: cmp(f.field(field), value_any)
