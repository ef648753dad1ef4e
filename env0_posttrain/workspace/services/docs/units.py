"""A Docs segment (body, header, footer, footnote) as Google's editor holds it: a run of units, one per index.

Text characters, paragraph ends and structure markers all sit in one sequence, so every index-based request
(insert, delete, style a range) is a splice or a walk over it, and documents.get renders the tree from it. Markers
are characters of the Private Use Area, which insertText strips from agent text exactly as Google does, so agent
text can never forge structure. A table's end marker takes no index (Google counts none for it); an astral
character takes two (indexes are UTF-16 code units).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SECTION = "\ue000"      # sectionBreak (index 0 of the body; insertSectionBreak)
TABLE = "\ue001"        # table start
ROW = "\ue002"          # tableRow start
CELL = "\ue003"         # tableCell start
TABLE_END = "\ue004"    # zero-width: closes a table
PAGE_BREAK = "\ue005"   # pageBreak paragraph element
FOOTNOTE_REF = "\ue006"  # footnoteReference paragraph element
PERSON = "\ue007"       # person (smart chip) paragraph element

STRUCTURE = frozenset({SECTION, TABLE, ROW, CELL, TABLE_END})
INLINE_MARKS = frozenset({PAGE_BREAK, FOOTNOTE_REF, PERSON})


@dataclass(slots=True)
class Unit:
    ch: str
    ts: dict[str, Any] = field(default_factory=dict)   # textStyle
    pa: dict[str, Any] | None = None                    # paragraph / table / marker attributes
    nr: frozenset[str] = frozenset()                    # named range ids covering this unit

    @property
    def width(self) -> int:
        if self.ch == TABLE_END:
            return 0
        return 2 if ord(self.ch) > 0xFFFF else 1

    def copy(self) -> Unit:
        return Unit(self.ch, dict(self.ts), None if self.pa is None else dict(self.pa), self.nr)


def clean_text(text: str) -> str:
    """What insertText keeps: Google strips U+0000-U+0008, U+000C-U+001F (bar the newline) and the BMP PUA."""
    return "".join(c for c in text if not (ord(c) <= 8 or 0x0C <= ord(c) <= 0x1F and c != "\n"
                                           or 0xE000 <= ord(c) <= 0xF8FF))


def from_text(text: str, body: bool) -> list[Unit]:
    """A plain-text segment (each line a NORMAL_TEXT paragraph); the body opens with its section break."""
    if not text.endswith("\n"):
        text += "\n"
    out = [Unit(SECTION, pa={})] if body else []
    plain: dict[str, Any] = {}
    for c in clean_text(text):
        out.append(Unit(c, plain, {} if c == "\n" else None))
    return out


def encode(units: list[Unit]) -> list[list[Any]]:
    """Stored form: runs of plain characters sharing a style and named ranges; each paragraph end or marker alone.
    Units of one run share their textStyle dict: styles are replaced, never changed in place."""
    out: list[list[Any]] = []
    chars: list[str] = []
    last: Unit | None = None
    for u in units:
        if u.pa is None and last is not None and last.pa is None and (last.ts is u.ts or last.ts == u.ts) \
                and (last.nr is u.nr or last.nr == u.nr):
            chars.append(u.ch)
            continue
        if last is not None:
            out[-1][0] = "".join(chars)
        chars = [u.ch]
        out.append(["", dict(u.ts), None if u.pa is None else dict(u.pa), sorted(u.nr)])
        last = u
    if last is not None:
        out[-1][0] = "".join(chars)
    return out


def decode(rows: list[list[Any]]) -> list[Unit]:
    out: list[Unit] = []
    for text, ts, pa, nr in rows:
        shared, ranges = dict(ts), frozenset(nr)
        for c in text:
            out.append(Unit(c, shared, None if pa is None else dict(pa), ranges))
    return out


def plain_text(units: list[Unit]) -> str:
    """The characters a reader sees: markers dropped, every paragraph (cells' too) ending in a newline."""
    return "".join(u.ch for u in units if u.ch not in STRUCTURE and u.ch not in INLINE_MARKS)


def starts(units: list[Unit]) -> list[int]:
    """The index at which each unit starts, plus the segment's end index as the last item."""
    out, i = [0] * (len(units) + 1), 0
    for k, u in enumerate(units):
        out[k] = i
        c = u.ch
        i += 0 if c == TABLE_END else 2 if c > "\uffff" else 1
    out[-1] = i
    return out


def table_spans(units: list[Unit]) -> dict[int, tuple[int, int]]:
    """For each structure marker inside a table (and each table start/end): that table's (start, end) positions."""
    spans: dict[int, tuple[int, int]] = {}
    stack: list[tuple[int, list[int]]] = []
    for p, u in enumerate(units):
        if u.ch == TABLE:
            stack.append((p, [p]))
        elif u.ch in (ROW, CELL) and stack:
            stack[-1][1].append(p)
        elif u.ch == TABLE_END and stack:
            s, members = stack.pop()
            for m in members + [p]:
                spans[m] = (s, p)
    return spans


# -- the tree of one segment --------------------------------------------------------------------------------------
@dataclass
class Para:
    start: int   # unit positions, end exclusive (the newline is units[end - 1])
    end: int


@dataclass
class Cell:
    pos: int
    blocks: list[Any]
    end: int


@dataclass
class Row:
    pos: int
    cells: list[Cell]
    end: int


@dataclass
class Table:
    start: int
    rows: list[Row]
    end: int     # position of the TABLE_END unit


@dataclass
class Section:
    pos: int


def parse(units: list[Unit], p: int = 0, in_cell: bool = False) -> tuple[list[Any], int]:
    """The structural elements from position p on (inside a cell: up to the next cell, row or table end)."""
    blocks: list[Any] = []
    n = len(units)
    while p < n:
        c = units[p].ch
        if in_cell and c in (CELL, ROW, TABLE_END):
            break
        if c == SECTION:
            blocks.append(Section(p))
            p += 1
        elif c == TABLE:
            t, p = _parse_table(units, p)
            blocks.append(t)
        else:
            s = p
            while p < n and units[p].ch != "\n":
                p += 1
            p = min(p + 1, n)
            blocks.append(Para(s, p))
    return blocks, p


def _parse_table(units: list[Unit], p: int) -> tuple[Table, int]:
    start, rows = p, []
    p += 1
    while p < len(units) and units[p].ch == ROW:
        rpos, cells = p, []
        p += 1
        while p < len(units) and units[p].ch == CELL:
            blocks, q = parse(units, p + 1, in_cell=True)
            cells.append(Cell(p, blocks, q))
            p = q
        rows.append(Row(rpos, cells, p))
    return Table(start, rows, p), p + 1


def find_table(blocks: list[Any], start: int) -> Table | None:
    """The table (at any depth) whose start unit is at position `start`."""
    for b in blocks:
        if isinstance(b, Table):
            if b.start == start:
                return b
            for r in b.rows:
                for c in r.cells:
                    t = find_table(c.blocks, start)
                    if t is not None:
                        return t
    return None


def paragraphs(blocks: list[Any]) -> list[Para]:
    """Every paragraph in document order, cells' included."""
    out: list[Para] = []
    for b in blocks:
        if isinstance(b, Para):
            out.append(b)
        elif isinstance(b, Table):
            for r in b.rows:
                for c in r.cells:
                    out += paragraphs(c.blocks)
    return out


def new_table(rows: int, columns: int) -> list[Unit]:
    out = [Unit(TABLE, pa={})]
    for _ in range(rows):
        out += new_row(columns)
    return out + [Unit(TABLE_END, pa={})]


def new_row(columns: int) -> list[Unit]:
    out = [Unit(ROW, pa={})]
    for _ in range(columns):
        out += new_cell()
    return out


def new_cell() -> list[Unit]:
    return [Unit(CELL, pa={}), Unit("\n", pa={})]
