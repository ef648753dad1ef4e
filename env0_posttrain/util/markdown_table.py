"""Markdown from data: GitHub pipe tables through tabulate and text that stays text, for the report, the step
metadata and the model card.

Everything put into Markdown here is text unless the caller marks it `Markdown` (a link the project built
itself): an episode's error, a task id or a package's reason cannot become an image, a link, raw HTML or
emphasis, whichever renderer reads it (markdown-it for report.html, Dagster's UI for metadata). Cells are shown
as given otherwise (control characters escaped): numbers are formatted by the caller (tabulate's number parsing
is off, so "0.50" stays "0.50"), and a `|` or a line break inside a cell is escaped so it cannot break the row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tabulate import tabulate

from env0_posttrain.util.console import printable


class Markdown(str):
    """Text that is Markdown on purpose (built by the project from escaped parts); passed through unescaped."""


# Every character that can open an inline construct in CommonMark or GFM: code, emphasis, strikethrough, links and
# images, autolinks and raw HTML, entities, table cells; an `_` only where it can open or close emphasis (not
# inside a word, so task ids stay readable in the raw file). Block constructs need a line start, which md_text
# never leaves (line breaks become spaces); callers put its text after a label, never at the start of a block.
_INLINE = re.compile(r"[\\`*~\[\]<&|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(:)(?=//)|(?<=\bwww)(\.)")  # GFM links bare URLs: break `://` and `www.`
_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")


def md_text(value: Any) -> str:
    """`value` as inline Markdown that renders as exactly its text, on one line, control characters shown as
    escapes (report.md is read in terminals too); a `Markdown` value as it is."""
    if isinstance(value, Markdown):
        return str(value)
    text = printable(_BREAKS.sub(" ", str(value)))
    text = _INLINE.sub(lambda m: "\\" + m.group(), text)
    return _AUTOLINK.sub(lambda m: "\\" + m.group(), text)


def md_link(text: Any, href: str) -> Markdown:
    """A link the project made: its text is escaped; its target is the caller's, never taken from data."""
    return Markdown(f"[{md_text(text)}]({href})")


def _cell(value: Any) -> str:
    return str(value).replace("\n", " ") if isinstance(value, Markdown) else md_text(value)


def md_table(headers: Sequence[Any], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """`align`: one letter per column, "l" or "r" (default: the first left, the rest right)."""
    align = align or "l" + "r" * (len(headers) - 1)
    return tabulate([[_cell(c) for c in row] for row in rows], headers=[_cell(h) for h in headers], tablefmt="pipe",
                    disable_numparse=True, colalign=["right" if a == "r" else "left" for a in align])


def records_table(records: Sequence[Mapping[str, Any]], float_format: str = ".3f", empty: str = "(none)") -> str:
    """Rows of dicts, the first one's keys as columns; floats with `float_format`, all columns left-aligned."""
    if not records:
        return empty
    cols = list(records[0])
    fmt = lambda v: format(v, float_format) if isinstance(v, float) else str(v)  # noqa: E731
    return md_table(cols, [[fmt(r.get(c, "")) for c in cols] for r in records], align="l" * len(cols))
