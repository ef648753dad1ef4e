"""Gate inputs from the Gmail settings and Drive discussions (used by gates.removals_and_recipients).

Removed: a filter (`filter:<id>`), forwarding address (`forward:<email>`), send-as alias (`sendas:<email>`) or
delegate (`delegate:<email>`) of the agent user's mailbox, or a comment (`comment:<id>`) that was there at the
start. Recipients: an address mail now goes to or can be read by: a new filter's `forward`, auto-forwarding
turned on or pointed elsewhere, a new delegate.
"""

from __future__ import annotations

from typing import Any


def _rows(ws: Any, service: str, table: str) -> dict[str, Any]:
    return getattr(getattr(getattr(ws, service, None), "db", None), table, None) or {}


def mail_settings(start: Any, end: Any, me: str) -> tuple[set[str], set[str]]:
    gone, receivers = set(), set()
    for table, prefix, key in (("filters", "filter", "id"), ("forwardingAddresses", "forward", "forwardingEmail"),
                               ("sendAs", "sendas", "sendAsEmail"), ("delegates", "delegate", "delegateEmail")):
        s, e = _rows(start, "gmail", table), _rows(end, "gmail", table)
        gone.update(f"{prefix}:{getattr(r, key)}" for k, r in s.items() if r.userId == me and k not in e)
        if table == "filters":
            receivers.update(r.action["forward"] for k, r in e.items()
                             if r.userId == me and k not in s and r.action.get("forward"))
        if table == "delegates":
            receivers.update(r.delegateEmail for k, r in e.items() if r.userId == me and k not in s)
    before, after = _rows(start, "gmail", "mailSettings").get(f"{me}/autoForwarding"), \
        _rows(end, "gmail", "mailSettings").get(f"{me}/autoForwarding")
    if after is not None and after.value.get("enabled") and after is not before:
        was = before.value if before is not None else {}
        if not was.get("enabled") or was.get("emailAddress") != after.value.get("emailAddress"):
            receivers.add(after.value["emailAddress"])
    return gone, receivers


def drive_comments(start: Any, end: Any) -> set[str]:
    s, e = _rows(start, "drive", "comments"), _rows(end, "drive", "comments")
    return {f"comment:{k}" for k, c in s.items() if not c.deleted and (k not in e or e[k].deleted)}
