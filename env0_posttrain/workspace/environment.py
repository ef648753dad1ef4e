"""The Workspace: the services (six apps, Stripe and the OAuth server they sit behind) over one clock (frozen unless a
served workspace's user chose another: util/clock.py), one seed
and one people directory.

Every agent or HTTP call goes through `Workspace.call` under one lock, so concurrent clients are
serialised (no lost update) and a failed write is rolled back from a copy-on-write savepoint.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from .base import DB, Service
from .people import Company, Person, build_company
from .request_limits import hostile, sanitized
from . import tool_gate
from .tools import TOOLS, CallResult, dispatch, unknown_tool
from .services import registry

if TYPE_CHECKING:
    from .services.admin import Admin
    from .services.auth import Auth
    from .services.calendar import Calendar
    from .services.docs import Docs
    from .services.drive import Drive
    from .services.gmail import Gmail
    from .services.slack import Slack
    from .services.stripe import Stripe

SERVICE_NAMES: list[str] = []  # the registered services' names, kept in step with the registry
registry.watch(lambda: SERVICE_NAMES.__setitem__(slice(None), registry.names()))

DEFAULT_NOW = datetime(2026, 3, 11, 16, 0, 0, tzinfo=timezone.utc)  # a Wednesday afternoon
_TEMPLATES: "OrderedDict[tuple[int, datetime], dict[str, DB]]" = OrderedDict()
_TEMPLATE_LOCK = threading.Lock()


class Workspace:
    """One isolated company workspace. Build with `Workspace.seeded(seed)`."""

    gmail: Gmail
    calendar: Calendar
    drive: Drive
    docs: Docs
    slack: Slack
    admin: Admin
    stripe: Stripe
    auth: Auth

    def __init__(self, seed: int = 0, now: datetime | None = None, dbs: dict[str, DB] | None = None):
        now = now or DEFAULT_NOW
        if now.tzinfo is None:
            now = now.replace(tzinfo=timezone.utc)
        self.seed = seed
        self._now: datetime = now.astimezone(timezone.utc)
        self._tick: Callable[[], datetime] | None = None  # a served workspace's running clock (util/clock.py); None: frozen
        self.company: Company = build_company(seed)
        self.lock = threading.RLock()
        self.action_log: list[dict[str, Any]] = []
        # name -> (service DBs, action-log length). Read-only once taken: restore() and savepoints clone
        # them, so templates and forks may share one snapshot's DBs.
        self._snapshots: dict[str, tuple[dict[str, DB], int]] = {}
        self._baseline_pending = False  # True: "seed" follows the state until the first call (planting helpers)
        self.tool_credential: str | None = None  # the access token the tool channel holds (tool_gate.py)
        self.service_names = registry.names()
        fresh = [n for n in self.service_names if not dbs or n not in dbs]  # a service registered after `dbs` was taken
        for desc in registry.SERVICES:
            cls = desc.toolkit
            setattr(self, cls.name, cls(self, cls.DB() if cls.name in fresh else dbs[cls.name].clone()))  # type: ignore[index]
        for name in fresh:
            getattr(self, name).bootstrap()

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def seeded(cls, seed: int = 0, now: datetime | None = None) -> "Workspace":
        """A realistic company with filler; built once per (seed, now) and then cloned (rows are shared)."""
        from .seeding import populate

        key = (seed, now or DEFAULT_NOW)
        with _TEMPLATE_LOCK:
            tpl = _TEMPLATES.get(key)
            if tpl is not None:
                _TEMPLATES.move_to_end(key)
        if tpl is None:
            ws = cls(seed, now)
            populate(ws)
            tpl = {name: ws.service(name).db.clone() for name in ws.service_names}
            with _TEMPLATE_LOCK:
                _TEMPLATES[key] = tpl
                while len(_TEMPLATES) > 64:
                    _TEMPLATES.popitem(last=False)
        ws = cls(seed, now, dbs=tpl)
        ws._snapshots["seed"] = (dict(tpl), 0)  # the template is the seed state (snapshots are never written)
        ws._baseline_pending = True
        return ws

    def fork(self) -> "Workspace":
        """An independent copy sharing the immutable rows (microseconds): e.g. keep the start state for a verifier.

        The live tables are copied; the snapshots are shared with the source, since a snapshot's DBs are
        never written (restore and savepoints clone them, diff only reads them)."""
        with self.lock:
            dbs = {name: self.service(name).db for name in self.service_names}
            other = Workspace(self.seed, self.now, dbs=dbs)
            other._tick = self._tick
            other.company = self.company  # the same people and acting user (a planter may have set another)
            other._snapshots = {k: (dict(v[0]), 0) for k, v in self._snapshots.items()}
            other._baseline_pending = self._baseline_pending
            return other

    # -- people ---------------------------------------------------------------------------------
    @property
    def directory(self) -> list[Person]:
        return list(self.company.people)

    @property
    def me(self) -> Person:
        return self.company.me

    @property
    def domain(self) -> str:
        return self.company.domain

    def person(self, email: str) -> Person | None:
        return self.company.by_email(email)

    def service(self, name: str) -> Service:
        return getattr(self, name)

    @property
    def now(self) -> datetime:
        """The workspace's "now": frozen at its seeded instant (every episode), or a served workspace's chosen
        running clock (`run_clock`)."""
        return self._now if self._tick is None else self._tick()

    @now.setter
    def now(self, when: datetime) -> None:
        self._now, self._tick = when, None

    def run_clock(self, tick: Callable[[], datetime] | None) -> None:
        """Read "now" from `tick` from here on (None: freeze at the instant it reads now)."""
        with self.lock:
            if tick is None:
                self._now = self.now
            self._tick = tick

    def now_ms(self) -> int:
        return int(self.now.timestamp() * 1000)

    def now_rfc3339(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    # -- calls ----------------------------------------------------------------------------------
    def call(self, name: str, arguments: Any, *, source: str = "tool") -> CallResult:
        spec = TOOLS.get(name)
        if spec is None:
            return unknown_tool(name)
        with self.lock:
            self._settle_baseline()
            status, refused, arguments = (tool_gate.refusal(self, spec, arguments) if source == "tool"
                                          and tool_gate.gated(self, spec) else (0, None, arguments))
            res = CallResult(False, status, refused, spec) if status else dispatch(self, spec, arguments)
            if source == "tool":
                tool_gate.remember(self, name, res.ok, res.body)
            entry: dict[str, Any] = {"seq": len(self.action_log) + 1, "tool": name, "service": spec.service,
                                     "writes": spec.writes, "ok": res.ok, "source": source,
                                     "args": _logged(arguments)}
            if not res.ok:
                entry["status"] = res.status
            self.action_log.append(entry)
            return res

    def _savepoint(self) -> dict[str, DB]:
        return {name: self.service(name).db.clone() for name in self.service_names}

    def _rollback(self, saved: dict[str, DB]) -> None:
        for name, db in saved.items():
            self.service(name).db = db

    # -- admin surface --------------------------------------------------------------------------
    def state(self, service: str | None = None) -> dict[str, Any]:
        with self.lock:
            if service is not None:
                return self.service(service).db.dump()
            out: dict[str, Any] = {"meta": self.state_meta()}
            for name in self.service_names:
                out[name] = self.service(name).db.dump()
            return out

    def state_hash(self, service: str | None = None) -> str:
        """sha256 of the canonical JSON of state(service), built from per-row memos (rows are immutable)."""
        with self.lock:
            if service is not None:
                blob = self.service(service).db.canonical()
            else:
                meta = json.dumps(self.state_meta(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                parts = [f'"meta":{meta}'] + [f'"{n}":{self.service(n).db.canonical()}' for n in self.service_names]
                parts.sort()
                blob = "{" + ",".join(parts) + "}"
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()  # never raises on a stored surrogate

    def state_meta(self) -> dict[str, Any]:
        return {"seed": self.seed, "now": self.now.isoformat(), "domain": self.domain}

    def _settle_baseline(self) -> None:
        """Items planted with the seeding helpers before the first call belong to the "seed" baseline."""
        if self._baseline_pending:
            self._baseline_pending = False
            self._snapshots["seed"] = (self._savepoint(), len(self.action_log))

    def snapshot(self, name: str = "default") -> None:
        """Exact and O(rows) shallow: rows are immutable, so the snapshot shares them."""
        with self.lock:
            if name == "seed":
                self._baseline_pending = False
            else:
                self._settle_baseline()
            self._snapshots[name] = (self._savepoint(), len(self.action_log))

    def restore(self, name: str = "default", service: str | None = None) -> None:
        """Back to a snapshot: every service (and the action log), or just one service's state."""
        with self.lock:
            self._settle_baseline()
            if name not in self._snapshots:
                raise KeyError(f"no snapshot named {name!r}; have {sorted(self._snapshots)}")
            dbs, log_len = self._snapshots[name]
            for svc, db in dbs.items():
                if service is None or svc == service:
                    self.service(svc).db = db.clone()
            if service is None:
                del self.action_log[log_len:]

    def snapshots(self) -> list[str]:
        return sorted(self._snapshots)

    def reset(self, service: str | None = None) -> None:
        """Back to the "seed" snapshot (re-take it after planting task items to move the baseline)."""
        self.restore("seed", service)

    def diff(self, since: str = "seed", service: str | None = None) -> dict[str, Any]:
        """Rows added / updated / deleted since a snapshot, per service and table (only non-empty)."""
        with self.lock:
            self._settle_baseline()
            base_dbs, _ = self._snapshots[since]
            return self._diff_from(base_dbs, service)

    def diff_from(self, start: "Workspace", service: str | None = None) -> dict[str, Any]:
        """The same diff against another workspace's live state: an episode's end vs its untouched start copy."""
        with start.lock:
            base_dbs = {name: start.service(name).db for name in self.service_names}
        with self.lock:
            return self._diff_from(base_dbs, service)

    def _diff_from(self, base_dbs: dict[str, Any], service: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in ([service] if service else self.service_names):
            cur_tables = self.service(name).db.tables()
            base_tables = base_dbs[name].tables()
            svc_out: dict[str, Any] = {}
            for tname, cur in cur_tables.items():
                base = base_tables.get(tname, {})
                added = {k: cur[k].dump() for k in cur.keys() - base.keys()}
                deleted = {k: base[k].dump() for k in base.keys() - cur.keys()}
                updated = {}
                for k in cur.keys() & base.keys():
                    a, b = base[k], cur[k]
                    if a is not b and a != b:
                        updated[k] = {"before": a.dump(), "after": b.dump()}
                t = {kind: dict(sorted(v.items())) for kind, v in
                     (("added", added), ("updated", updated), ("deleted", deleted)) if v}
                if t:
                    svc_out[tname] = t
            if svc_out:
                out[name] = svc_out
        return out

    def log(self, service: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.action_log if service is None or e["service"] == service]


def _logged(arguments: Any) -> dict[str, Any]:
    """A call's arguments as the action log keeps them: a copy, JSON-safe when they carried what no API stores."""
    if not isinstance(arguments, dict):
        return {"_invalid": sanitized(repr(arguments)[:200])}
    return sanitized(arguments) if hostile(arguments) is not None else dict(arguments)
