"""What an env0 package takes from env0 itself, read at run time from the user's env0 checkout (never copied).

Two things (both only when an env0 root is given: `--env0-root` or `ENV0_ROOT`; without one our own seeded
company stays the default fill):

- `env0_imports(root)`: needles modules may import env0's service packages (`mock_gdrive.seed.content`, or
  env-0's later name for the same package, `env_0_gdrive`); the checkout's package folders are importable while
  the needles load (to that load only: `package/import_paths.py`), and `env_0_<svc>` resolves to the checkout's
  `mock_<svc>` when no `env_0_<svc>` is there.
- `load_slack_default(ws, root, conf, seed)`: env0's mock-slack always seeds a base scenario under a package's
  needles (`FILL_CONFIG["base_scenario"]`: "default", "complex" or "dangerous"; `exclude_channels` leaves
  channels' messages out of "default"), and its user token acts as the workspace's first non-bot member.
  The scenario's data is read from the checkout's `mock_slack/seed/content.py` and built into our Slack rows
  by env0's rules (message spread, DMs, pins, files and reminders: `seed/slack_files.py`); the agent's Slack
  identity becomes that first member.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import random
import sys
import threading
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

from ....workspace.environment import Workspace
from .slack_files import load_slack_files
from ..package.import_paths import import_folders
from ..package.load import Env0Error, load_needles

ALIAS_PREFIX, MOCK_PREFIX = "env_0_", "mock_"


def package_dirs(root: Path) -> list[Path]:
    """The folders holding env0's service packages (`packages/environments/mock-gdrive` holds `mock_gdrive`)."""
    base = Path(root) / "packages" / "environments"
    return sorted(d for d in base.glob("*") if d.is_dir()) if base.is_dir() else []


class _AliasFinder:
    """`env_0_<svc>` -> the checkout's `mock_<svc>` package (tried last, after the real finders)."""

    def __init__(self, dirs: list[Path]):
        self.dirs = dirs

    def alias(self, fullname: str) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(ALIAS_PREFIX):
            return None
        real = MOCK_PREFIX + fullname[len(ALIAS_PREFIX):]
        for d in self.dirs:
            init = d / real / "__init__.py"
            if init.is_file():
                return importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[str(d / real)])
        from .env0_compat import find_spec as compat_spec  # env0-private packages: our stand-ins

        return compat_spec(fullname)


_NEEDLES_WITH_ENV0 = threading.RLock()  # one needles load with env0's packages at a time: its module cleanup is
# per load, and another load's half-imported `mock_<svc>` must not be popped under it


@contextmanager
def env0_imports(root: Path | None) -> Iterator[None]:
    """While a needles module loads: env0's service packages importable (to this context only, never through
    sys.path: `package/import_paths.py`); afterwards the modules imported from the checkout are gone again (another root
    in the same process gets its own)."""
    if root is None:
        yield
        return
    dirs = package_dirs(root)
    with _NEEDLES_WITH_ENV0, import_folders(dirs, _AliasFinder(dirs).alias):
        before = set(sys.modules)
        try:
            yield
        finally:
            for name in set(sys.modules) - before:
                if name.split(".")[0].startswith((ALIAS_PREFIX, MOCK_PREFIX)):
                    sys.modules.pop(name, None)


# -- slack ----------------------------------------------------------------------------------------
SLACK_CONTENT = Path("packages/environments/mock-slack/mock_slack/seed/content.py")


def slack_content(root: Path) -> tuple[Path, ModuleType]:
    path = Path(root) / SLACK_CONTENT
    if not path.is_file():
        raise Env0Error("seed slack default", path, "missing: --env0-root must be an env0 checkout (its mock-slack "
                        "default seed lives here)")
    return path, load_needles(path)


def load_slack_default(ws: Workspace, root: Path, conf: dict[str, Any], seed: int) -> dict[str, str]:
    """Replace our Slack fill with env0's base scenario; returns persona key -> user id (for the needles)."""
    path, c = slack_content(root)
    scenario = str(conf.get("base_scenario", "default"))
    if scenario not in ("default", "complex", "dangerous"):
        raise Env0Error("seed slack default", path, f"unknown base_scenario {scenario!r} "
                        "(env0's mock-slack has: default, complex, dangerous)")
    rng = random.Random(seed)
    now = ws.now
    db = ws.slack.db
    for table in (db.messages, db.channels, db.users, db.files, db.reminders, db.scheduled):
        for key in list(table):
            del table[key]  # one by one: Table counts versions on delete
    bot = getattr(c, "BOT_USER", None)
    if bot:
        ws.slack.add_user(id=bot["id"], name=bot["name"], real_name=bot.get("real_name", bot["name"]),
                          email=bot.get("email", ""), title=bot.get("title", ""))
    keys: dict[str, str] = {}
    personas = dict(c.PERSONAS)
    if scenario == "dangerous" and getattr(c, "ATTACKER_USER", None):
        personas[c.ATTACKER_USER["key"]] = c.ATTACKER_USER
    for key, p in personas.items():
        ws.slack.add_user(id=p["id"], name=p["name"], real_name=p.get("real_name", p["name"]),
                          email=p.get("email", ""), title=p.get("title", ""),
                          is_admin=bool(p.get("is_admin", False)), tz=p.get("tz", "America/Los_Angeles"))
        keys[key] = p["id"]
    staff = [p["id"] for k, p in c.PERSONAS.items()]

    def channel(ch: dict, days: tuple[int, int], private: bool | None = None, by_first_member: bool = False) -> None:
        members = (staff + ([bot["id"]] if bot else [])) if ch.get("all_members") else \
            [keys[k] for k in ch.get("members", []) if k in keys]
        creator = keys.get((ch.get("members") or ["alex"])[0] if by_first_member else "alex")
        ws.slack.put_channel(
            id=ch["id"], name=ch["name"], is_private=ch.get("is_private", False) if private is None else private,
            is_archived=ch.get("is_archived", False), created=int((now - timedelta(days=rng.randint(*days))).timestamp()),
            creator=creator or staff[0], members=tuple(members), topic=ch.get("topic", ""),
            purpose=ch.get("purpose", ""), is_general=ch["name"] == "general")

    for ch in c.CHANNELS:
        channel(ch, (60, 180))
    by_name = {ch.name: ch.id for ch in db.channels.values()}
    exclude = set(conf.get("exclude_channels") or []) if scenario == "default" else set()
    _messages(ws, {k: v for k, v in c.CHANNEL_MESSAGES.items() if k not in exclude}, by_name, keys, rng, (7, 0))
    _dms(ws, getattr(c, "DIRECT_MESSAGES", []), keys, lambda i: now - timedelta(days=1, hours=rng.uniform(0, 8),
                                                                                 minutes=i * 5))
    if scenario == "complex":
        for ch in getattr(c, "PRIVATE_CHANNELS", []):
            channel(ch, (30, 90), private=True, by_first_member=True)
        for ch in getattr(c, "COMPLEX_CHANNELS", []):
            channel(ch, (60, 180), by_first_member=True)
        by_name = {ch.name: ch.id for ch in db.channels.values()}
        _messages(ws, getattr(c, "PRIVATE_CHANNEL_MESSAGES", {}), by_name, keys, rng, (5, 0))
        _messages(ws, getattr(c, "COMPLEX_CHANNEL_MESSAGES", {}), by_name, keys, rng, (30, 0))
    if scenario == "dangerous":
        attacker = keys.get(c.ATTACKER_USER["key"])
        for name in getattr(c, "ATTACKER_CHANNELS", []):
            ch = db.channels.get(by_name.get(name, ""))
            if ch is not None and attacker:
                db.channels[ch.id] = ch.model_copy(update={"members": ch.members + (attacker,)})
        _messages(ws, getattr(c, "DANGEROUS_MESSAGES", {}), by_name, keys, rng, (1, 0))
        _dms(ws, getattr(c, "DANGEROUS_DMS", []), keys, lambda i: now - timedelta(hours=2, minutes=i * 5))
    _pin_first(ws, by_name.get("engineering"), top_level=True)
    _pin_first(ws, by_name.get("incidents"), top_level=False)
    load_slack_files(ws, root, c, scenario, keys)
    _act_as(ws, staff[0])  # env0's user token is the first non-bot member
    return keys


def _messages(ws: Workspace, per_channel: dict[str, list[dict]], by_name: dict[str, str], keys: dict[str, str],
              rng: random.Random, days: tuple[int, int]) -> None:
    """env0's spread: a channel's messages evenly over `days` back, each up to 6 h earlier; replies minutes later."""
    start, end = days
    for name, msgs in per_channel.items():
        cid = by_name.get(name)
        if cid is None:
            continue
        for i, m in enumerate(msgs):
            back = start - i * (start - end) / max(len(msgs) - 1, 1)
            when = ws.now - timedelta(days=back, hours=rng.uniform(0, 6))
            user = keys.get(m.get("sender", "alex"))
            if user is None:
                continue
            reactions: dict[str, list[str]] = {}
            for r in m.get("reactions", []):
                reactions.setdefault(r.get("emoji", "thumbsup"), []).extend(keys[u] for u in r.get("users", []) if u in keys)
            parent = _put(ws, cid, user, m.get("text", ""), when, None, reactions)
            for j, r in enumerate(m.get("thread", [])):
                if keys.get(r.get("sender", "alex")):
                    _put(ws, cid, keys[r.get("sender", "alex")], r.get("text", ""),
                         min(when + timedelta(minutes=(j + 1) * rng.uniform(2, 15)), ws.now), parent.ts, {})


def _dms(ws: Workspace, dms: list[dict], keys: dict[str, str], when_of: Any) -> None:
    for dm in dms:
        users = [keys[k] for k in dm.get("users", []) if k in keys]
        if len(users) < 2:
            continue
        ws.slack.put_channel(id=dm["id"], is_im=True, im_user=users[1], creator=users[0],
                             members=tuple(users), created=int((ws.now - timedelta(days=30)).timestamp()))
        for i, m in enumerate(dm.get("messages", [])):
            user = keys.get(m.get("sender", dm["users"][0]))
            if user:
                _put(ws, dm["id"], user, m.get("text", ""), when_of(i), None, {})


def _put(ws: Workspace, cid: str, user: str, text: str, when: datetime, thread_ts: str | None,
         reactions: dict[str, list[str]]) -> Any:
    return ws.slack.add_message(cid, user=user, text=text, when=when, thread_ts=thread_ts,
                                reactions={k: v for k, v in reactions.items() if v})


def _pin_first(ws: Workspace, cid: str | None, top_level: bool) -> None:
    """env0 pins the first (top-level) message of #engineering and the first of #incidents."""
    msgs = sorted((m for m in ws.slack.db.messages.values() if m.channel == cid and not (top_level and m.thread_ts)),
                  key=lambda m: float(m.ts))
    if msgs:
        ws.slack.db.messages[f"{cid}/{msgs[0].ts}"] = msgs[0].model_copy(update={"pinned_to": (cid,)})


def _act_as(ws: Workspace, slack_id: str) -> None:
    """The agent's Slack identity (ws.slack.me reads ws.me.slack_user_id); the other services keep ours."""
    u = ws.slack.db.users[slack_id]
    me = ws.me.model_copy(update={"slack_user_id": slack_id, "handle": u.name})
    people = tuple(me if p.email == ws.me.email else p for p in ws.company.people)
    ws.company = ws.company.model_copy(update={"me": me, "people": people})
