"""Entity-swapped copies of a training conversation: the same turns in a world whose entities are renamed.

A small student learns an argument slot either as a copy of what the request names or as a prior over the values it
saw there. A slot whose training rows show each value about once (people's addresses) is learnt as a copy; one that
shows a handful of values many times (the channel, the mail subject, the phrase) is learnt as a prior, and the student
then writes the most frequent value on every new request. Copies of a row with its entities renamed by a random
permutation of each class (`tasks.vocabulary.linked_entities`: every string naming a member renamed together, in the
request, the calls, the tool results and the answer) show each slot many values, always the one the request names.

A permutation renames the world consistently, so a copy is as right as its source: a tool result listing every
channel still lists each once, and a call still copies what the request says. Strings that name members of two
classes (a label and a department both called "Finance") are never renamed, nor is the system prompt.
"""

from __future__ import annotations

import copy
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

_EDGE_BEFORE = r"(?<![A-Za-z0-9_])"
_EDGE_AFTER = r"(?![A-Za-z0-9_])"


class EntitySwapper:
    """Renames entities by a seeded permutation of each class of `classes` (member tuples, one role per position)."""

    def __init__(self, classes: Mapping[str, Sequence[tuple[str, ...]]]) -> None:
        claims = Counter(s for members in classes.values() for m in members for s in set(m) if s)
        # Members are permuted only among those with the same roles present, so every string has a counterpart.
        self.groups: list[list[tuple[str, ...]]] = []
        for members in classes.values():
            by_roles: dict[tuple[bool, ...], list[tuple[str, ...]]] = {}
            for m in members:
                if all(claims[s] == 1 for s in m if s):
                    by_roles.setdefault(tuple(bool(s) for s in m), []).append(tuple(m))
            self.groups += [sorted(g) for g in by_roles.values() if len(g) > 1]
        forms = sorted({s for g in self.groups for m in g for s in m if s}, key=lambda s: (-len(s), s))
        self.pattern = re.compile(_EDGE_BEFORE + "(?:" + "|".join(map(re.escape, forms)) + ")" + _EDGE_AFTER) if forms else None

    def mapping(self, rng: random.Random) -> dict[str, str]:
        out: dict[str, str] = {}
        for group in self.groups:
            targets = list(group)
            rng.shuffle(targets)
            for member, target in zip(group, targets):
                out.update((a, b) for a, b in zip(member, target) if a)
        return out

    def rename(self, text: str, mapping: Mapping[str, str]) -> str:
        if self.pattern is None:
            return text
        return self.pattern.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)

    def token_mask(self, ids: Sequence[int], tokenizer: Any) -> list[bool] | None:
        """Which of `ids` spell (part of) an entity this swapper renames; None when the tokens decoded one by one
        do not join into the text decoded at once (a multi-byte character split across tokens)."""
        pieces = [tokenizer.decode([i]) for i in ids]
        text = "".join(pieces)
        if text != tokenizer.decode(list(ids)):
            return None
        marked = [False] * len(ids)
        if self.pattern is None:
            return marked
        spans = [m.span() for m in self.pattern.finditer(text)]
        start = 0
        for k, piece in enumerate(pieces):
            end = start + len(piece)
            marked[k] = any(s < end and start < e for s, e in spans)
            start = end
        return marked

    def swap(self, messages: Sequence[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]] | None:
        """A renamed copy of `messages` (harness form: arguments as JSON text or dicts), or None when it names no
        entity or the permutation drawn left every entity it names in place."""
        if self.pattern is None:
            return None
        mapping = self.mapping(rng)
        out = [m if m.get("role") == "system" else _renamed(copy.deepcopy(m), lambda s: self.rename(s, mapping))
               for m in messages]
        return None if out == list(messages) else out


def _renamed(value: Any, rename: Any) -> Any:
    if isinstance(value, str):
        return rename(value)
    if isinstance(value, list):
        return [_renamed(v, rename) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, rename) for k, v in value.items()}
    return value


def swapper_for_company(seed: int, _cache: dict[int, EntitySwapper] = {}) -> EntitySwapper:  # noqa: B006 - a cache
    """The swapper of the seeded company a generated task was built in (`task.recipe.seed`)."""
    if seed not in _cache:
        from env0_posttrain.tasks import company
        from env0_posttrain.tasks.vocabulary import linked_entities

        _cache[seed] = EntitySwapper(linked_entities(company(seed)))
    return _cache[seed]
