"""documents.get: the structural elements Google returns (paragraphs, tables, section breaks with start/end
indexes, text runs split where the style changes), rendered from a segment's units."""

from __future__ import annotations

from typing import Any

from .units import FOOTNOTE_REF, PAGE_BREAK, PERSON, Cell, Para, Section, Table, Unit, parse, starts

SECTION_STYLE = {"columnSeparatorStyle": "NONE", "contentDirection": "LEFT_TO_RIGHT", "sectionType": "CONTINUOUS"}
PARA_DEFAULT = {"namedStyleType": "NORMAL_TEXT", "direction": "LEFT_TO_RIGHT"}
CELL_DEFAULT = {"rowSpan": 1, "columnSpan": 1, "backgroundColor": {}, "paddingLeft": {"magnitude": 5, "unit": "PT"},
                "paddingRight": {"magnitude": 5, "unit": "PT"}, "paddingTop": {"magnitude": 5, "unit": "PT"},
                "paddingBottom": {"magnitude": 5, "unit": "PT"}, "contentAlignment": "TOP"}
ROW_DEFAULT = {"minRowHeight": {"unit": "PT"}}
COLUMN_DEFAULT = {"widthType": "EVENLY_DISTRIBUTED"}


def _span(d: dict[str, Any], s: int, e: int) -> dict[str, Any]:
    """Google leaves out a zero startIndex (proto3 default)."""
    return ({"startIndex": s} if s else {}) | {"endIndex": e} | d


def content(units: list[Unit], footnote_numbers: dict[str, str]) -> list[dict[str, Any]]:
    idx = starts(units)
    blocks, _ = parse(units)
    return _blocks(units, idx, blocks, footnote_numbers)


def _blocks(units: list[Unit], idx: list[int], blocks: list[Any], fn: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for b in blocks:
        if isinstance(b, Section):
            out.append(_span({"sectionBreak": {"sectionStyle": SECTION_STYLE | (units[b.pos].pa or {})}},
                             idx[b.pos], idx[b.pos + 1]))
        elif isinstance(b, Para):
            out.append(_span({"paragraph": paragraph(units, idx, b, fn)}, idx[b.start], idx[b.end]))
        elif isinstance(b, Table):
            out.append(_span({"table": _table(units, idx, b, fn)}, idx[b.start], idx[b.end]))
    return out


def paragraph(units: list[Unit], idx: list[int], p: Para, fn: dict[str, str]) -> dict[str, Any]:
    elements: list[dict[str, Any]] = []
    run: list[int] = []

    def flush() -> None:
        if run:
            text = "".join(units[q].ch for q in run)
            elements.append(_span({"textRun": {"content": text, "textStyle": dict(units[run[0]].ts)}},
                                  idx[run[0]], idx[run[-1] + 1]))
            run.clear()

    for q in range(p.start, p.end):
        u = units[q]
        if u.ch in (PAGE_BREAK, FOOTNOTE_REF, PERSON):
            flush()
            pa = u.pa or {}
            if u.ch == PAGE_BREAK:
                el = {"pageBreak": {"textStyle": dict(u.ts)}}
            elif u.ch == FOOTNOTE_REF:
                el = {"footnoteReference": {"footnoteId": pa.get("footnoteId", ""),
                                            "footnoteNumber": fn.get(pa.get("footnoteId", ""), ""),
                                            "textStyle": dict(u.ts)}}
            else:
                el = {"person": {"personId": pa.get("personId", ""), "personProperties": pa.get("personProperties", {}),
                                 "textStyle": dict(u.ts)}}
            elements.append(_span(el, idx[q], idx[q + 1]))
        elif run and units[run[0]].ts != u.ts:
            flush()
            run.append(q)
        else:
            run.append(q)
    flush()
    pa = units[p.end - 1].pa or {}
    out: dict[str, Any] = {"elements": elements,
                           "paragraphStyle": PARA_DEFAULT | {k: v for k, v in pa.items() if k != "bullet"}}
    if "bullet" in pa:
        b = pa["bullet"]
        out["bullet"] = {"listId": b["listId"], "textStyle": {}} | (
            {"nestingLevel": b["nestingLevel"]} if b.get("nestingLevel") else {})
    return out


def _table(units: list[Unit], idx: list[int], t: Table, fn: dict[str, str]) -> dict[str, Any]:
    tpa = units[t.start].pa or {}
    ncols = max((len(r.cells) for r in t.rows), default=0)
    cols = tpa.get("columns") or []
    pinned = tpa.get("pinned", 0)
    rows = []
    for i, r in enumerate(t.rows):
        rs = ROW_DEFAULT | (units[r.pos].pa or {}) | ({"tableHeader": True} if i < pinned else {})
        rows.append(_span({"tableCells": [_cell(units, idx, c, fn) for c in r.cells], "tableRowStyle": rs},
                          idx[r.pos], idx[r.end]))
    props = [COLUMN_DEFAULT | (cols[i] if i < len(cols) and cols[i] else {}) for i in range(ncols)]
    return {"rows": len(t.rows), "columns": ncols, "tableRows": rows, "tableStyle": {"tableColumnProperties": props}}


def _cell(units: list[Unit], idx: list[int], c: Cell, fn: dict[str, str]) -> dict[str, Any]:
    return _span({"content": _blocks(units, idx, c.blocks, fn),
                  "tableCellStyle": CELL_DEFAULT | (units[c.pos].pa or {})}, idx[c.pos], idx[c.end])


def _named(kind: str, size: float, bold: bool = False) -> dict[str, Any]:
    ts: dict[str, Any] = {"fontSize": {"magnitude": size, "unit": "PT"},
                          "weightedFontFamily": {"fontFamily": "Arial", "weight": 400}}
    if bold:
        ts["bold"] = True
    return {"namedStyleType": kind, "textStyle": ts,
            "paragraphStyle": {"namedStyleType": kind, "direction": "LEFT_TO_RIGHT", "alignment": "START"}}


NAMED_STYLES = {"styles": [_named("NORMAL_TEXT", 11), _named("TITLE", 26), _named("SUBTITLE", 15),
                           _named("HEADING_1", 20), _named("HEADING_2", 16), _named("HEADING_3", 14),
                           _named("HEADING_4", 12), _named("HEADING_5", 11), _named("HEADING_6", 11)]}
