"""Entity strings worth keeping whole in a tiny student's tokenizer.

A tiny model learns tool arguments as choices from a closed set it has seen many times; a
tokenizer that keeps each email, channel, label, title and fixed phrase as one token turns
"copy a 30-character string" into "pick one token". Everything here comes from the seeded
company or from the templates' pools, so train and eval share the same vocabulary.
"""

from __future__ import annotations

from typing import Any

from env0_posttrain.tasks import pools
from env0_posttrain.tasks.families.common import rfc3339, slot
from env0_posttrain.tasks.families.auth import APPS, ASP_NAMES, DEPARTMENTS, NEW_LAST
from env0_posttrain.tasks.families.docs import FIELDS, TYPOS


def vocabulary(ws: Any) -> list[str]:
    """Sorted, de-duplicated entity strings of the workspace and the task pools."""
    out: set[str] = set()
    for p in ws.directory:
        out.update({p.email, p.name, p.first, p.slack_user_id})
    out.update(u.primaryEmail for u in ws.admin.db.users.values())
    out.update(g.email for g in ws.admin.db.groups.values())
    for c in ws.slack.db.channels.values():
        if c.name:
            out.update({c.name, f"#{c.name}"})
    out.update(l.name for l in ws.gmail.db.labels.values())
    out.update(("STARRED", "UNREAD", "INBOX", "IMPORTANT", "TRASH"))
    out.update(f.name for f in ws.drive.db.files.values() if f.name != "My Drive")
    out.update(e.summary for e in ws.calendar.db.events.values() if e.summary)
    for pool in (pools.PHRASES, pools.SUBJECTS, pools.NOTE_SUBJECTS, pools.LABELS, pools.FILE_TITLES, pools.FOLDER_NAMES,
                 pools.DOC_TITLES, pools.DOC_LINES, pools.EVENT_TITLES, pools.LOCATIONS, pools.DAYS, pools.REACTIONS,
                 APPS, ASP_NAMES, NEW_LAST):
        out.update(pool)
    out.update(f"/{d}" for d in DEPARTMENTS)
    out.update(line for pair in FIELDS.values() for line in pair)
    out.update(word for pair in TYPOS for word in pair)
    out.update(("reader", "writer", "commenter", "MEMBER", "primary", "user"))
    for day in pools.DAYS:  # every meeting slot a template can name, as the API spells it
        for hour in pools.HOURS:
            for minutes in (30, 60):
                start, end = slot(ws, day, hour, minutes)
                out.update((rfc3339(start), rfc3339(end)))
    return sorted(x for x in out if x)


def entity_classes(ws: Any) -> dict[str, list[str]]:
    """Named groups of interchangeable entities (people's names, group addresses, titles, phrases, ...).

    Swapping an entity for another of its class keeps a request well-formed: the tiny student's
    pre-training uses that to read many more requests than the training tasks hold, so it learns
    to copy entities rather than to remember which ones each request had.
    """
    counts: dict[str, int] = {}
    for p in ws.directory:
        counts[p.first] = counts.get(p.first, 0) + 1
    groups = {
        "full_name": [p.name for p in ws.directory],
        "first_name": [f for f, n in counts.items() if n == 1],
        "person_email": [p.email for p in ws.directory],
        "group_email": [g.email for g in ws.admin.db.groups.values()],
        "channel": [f"#{c.name}" for c in ws.slack.db.channels.values() if c.name],
        "org_unit": [f"/{d}" for d in DEPARTMENTS],
        "department": list(DEPARTMENTS),
        "phrase": list(pools.PHRASES),
        "subject": [*pools.SUBJECTS, *pools.NOTE_SUBJECTS],
        "label": list(pools.LABELS),
        "file_title": list(pools.FILE_TITLES),
        "folder": list(pools.FOLDER_NAMES),
        "doc_title": list(pools.DOC_TITLES),
        "event_title": list(pools.EVENT_TITLES),
        "location": list(pools.LOCATIONS),
        "day": list(pools.DAYS),
    }
    return {k: sorted(set(g)) for k, g in groups.items() if len(set(g)) > 1}


# entity_classes' classes that linked_entities builds with their linked strings, or leaves out (meeting days).
_LINKED_OR_DERIVED = frozenset({"full_name", "first_name", "person_email", "org_unit", "department", "day"})


def linked_entities(ws: Any) -> dict[str, list[tuple[str, ...]]]:
    """Classes of interchangeable entities, each member the tuple of every string that names it, one role per
    position ("" where a member has no such string).

    A person is their full name, first name and last name (each when no one else has it), address and handle; a department
    is its name and its org unit. Renaming a whole member (all its strings at once) by a permutation of its class
    renames the world consistently, which is what lets a training conversation be rewritten with other entities and
    stay right: the call still copies what the request names. Meeting days are left out (the times a call writes are
    computed from them).
    """
    firsts: dict[str, int] = {}
    lasts: dict[str, int] = {}
    for p in ws.directory:
        firsts[p.first] = firsts.get(p.first, 0) + 1
        lasts[p.last] = lasts.get(p.last, 0) + 1
    people = [(p.name, p.first if firsts[p.first] == 1 else "", p.last if lasts[p.last] == 1 else "", p.email, p.handle)
              for p in ws.directory]
    singles = {k: [(s,) for s in v] for k, v in entity_classes(ws).items() if k not in _LINKED_OR_DERIVED}
    out = {"person": people, "department": [(d, f"/{d}") for d in DEPARTMENTS], **singles}
    return {k: v for k, v in out.items() if len(v) > 1}
