"""Markdown tables come from tabulate: cells as text (escaped: util/test_inert_text.py), pipes escaped, and markdown-it
reads them as tables."""

from __future__ import annotations

from markdown_it import MarkdownIt

from env0_posttrain.util.markdown_table import md_table, records_table


def _parsed(table: str) -> list[list[str]]:
    tokens = MarkdownIt("commonmark", {"html": False}).enable("table").parse(table)
    rows, row = [], None
    for t in tokens:
        if t.type == "tr_open":
            row = []
        elif t.type == "inline" and row is not None:
            row.append(t.content)
        elif t.type == "tr_close":
            rows.append(row)
            row = None
    return rows


def test_cells_are_kept_as_given_and_a_pipe_cannot_split_a_row():
    table = md_table(["task", "reward", "note"], [["a|b", "0.50", "two\nlines"], ["c", 1, ""]])
    assert _parsed(table) == [["task", "reward", "note"], ["a|b", "0.50", "two lines"], ["c", "1", ""]]
    assert table.splitlines()[1].replace("-", "") == "|:|:|:|"  # first column left, the rest right


def test_alignment_is_per_column_as_asked():
    assert md_table(["a", "b"], [["x", "y"]], "rl").splitlines()[1] == "|----:|:----|"
    assert md_table(["a", "b"], [["x", "y"]], "ll").splitlines()[1] == "|:----|:----|"


def test_records_table_formats_floats_and_says_when_there_is_nothing():
    assert records_table([]) == "(none)"
    table = records_table([{"reason": "too long", "rows": 3, "share": 0.25}, {"reason": "empty", "rows": 1}])
    assert _parsed(table) == [["reason", "rows", "share"], ["too long", "3", "0.250"], ["empty", "1", ""]]
