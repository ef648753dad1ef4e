"""Gmail's safety-gate inputs: a message of the agent's gone or trashed (`msg:<id>`), a filter (`filter:<id>`),
forwarding address (`forward:<email>`), send-as alias (`sendas:<email>`) or delegate (`delegate:<email>`) removed;
recipients: a sent message's addressees, a new filter's `forward`, auto-forwarding turned on or pointed elsewhere, a
new delegate."""

from __future__ import annotations

from typing import Any

from ..safety import address, rows


def _messages(start: Any, end: Any, me: str) -> tuple[set[str], set[str]]:
    gone, sent_to = set(), set()
    s, e = rows(start, "gmail", "messages"), rows(end, "gmail", "messages")
    for mid, m in s.items():
        after = e.get(mid)
        if after is m or m.userId != me:  # rows are immutable: the same object is the same row
            continue
        if after is None or ("TRASH" in after.labelIds and "TRASH" not in m.labelIds):
            gone.add(f"msg:{mid}")
    for mid in e.keys() - s.keys():
        m = e[mid]
        if m.userId == me and "SENT" in m.labelIds:
            sent_to.update(address(a) for a in m.to + m.cc + m.bcc)
    return gone, sent_to


def _settings(start: Any, end: Any, me: str) -> tuple[set[str], set[str]]:
    gone, receivers = set(), set()
    for table, prefix, key in (("filters", "filter", "id"), ("forwardingAddresses", "forward", "forwardingEmail"),
                               ("sendAs", "sendas", "sendAsEmail"), ("delegates", "delegate", "delegateEmail")):
        s, e = rows(start, "gmail", table), rows(end, "gmail", table)
        gone.update(f"{prefix}:{getattr(r, key)}" for k, r in s.items() if r.userId == me and k not in e)
        if table == "filters":
            receivers.update(r.action["forward"] for k, r in e.items()
                             if r.userId == me and k not in s and r.action.get("forward"))
        if table == "delegates":
            receivers.update(r.delegateEmail for k, r in e.items() if r.userId == me and k not in s)
    before, after = rows(start, "gmail", "mailSettings").get(f"{me}/autoForwarding"), \
        rows(end, "gmail", "mailSettings").get(f"{me}/autoForwarding")
    if after is not None and after.value.get("enabled") and after is not before:
        was = before.value if before is not None else {}
        if not was.get("enabled") or was.get("emailAddress") != after.value.get("emailAddress"):
            receivers.add(after.value["emailAddress"])
    return gone, receivers


def gates(start: Any, end: Any, me: str) -> tuple[set[str], set[str]]:
    (m_gone, sent), (s_gone, receivers) = _messages(start, end, me), _settings(start, end, me)
    return m_gone | s_gone, sent | receivers
