"""Markdown (GitHub pipe) tables through tabulate, for the report, the step metadata and the model card.

Cells are shown as given: numbers are formatted by the caller (tabulate's number parsing is off, so
"0.50" stays "0.50"), and a `|` or a line break inside a cell is escaped so it cannot break the row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tabulate import tabulate


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


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

