"""The line of a field in a YAML or TOML file, so an error can name file, line and field.

pydantic reports where a bad value sits as a path of keys (`lora.rank`); these map that path back
to the file's text. When the exact key is not in the file (a required field left out), the line of
its nearest enclosing key is given, and None when not even that is found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import yaml

Loc = Sequence[str | int]


def yaml_line(text: str, loc: Loc, first_line: int = 1) -> int | None:
    """1-based line of `loc` in YAML `text` (`first_line`: the line `text` starts on in its file)."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if k.value == str(key)), None)
            if match is None:
                break
            line, node = match[0].start_mark.line + first_line, match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + first_line
        else:
            break
    return line


_HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_.\-\"' ]+?)\s*=")


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(p.strip().strip("\"'") for p in dotted.split("."))


def toml_line(text: str, loc: Loc) -> int | None:
    """1-based line of `loc` in TOML `text`: a `[table]` header or a `key =` line (dotted keys too)."""
    want = tuple(str(p) for p in loc)
    table: tuple[str, ...] = ()
    best, best_len = None, 0
    for n, raw in enumerate(text.splitlines(), 1):
        if header := _HEADER.match(raw):
            table = _parts(header.group(1))
            path = table
        elif key := _KEY.match(raw):
            path = table + _parts(key.group(1))
        else:
            continue
        if len(path) > best_len and want[: len(path)] == path:
            best, best_len = n, len(path)
    return best
