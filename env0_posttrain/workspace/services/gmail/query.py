"""The Gmail search grammar (`q`): operators, quoted phrases, negation, OR, AND, (a b) and {a b} groups, parsed with
pyparsing into a tree of predicates."""

from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta, timezone
from typing import Callable

import pyparsing as pp

from .data_model import Message

Pred = Callable[[Message], bool]
_UNIT = {"d": 1, "m": 30, "y": 365}
_IS = {"unread": "UNREAD", "starred": "STARRED", "important": "IMPORTANT", "sent": "SENT", "draft": "DRAFT"}
_IN = {"inbox": "INBOX", "sent": "SENT", "trash": "TRASH", "spam": "SPAM", "draft": "DRAFT", "drafts": "DRAFT",
       "starred": "STARRED", "important": "IMPORTANT", "chats": "CHAT"}
_CATEGORY = {"primary": "CATEGORY_PERSONAL", "social": "CATEGORY_SOCIAL", "promotions": "CATEGORY_PROMOTIONS",
             "updates": "CATEGORY_UPDATES", "forums": "CATEGORY_FORUMS"}


def _text(m: Message) -> str:
    return " ".join((m.sender, " ".join(m.to), " ".join(m.cc), m.subject, m.body,
                     " ".join(a.filename for a in m.attachments))).lower()


def _date(value: str, now: datetime) -> int | None:
    v = value.strip()
    if v.isdigit():
        return int(v) * 1000
    for fmt in ("%Y/%m/%d", "%Y-%m-%d", "%m/%d/%Y"):
        try:
            return int(datetime.strptime(v, fmt).replace(tzinfo=timezone.utc).timestamp() * 1000)
        except ValueError:
            pass
    return None


def _size(value: str) -> int | None:
    m = re.fullmatch(r"(\d+)([kKmM]?)", value)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]


def _words(value: str) -> tuple[list[str], bool]:
    """(terms, all_required): "a b" is one phrase; (a b) needs every word; {a b} needs any."""
    if value.startswith('"'):
        return [value.strip('"').lower()], True
    if value.startswith("("):
        return value[1:-1].lower().split(), True
    if value.startswith("{"):
        return value[1:-1].lower().split(), False
    return [value.lower()], True


@functools.cache
def _grammar() -> pp.ParserElement:
    """Gmail's q as a grammar: terms joined by spaces (AND) or OR; `-` negates a term; `(a b)` groups (all), `{a b}`
    groups (any); `op:value`, `op:"a phrase"`, `op:(a b)`, `op:{a b}`."""
    expr = pp.Forward()
    phrase = pp.Regex(r'"[^"]*"')
    word = ~(pp.Keyword("OR") | pp.Keyword("AND")) + pp.Regex(r'[^\s(){}"\-][^\s(){}"]*')
    negation = pp.Opt(pp.Literal("-"), default="")
    any_of = pp.Group(pp.Suppress("{") + pp.ZeroOrMore(expr) + pp.Suppress("}"))("any")
    all_of = pp.Group(pp.Suppress("(") + pp.ZeroOrMore(expr) + pp.Suppress(")"))("all")
    operator = pp.Regex(r"[A-Za-z_]+(?=:\S)") + pp.Suppress(":")
    op_term = pp.Group(operator + (phrase | any_of | all_of | pp.Regex(r'[^\s(){}"]+')))("op")
    term = pp.Group(negation + (op_term | any_of | all_of | pp.Group(phrase | word)("text")))
    or_term = pp.Group(term + pp.OneOrMore(pp.Suppress(pp.Keyword("OR") | "|") + term))("or") | term
    expr <<= or_term | pp.Suppress(pp.Keyword("AND"))
    return pp.ZeroOrMore(expr)


def _tree(q: str) -> list[pp.ParseResults]:
    """The parsed terms; a query the grammar cannot read whole (an unbalanced bracket or quote) is read with its
    brackets and quotes as spaces, as Gmail reads them literally."""
    try:
        return list(_grammar().parse_string(q, parse_all=True))
    except (pp.ParseException, RecursionError):
        return list(_grammar().parse_string(re.sub(r'[(){}"]', " ", q), parse_all=True))


class Query:
    """A compiled q: `matches(message)` plus whether it names trash/spam explicitly."""

    def __init__(self, q: str, now: datetime, label_ids_by_name: dict[str, str]):
        self.now = now
        self.labels = label_ids_by_name
        self.includes_trash_spam = False
        self.preds: list[Pred] = [self._compile(t) for t in _tree(q or "")]

    def matches(self, m: Message) -> bool:
        for p in self.preds:
            if not p(m):
                return False
        return True

    def _compile(self, node: pp.ParseResults, op: str = "") -> Pred:
        """A predicate from a parsed term; `op`: the operator a group's words take (from:{a b})."""
        kind = node.get_name()
        if kind == "or":
            parts = [self._compile(t, op) for t in node]
            return lambda m: any(p(m) for p in parts)
        if kind in ("any", "all"):
            parts = [self._compile(t, op) for t in node]
            if not parts:
                return lambda m: True
            join = any if kind == "any" else all
            return lambda m: join(p(m) for p in parts)
        if kind == "op":
            name, value = node[0].lower(), node[1]
            return self._compile(value, name) if isinstance(value, pp.ParseResults) else self._pred(name, value)
        if kind == "text":
            return self._pred(op, node[0])
        neg, inner = node[0], node[1]  # a term: its negation sign and what it negates
        pred = self._compile(inner, op)
        return (lambda m: not pred(m)) if neg else pred

    def _pred(self, op: str, value: str) -> Pred:
        terms, all_required = _words(value)
        joiner = all if all_required else any
        if op in ("from", "to", "cc", "bcc", "subject", "filename"):
            field: Callable[[Message], str] = {
                "from": lambda m: m.sender.lower(),
                "to": lambda m: " ".join(m.to + m.cc + m.bcc).lower(),
                "cc": lambda m: " ".join(m.cc).lower(),
                "bcc": lambda m: " ".join(m.bcc).lower(),
                "subject": lambda m: m.subject.lower(),
                "filename": lambda m: " ".join(a.filename for a in m.attachments).lower(),
            }[op]
            if op in ("from", "to", "cc", "bcc") and terms == ["me"]:
                return lambda m: self._me_in(op, m)
            if len(terms) == 1:
                t0 = terms[0]
                return lambda m: t0 in field(m)
            return lambda m: joiner(t in field(m) for t in terms)
        if op == "label":
            name = value.strip('"').lower()
            lid = self.labels.get(name) or self.labels.get(name.replace("-", " ")) or self.labels.get(name.replace("-", "/"))
            if lid in ("TRASH", "SPAM"):
                self.includes_trash_spam = True
            return (lambda m: lid in m.labelIds) if lid else (lambda m: False)
        if op == "is":
            v = value.lower()
            if v == "read":
                return lambda m: "UNREAD" not in m.labelIds
            lid = _IS.get(v)
            return (lambda m: lid in m.labelIds) if lid else (lambda m: False)
        if op == "in":
            v = value.lower()
            if v in ("anywhere", "all"):
                self.includes_trash_spam = v == "anywhere"
                return lambda m: True
            lid = _IN.get(v) or self.labels.get(v)
            if lid in ("TRASH", "SPAM"):
                self.includes_trash_spam = True
            return (lambda m: lid in m.labelIds) if lid else (lambda m: False)
        if op == "category":
            lid = _CATEGORY.get(value.lower())
            return (lambda m: lid in m.labelIds) if lid else (lambda m: False)
        if op == "has":
            v = value.lower()
            if v == "attachment":
                return lambda m: bool(m.attachments)
            if v in ("userlabels", "nouserlabels"):
                has = v == "userlabels"
                return lambda m: any(l.startswith("Label_") for l in m.labelIds) == has
            return lambda m: False
        if op in ("after", "before", "newer", "older"):
            ms = _date(value, self.now)
            if ms is None:
                return lambda m: False
            return (lambda m: m.internalDate >= ms) if op in ("after", "newer") else (lambda m: m.internalDate < ms)
        if op in ("newer_than", "older_than"):
            mt = re.fullmatch(r"(\d+)([dmy])", value.lower())
            if not mt:
                return lambda m: False
            cut = int((self.now - timedelta(days=int(mt.group(1)) * _UNIT[mt.group(2)])).timestamp() * 1000)
            return (lambda m: m.internalDate >= cut) if op == "newer_than" else (lambda m: m.internalDate < cut)
        if op in ("larger", "smaller"):
            n = _size(value)
            if n is None:
                return lambda m: False
            from .mime import size_estimate
            return (lambda m: size_estimate(m) > n) if op == "larger" else (lambda m: size_estimate(m) < n)
        if op == "rfc822msgid":
            v = value.strip("<>").lower()
            return lambda m: m.messageIdHeader.strip("<>").lower() == v
        if op:  # unknown operator: Gmail searches the literal text
            terms = [f"{op}:{t}" for t in terms]
        return lambda m: joiner(t in _text(m) for t in terms)

    def _me_in(self, op: str, m: Message) -> bool:
        me = m.userId
        if op == "from":
            return me in m.sender.lower()
        return me in " ".join(m.to + m.cc + m.bcc).lower()
