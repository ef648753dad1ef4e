"""documents.batchUpdate's requests, applied to an editable copy of a document (all or nothing: the caller stores
the copy only when every request succeeded). Each request either does what Google's does to the structure and
indexes, or fails with the 400 Google answers; the kinds this workspace cannot serve are refused by name."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ...errors import ApiError, bad_request
from .units import (
    CELL, FOOTNOTE_REF, PAGE_BREAK, PERSON, ROW, SECTION, STRUCTURE, TABLE, TABLE_END, Table, Unit, clean_text,
    find_table, new_cell, new_row, new_table, parse, paragraphs, starts, table_spans,
)

TEXT_FIELDS = frozenset({"backgroundColor", "baselineOffset", "bold", "fontSize", "foregroundColor", "italic",
                         "link", "smallCaps", "strikethrough", "underline", "weightedFontFamily"})
PARA_FIELDS = frozenset({"alignment", "avoidWidowAndOrphan", "borderBetween", "borderBottom", "borderLeft",
                         "borderRight", "borderTop", "direction", "indentEnd", "indentFirstLine", "indentStart",
                         "keepLinesTogether", "keepWithNext", "lineSpacing", "namedStyleType", "pageBreakBefore",
                         "shading", "spaceAbove", "spaceBelow", "spacingMode", "tabStops"})
DOC_FIELDS = frozenset({"background", "documentFormat", "flipPageOrientation", "marginBottom", "marginFooter",
                        "marginHeader", "marginLeft", "marginRight", "marginTop", "pageNumberStart", "pageSize",
                        "useCustomHeaderFooterMargins", "useEvenPageHeaderFooter", "useFirstPageHeaderFooter"})
SECTION_FIELDS = frozenset({"columnProperties", "columnSeparatorStyle", "contentDirection", "flipPageOrientation",
                            "marginBottom", "marginFooter", "marginHeader", "marginLeft", "marginRight", "marginTop",
                            "pageNumberStart", "sectionType", "useFirstPageHeaderFooter"})
CELL_FIELDS = frozenset({"backgroundColor", "borderBottom", "borderLeft", "borderRight", "borderTop",
                         "contentAlignment", "paddingBottom", "paddingLeft", "paddingRight", "paddingTop"})
ROW_FIELDS = frozenset({"minRowHeight", "preventOverflow", "tableHeader"})
COLUMN_FIELDS = frozenset({"width", "widthType"})
NAMED_STYLES = ("NORMAL_TEXT", "TITLE", "SUBTITLE", "HEADING_1", "HEADING_2", "HEADING_3", "HEADING_4", "HEADING_5",
                "HEADING_6")
PRESETS = ("BULLET_DISC_CIRCLE_SQUARE", "BULLET_DIAMONDX_ARROW3D_SQUARE", "BULLET_CHECKBOX",
           "BULLET_ARROW_DIAMOND_DISC", "BULLET_STAR_CIRCLE_SQUARE", "BULLET_ARROW3D_CIRCLE_SQUARE",
           "BULLET_LEFTTRIANGLE_DIAMOND_DISC", "BULLET_DIAMONDX_HOLLOWDIAMOND_SQUARE", "BULLET_DIAMOND_CIRCLE_SQUARE",
           "NUMBERED_DECIMAL_ALPHA_ROMAN", "NUMBERED_DECIMAL_ALPHA_ROMAN_PARENS", "NUMBERED_DECIMAL_NESTED",
           "NUMBERED_UPPERALPHA_ALPHA_ROMAN", "NUMBERED_UPPERROMAN_UPPERALPHA_DECIMAL",
           "NUMBERED_ZERODECIMAL_ALPHA_ROMAN")
_GLYPHS = {"DISC": "●", "CIRCLE": "○", "SQUARE": "■", "DIAMONDX": "❖", "ARROW3D": "➢", "CHECKBOX": "☐",
           "ARROW": "→", "DIAMOND": "◆", "STAR": "★", "LEFTTRIANGLE": "◄", "HOLLOWDIAMOND": "◇"}
_NUMBERS = {"DECIMAL": "DECIMAL", "ZERODECIMAL": "ZERO_DECIMAL", "ALPHA": "ALPHA", "UPPERALPHA": "UPPER_ALPHA",
            "ROMAN": "ROMAN", "UPPERROMAN": "UPPER_ROMAN"}
# Request kinds of the Docs v1 discovery document this workspace refuses, with why (docs/API-PARITY.md lists them).
REFUSED = {
    "addDocumentTab": "documents here have a single tab", "deleteTab": "documents here have a single tab",
    "updateDocumentTabProperties": "documents here have a single tab",
    "insertDate": "date chips are not modelled", "insertRichLink": "rich links are not modelled",
    "insertDropdown": "dropdowns are not modelled", "createDropdownDefinition": "dropdowns are not modelled",
    "deleteDropdownDefinition": "dropdowns are not modelled",
    "updateDropdownDefinitionProperties": "dropdowns are not modelled",
    "updateDropdownProperties": "dropdowns are not modelled", "updateNamedStyle": "named styles are fixed here",
    "insertComment": "Docs comments go through the Drive comments API here",
    "addCommentReply": "Docs comments go through the Drive comments API here",
    "deleteComment": "Docs comments go through the Drive comments API here",
    "deleteCommentReply": "Docs comments go through the Drive comments API here",
    "updateCommentPost": "Docs comments go through the Drive comments API here",
}
HANDLED = ("insertText", "deleteContentRange", "replaceAllText", "insertTable", "insertTableRow", "insertTableColumn",
           "deleteTableRow", "deleteTableColumn", "mergeTableCells", "unmergeTableCells", "updateTableCellStyle",
           "updateTableColumnProperties", "updateTableRowStyle", "pinTableHeaderRows", "updateTextStyle",
           "updateParagraphStyle", "createParagraphBullets", "deleteParagraphBullets", "createNamedRange",
           "deleteNamedRange", "replaceNamedRangeContent", "createHeader", "createFooter", "deleteHeader",
           "deleteFooter", "createFootnote", "insertPageBreak", "insertSectionBreak", "updateDocumentStyle",
           "updateSectionStyle", "insertPerson", "insertInlineImage", "replaceImage", "deletePositionedObject",
           "acceptSuggestion", "rejectSuggestion", "deleteSuggestion")
MAX_TABLE_CELLS = 20_000
DOC_LIMIT = 1_020_000  # Google Docs' maximum document size, in characters


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class Editor:
    """One document's segments (body "" plus headers, footers, footnotes) and document-level state, decoded."""

    def __init__(self, doc_id: str, segments: dict[str, list[Unit]], kinds: dict[str, str], lists: dict[str, Any],
                 names: dict[str, str], style: dict[str, Any], serial: int, people: Any = None):
        self.doc_id, self.seg, self.kinds, self.lists, self.names = doc_id, segments, kinds, lists, names
        self.style, self.serial, self.people = style, serial, people
        self.where = ""

    # -- helpers ---------------------------------------------------------------------------------------------------
    def err(self, msg: str) -> ApiError:
        return bad_request(f"{self.where}: {msg}", "badRequest")

    def new_id(self, prefix: str) -> str:
        self.serial += 1
        h = hashlib.sha256(f"{self.doc_id}/{self.serial}".encode()).hexdigest()
        return f"{prefix}{h[:12]}"

    def segment(self, sid: Any, body_only: bool = False) -> list[Unit]:
        sid = sid or ""
        if not isinstance(sid, str) or sid not in self.seg:
            raise self.err(f"The segment ID {sid!r} was not found in the document.")
        if body_only and sid:
            raise self.err("This request can only be applied to the document body.")
        return self.seg[sid]

    def _tab(self, arg: dict[str, Any]) -> None:
        if arg.get("tabId") not in (None, "", "t.0"):
            raise self.err(f"The tab ID {arg.get('tabId')!r} was not found in the document.")

    def insert_pos(self, arg: dict[str, Any], body_only: bool = False) -> tuple[str, int]:
        """A `location` or `endOfSegmentLocation`: (segment id, unit position to insert before)."""
        if isinstance(arg.get("endOfSegmentLocation"), dict):
            loc = arg["endOfSegmentLocation"]
            self._tab(loc)
            units = self.segment(loc.get("segmentId"), body_only)
            return loc.get("segmentId") or "", len(units) - 1
        loc = arg.get("location")
        if not isinstance(loc, dict) or not _int(loc.get("index")):
            raise self.err("location.index or endOfSegmentLocation is required.")
        self._tab(loc)
        sid = loc.get("segmentId") or ""
        units = self.segment(sid, body_only)
        idx = starts(units)
        index = loc["index"]
        if index < 0 or index >= idx[-1]:
            raise self.err(f"Index {index} must be less than the end index of the referenced segment, {idx[-1]}.")
        pos = next((p for p, u in enumerate(units) if idx[p] == index and u.width), None)
        if pos is None:
            raise self.err(f"Index {index} splits a surrogate pair.")
        if units[pos].ch in STRUCTURE:
            raise self.err("The insertion index must be inside the bounds of an existing paragraph. You can still "
                           "create new paragraphs by inserting newlines.")
        return sid, pos

    def range_pos(self, rng: Any, allow_empty: bool = False) -> tuple[str, int, int]:
        """A Range: (segment id, first unit position, end position exclusive)."""
        if not isinstance(rng, dict) or not _int(rng.get("startIndex")) or not _int(rng.get("endIndex")):
            raise self.err("range.startIndex and range.endIndex are required.")
        self._tab(rng)
        sid = rng.get("segmentId") or ""
        units = self.segment(sid)
        idx = starts(units)
        s, e = rng["startIndex"], rng["endIndex"]
        if s > e or (s == e and not allow_empty):
            raise self.err("The range should not be empty." if s == e else
                           f"The start index {s} must be less than the end index {e}.")
        if s < 0 or e > idx[-1]:
            raise self.err(f"Index {e - 1} must be less than the end index of the referenced segment, {idx[-1]}.")
        p0 = next((p for p, u in enumerate(units) if idx[p] >= s and u.width), len(units))
        p1 = next((p for p, u in enumerate(units) if idx[p] >= e and u.width), len(units))
        if idx[p0] != s or (p1 < len(units) and idx[p1] != e):
            raise self.err("The range cannot split a surrogate pair.")
        return sid, p0, p1

    def _para_end(self, units: list[Unit], pos: int) -> Unit:
        p = pos
        while units[p].ch != "\n":
            p += 1
        return units[p]

    def _in_table(self, units: list[Unit], pos: int) -> bool:
        depth = 0
        for u in units[:pos]:
            depth += u.ch == TABLE
            depth -= u.ch == TABLE_END
        return depth > 0

    def splice_in(self, units: list[Unit], pos: int, new: list[Unit]) -> None:
        """Insert units before `pos`; text takes the style of the text before it, new paragraphs the style of the
        paragraph they split, and named ranges grow over text inserted strictly inside them."""
        prev = units[pos - 1] if pos > 0 and units[pos - 1].ch not in STRUCTURE | {"\n"} else None
        ts = {k: v for k, v in (prev or units[pos]).ts.items() if k != "link"}
        nr = (units[pos - 1].nr & units[pos].nr) if pos > 0 else frozenset()
        para = self._para_end(units, pos).pa or {}
        for u in new:
            if u.ch == "\n" and u.pa is None:
                u.pa = dict(para)
            if u.ch not in STRUCTURE:
                u.ts = {**ts, **u.ts} if u.ts else ts
            u.nr = u.nr | nr if u.nr else nr
        units[pos:pos] = new

    def check_delete(self, units: list[Unit], p0: int, p1: int) -> None:
        if p0 == 0 and units[0].ch == SECTION:
            raise self.err("The range cannot include the section break at the start of the body.")
        if p1 >= len(units):
            raise self.err("The range cannot include the newline character at the end of the segment.")
        spans = table_spans(units)
        for p in range(p0, p1):
            if p in spans:
                s, e = spans[p]
                if not (p0 <= s and e < p1):
                    raise self.err("Invalid deletion range. The range must include the whole table or stay "
                                   "inside a single table cell.")
            if units[p].ch == "\n" and units[p + 1].ch in (CELL, ROW, TABLE_END) and not any(
                    q in spans and spans[q][0] >= p0 and spans[q][1] < p1 for q in (p + 1,)):
                raise self.err("The range cannot include the newline character at the end of a table cell.")
        if units[p1].ch == TABLE and p1 > 0 and units[p1 - 1].ch == "\n" and p0 <= p1 - 1:
            raise self.err("The range cannot delete the newline character before a table.")

    def _deletable(self, units: list[Unit], p0: int, p1: int) -> bool:
        try:
            self.check_delete(units, p0, p1)
        except ApiError:
            return False
        return True

    # -- text ----------------------------------------------------------------------------------------------------
    def insertText(self, a: dict[str, Any]) -> dict[str, Any]:
        t = a.get("text")
        if not isinstance(t, str):
            raise self.err("text is required.")
        sid, pos = self.insert_pos(a)
        t = clean_text(t)
        if sum(len(units) for units in self.seg.values()) + len(t) > DOC_LIMIT:
            raise self.err(f"The document would exceed the maximum size of {DOC_LIMIT:,} characters.")
        if t:
            self.splice_in(self.seg[sid], pos, [Unit(c, pa=None) for c in t])
        return {}

    def deleteContentRange(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, p0, p1 = self.range_pos(a.get("range"))
        units = self.seg[sid]
        self.check_delete(units, p0, p1)
        first_nl = next((u for u in units[p0:p1] if u.ch == "\n"), None)
        mid_paragraph = p0 > 0 and units[p0 - 1].ch not in STRUCTURE | {"\n"}
        del units[p0:p1]
        if first_nl is not None and mid_paragraph:  # paragraphs merged: the first one's style and bullet stay
            self._para_end(units, p0).pa = dict(first_nl.pa or {})
        return {}

    def replaceAllText(self, a: dict[str, Any]) -> dict[str, Any]:
        ct, repl = a.get("containsText"), a.get("replaceText", "")
        needle = ct.get("text") if isinstance(ct, dict) else None
        if not isinstance(needle, str) or not needle or not isinstance(repl, str):
            raise self.err("containsText.text is required.")
        flags = 0 if ct.get("matchCase", False) else re.IGNORECASE
        pat = re.compile(re.escape(needle), flags)
        repl = clean_text(repl)
        n = 0
        for units in self.seg.values():
            s = "".join(u.ch for u in units)
            for m in reversed(list(pat.finditer(s))):
                if any(c in STRUCTURE for c in m.group(0)) or not self._deletable(units, m.start(), m.end()):
                    continue
                first = units[m.start()]
                del units[m.start():m.end()]
                units[m.start():m.start()] = [Unit(c, first.ts, {} if c == "\n" else None, first.nr)
                                              for c in repl]
                n += 1
        return {"replaceAllText": {"occurrencesChanged": n} if n else {}}

    # -- styles --------------------------------------------------------------------------------------------------
    def _fields(self, a: dict[str, Any], style_key: str, allowed: frozenset[str]) -> tuple[dict[str, Any], set[str]]:
        style, fields = a.get(style_key), a.get("fields")
        if not isinstance(style, dict):
            raise self.err(f"{style_key} is required.")
        if not isinstance(fields, str) or not fields.strip():
            raise self.err("At least one field must be listed in 'fields'. (Use '*' to indicate all fields.)")
        names = {f.strip() for f in fields.split(",") if f.strip()}
        if names == {"*"}:
            names = set(allowed)
        bad = sorted(n for n in names if n.split(".")[0] not in allowed)
        if bad:
            raise bad_request(f"{self.where}: Invalid field mask. Unknown field '{bad[0]}' in {style_key}.",
                              "badRequest")
        unknown = sorted(k for k in style if k not in allowed)
        if unknown:
            raise bad_request(f"Invalid JSON payload received. Unknown name \"{unknown[0]}\" at "
                              f"'{self.where.removeprefix('Invalid ')}.{style_key}': "
                              "Cannot find field.", "badRequest")
        return style, {n.split(".")[0] for n in names}

    @staticmethod
    def _set(target: dict[str, Any], style: dict[str, Any], fields: set[str]) -> dict[str, Any]:
        out = dict(target)
        for f in fields:
            if f in style and style[f] is not None:
                out[f] = style[f]
            else:
                out.pop(f, None)
        return out

    def updateTextStyle(self, a: dict[str, Any]) -> dict[str, Any]:
        style, fields = self._fields(a, "textStyle", TEXT_FIELDS)
        for f in ("bold", "italic", "underline", "strikethrough", "smallCaps"):
            if f in style and not isinstance(style[f], bool):
                raise self.err(f"textStyle.{f} must be a boolean.")
        if "baselineOffset" in style and style["baselineOffset"] not in ("NONE", "SUPERSCRIPT", "SUBSCRIPT"):
            raise self.err("textStyle.baselineOffset is invalid.")
        sid, p0, p1 = self.range_pos(a.get("range"))
        for u in self.seg[sid][p0:p1]:
            if u.ch not in STRUCTURE:
                u.ts = self._set(u.ts, style, fields)
        return {}

    def _paras(self, sid: str, p0: int, p1: int) -> list[Unit]:
        units = self.seg[sid]
        blocks, _ = parse(units)
        return [units[p.end - 1] for p in paragraphs(blocks) if p.start < max(p1, p0 + 1) and p.end > p0]

    def updateParagraphStyle(self, a: dict[str, Any]) -> dict[str, Any]:
        style, fields = self._fields(a, "paragraphStyle", PARA_FIELDS)
        if "namedStyleType" in style and style["namedStyleType"] not in NAMED_STYLES:
            raise self.err(f"Invalid value for paragraphStyle.namedStyleType: {style['namedStyleType']!r}.")
        if style.get("alignment") not in (None, "START", "CENTER", "END", "JUSTIFIED"):
            raise self.err(f"Invalid value for paragraphStyle.alignment: {style['alignment']!r}.")
        sid, p0, p1 = self.range_pos(a.get("range"))
        for nl in self._paras(sid, p0, p1):
            pa = self._set(nl.pa or {}, style, fields)
            kind = pa.get("namedStyleType", "NORMAL_TEXT")
            if kind == "NORMAL_TEXT":
                pa.pop("headingId", None)
            elif "headingId" not in pa:
                pa["headingId"] = self.new_id("h.")
            if pa.get("namedStyleType") == "NORMAL_TEXT":
                pa.pop("namedStyleType")
            nl.pa = pa
        return {}

    # -- lists ---------------------------------------------------------------------------------------------------
    def createParagraphBullets(self, a: dict[str, Any]) -> dict[str, Any]:
        preset = a.get("bulletPreset")
        if preset not in PRESETS:
            raise self.err(f"Invalid bulletPreset: {preset!r}.")
        sid, p0, p1 = self.range_pos(a.get("range"))
        units = self.seg[sid]
        list_id = self.new_id("kix.")
        self.lists[list_id] = {"listProperties": {"nestingLevels": _levels(preset)}}
        blocks, _ = parse(units)
        for p in reversed([p for p in paragraphs(blocks) if p.start < p1 and p.end > p0]):
            tabs = 0
            while units[p.start + tabs].ch == "\t":
                tabs += 1
            nl = units[p.end - 1]
            level = self.lists[list_id]["listProperties"]["nestingLevels"][min(tabs, 8)]
            nl.pa = {**(nl.pa or {}), "bullet": {"listId": list_id, "nestingLevel": min(tabs, 8)},
                     "indentFirstLine": level["indentFirstLine"], "indentStart": level["indentStart"]}
            del units[p.start:p.start + tabs]
        return {}

    def deleteParagraphBullets(self, a: dict[str, Any]) -> dict[str, Any]:
        """The bullet goes; its indent stays, so the nesting stays visible (as Google keeps it)."""
        sid, p0, p1 = self.range_pos(a.get("range"))
        for nl in self._paras(sid, p0, p1):
            nl.pa = {k: v for k, v in (nl.pa or {}).items() if k != "bullet"}
        return {}

    # -- named ranges --------------------------------------------------------------------------------------------
    def createNamedRange(self, a: dict[str, Any]) -> dict[str, Any]:
        name = a.get("name")
        if not isinstance(name, str) or not 1 <= len(name.encode("utf-16-le")) // 2 <= 256:
            raise self.err("The name must be between 1 and 256 characters (UTF-16 code units).")
        sid, p0, p1 = self.range_pos(a.get("range"))
        rid = self.new_id("kix.")
        for u in self.seg[sid][p0:p1]:
            u.nr = u.nr | {rid}
        self.names[rid] = name
        return {"createNamedRange": {"namedRangeId": rid}}

    def _range_ids(self, a: dict[str, Any], id_key: str, name_key: str) -> list[str]:
        rid, name = a.get(id_key), a.get(name_key)
        if (rid is None) == (name is None):
            raise self.err(f"Exactly one of {id_key} or {name_key} must be set.")
        if rid is not None:
            if rid not in self.names:
                raise self.err(f"The named range with ID {rid!r} was not found.")
            return [rid]
        return [k for k, v in self.names.items() if v == name]

    def deleteNamedRange(self, a: dict[str, Any]) -> dict[str, Any]:
        for rid in self._range_ids(a, "namedRangeId", "name"):
            self._drop_range(rid)
        return {}

    def _drop_range(self, rid: str) -> None:
        self.names.pop(rid, None)
        for units in self.seg.values():
            for u in units:
                if rid in u.nr:
                    u.nr = u.nr - {rid}

    def replaceNamedRangeContent(self, a: dict[str, Any]) -> dict[str, Any]:
        text = a.get("text")
        if not isinstance(text, str):
            raise self.err("text is required.")
        ids = self._range_ids(a, "namedRangeId", "namedRangeName")
        if not ids:
            raise self.err(f"No named range named {a.get('namedRangeName')!r} exists.")
        for rid in ids:
            spans = [(sid, s, e) for sid, units in self.seg.items() for s, e in _spans(units, rid)]
            if not spans:  # its text went with an earlier range of the same name
                self.names.pop(rid, None)
                continue
            for sid, s, e in spans:
                if any(u.ch in STRUCTURE for u in self.seg[sid][s:e]) or e >= len(self.seg[sid]):
                    raise self.err("The named range's content cannot be replaced: it spans structural elements.")
            first_sid, first_s, _ = spans[0]
            anchor = self.seg[first_sid][first_s]
            for sid, s, e in reversed(spans):
                del self.seg[sid][s:e]
            new = [Unit(c, dict(anchor.ts), None, frozenset({rid})) for c in clean_text(text)]
            if new:
                self.splice_in(self.seg[first_sid], first_s, new)
            else:
                self.names.pop(rid, None)
        return {}

    # -- headers, footers, footnotes ----------------------------------------------------------------------------
    def _create_hf(self, a: dict[str, Any], kind: str) -> dict[str, Any]:
        if a.get("type", "DEFAULT") != "DEFAULT":
            raise self.err(f"Invalid {kind} type: {a.get('type')!r}. Only DEFAULT can be created.")
        target = self.style
        loc = a.get("sectionBreakLocation")
        if isinstance(loc, dict) and loc.get("index"):
            units, idx = self.seg[""], starts(self.seg[""])
            pos = next((p for p, u in enumerate(units) if idx[p] == loc["index"] and u.ch == SECTION), None)
            if pos is None:
                raise self.err("The sectionBreakLocation must be the start index of a section break.")
            target = units[pos].pa = units[pos].pa or {}
        key = f"default{kind.title()}Id"
        if target.get(key):
            raise self.err(f"A default {kind} already exists.")
        hid = self.new_id("kix.")
        self.seg[hid] = [Unit("\n", pa={})]
        self.kinds[hid] = kind
        target[key] = hid
        return {f"create{kind.title()}": {f"{kind}Id": hid}}

    def createHeader(self, a: dict[str, Any]) -> dict[str, Any]:
        return self._create_hf(a, "header")

    def createFooter(self, a: dict[str, Any]) -> dict[str, Any]:
        return self._create_hf(a, "footer")

    def _delete_hf(self, a: dict[str, Any], kind: str) -> dict[str, Any]:
        hid = a.get(f"{kind}Id")
        if not isinstance(hid, str) or self.kinds.get(hid) != kind:
            raise self.err(f"The {kind} with ID {hid!r} was not found.")
        for rid in {r for u in self.seg[hid] for r in u.nr}:
            self._drop_range(rid)
        del self.seg[hid], self.kinds[hid]
        for holder in [self.style] + [u.pa for u in self.seg[""] if u.ch == SECTION and u.pa]:
            for k in [k for k, v in holder.items() if v == hid]:
                del holder[k]
        return {}

    def deleteHeader(self, a: dict[str, Any]) -> dict[str, Any]:
        return self._delete_hf(a, "header")

    def deleteFooter(self, a: dict[str, Any]) -> dict[str, Any]:
        return self._delete_hf(a, "footer")

    def createFootnote(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, pos = self.insert_pos(a, body_only=True)
        fid = self.new_id("kix.")
        self.splice_in(self.seg[sid], pos, [Unit(FOOTNOTE_REF, {"baselineOffset": "SUPERSCRIPT"},
                                                 {"footnoteId": fid})])
        self.seg[fid] = [Unit(" "), Unit("\n", pa={})]
        self.kinds[fid] = "footnote"
        return {"createFootnote": {"footnoteId": fid}}

    # -- breaks, people ------------------------------------------------------------------------------------------
    def insertPageBreak(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, pos = self.insert_pos(a, body_only=True)
        if self._in_table(self.seg[sid], pos):
            raise self.err("Page breaks cannot be inserted inside a table.")
        self.splice_in(self.seg[sid], pos, [Unit(PAGE_BREAK, pa={}), Unit("\n")])
        return {}

    def insertSectionBreak(self, a: dict[str, Any]) -> dict[str, Any]:
        kind = a.get("sectionType")
        if kind not in ("CONTINUOUS", "NEXT_PAGE"):
            raise self.err(f"Invalid sectionType: {kind!r}.")
        sid, pos = self.insert_pos(a, body_only=True)
        if self._in_table(self.seg[sid], pos):
            raise self.err("Section breaks cannot be inserted inside a table.")
        self.splice_in(self.seg[sid], pos, [Unit("\n"), Unit(SECTION, pa={"sectionType": kind})])
        return {}

    def insertPerson(self, a: dict[str, Any]) -> dict[str, Any]:
        props = a.get("personProperties")
        email = props.get("email") if isinstance(props, dict) else None
        if not isinstance(email, str) or "@" not in email:
            raise self.err("personProperties.email is required.")
        sid, pos = self.insert_pos(a)
        person = self.people(email) if self.people else None
        pp = {"email": email} | ({"name": person.name} if person is not None else {})
        self.splice_in(self.seg[sid], pos, [Unit(PERSON, pa={"personId": self.new_id("kix."),
                                                            "personProperties": pp})])
        return {}

    # -- document and section style ------------------------------------------------------------------------------
    def updateDocumentStyle(self, a: dict[str, Any]) -> dict[str, Any]:
        style, fields = self._fields(a, "documentStyle", DOC_FIELDS)
        self.style.update(self._set(self.style, style, fields))
        for f in fields - set(style):
            self.style.pop(f, None)
        return {}

    def updateSectionStyle(self, a: dict[str, Any]) -> dict[str, Any]:
        style, fields = self._fields(a, "sectionStyle", SECTION_FIELDS)
        sid, p0, p1 = self.range_pos(a.get("range"))
        if sid:
            raise self.err("Section styles can only be updated in the document body.")
        units = self.seg[""]
        marks = [p for p, u in enumerate(units) if u.ch == SECTION] + [len(units)]
        for k, p in enumerate(marks[:-1]):
            if p < p1 and marks[k + 1] > p0:
                units[p].pa = self._set(units[p].pa or {}, style, fields)
        return {}

    # -- tables ----------------------------------------------------------------------------------------------------
    def insertTable(self, a: dict[str, Any]) -> dict[str, Any]:
        rows, cols = a.get("rows"), a.get("columns")
        if not _int(rows) or not _int(cols) or rows < 1 or cols < 1:
            raise self.err("rows and columns must be positive.")
        if cols > 20 or rows * cols > MAX_TABLE_CELLS:
            raise self.err("A table can have at most 20 columns.")
        sid, pos = self.insert_pos(a)
        if self.kinds.get(sid) == "footnote":
            raise self.err("Tables cannot be inserted in a footnote.")
        self.splice_in(self.seg[sid], pos, [Unit("\n")])
        units = self.seg[sid]
        units[pos + 1:pos + 1] = new_table(rows, cols)
        return {}

    def _table(self, loc: Any) -> tuple[str, Table]:
        if not isinstance(loc, dict) or not _int(loc.get("index")):
            raise self.err("tableStartLocation.index is required.")
        sid = loc.get("segmentId") or ""
        units = self.segment(sid)
        idx = starts(units)
        pos = next((p for p, u in enumerate(units) if idx[p] == loc["index"] and u.ch == TABLE), None)
        t = find_table(parse(units)[0], pos) if pos is not None else None
        if t is None:
            raise self.err(f"The table start location {loc['index']} is not the start index of a table.")
        return sid, t

    def _cell_loc(self, loc: Any) -> tuple[str, Table, int, int]:
        if not isinstance(loc, dict):
            raise self.err("tableCellLocation is required.")
        sid, t = self._table(loc.get("tableStartLocation"))
        r, c = loc.get("rowIndex", 0), loc.get("columnIndex", 0)
        if not _int(r) or not 0 <= r < len(t.rows):
            raise self.err(f"Invalid rowIndex {r}: the table has {len(t.rows)} rows.")
        if not _int(c) or not 0 <= c < len(t.rows[r].cells):
            raise self.err(f"Invalid columnIndex {c}: the table has {len(t.rows[r].cells)} columns.")
        return sid, t, r, c

    def _grid(self, sid: str, t: Table) -> tuple[Unit, list[tuple[Unit, list[tuple[Unit, list[Unit]]]]], Unit]:
        units = self.seg[sid]
        rows = [(units[r.pos], [(units[c.pos], units[c.pos + 1:c.end]) for c in r.cells]) for r in t.rows]
        return units[t.start], rows, units[t.end]

    def _put(self, sid: str, t: Table, head: Unit, rows: list[Any], end: Unit) -> None:
        out = [head]
        for ru, cells in rows:
            out.append(ru)
            for cu, content in cells:
                out += [cu] + content
        self.seg[sid][t.start:t.end + 1] = out + [end]

    def insertTableRow(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, t, r, _ = self._cell_loc(a.get("tableCellLocation"))
        head, rows, end = self._grid(sid, t)
        fresh = new_row(len(rows[r][1]))
        row = (fresh[0], [(fresh[i], [fresh[i + 1]]) for i in range(1, len(fresh), 2)])
        rows.insert(r + 1 if a.get("insertBelow") else r, row)
        self._put(sid, t, head, rows, end)
        return {}

    def insertTableColumn(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, t, _, c = self._cell_loc(a.get("tableCellLocation"))
        head, rows, end = self._grid(sid, t)
        at = c + 1 if a.get("insertRight") else c
        for _, cells in rows:
            cu, nl = new_cell()
            cells.insert(min(at, len(cells)), (cu, [nl]))
        cols = list((head.pa or {}).get("columns") or [])
        if cols:
            cols.insert(at, {})
            head.pa = {**head.pa, "columns": cols}
        self._put(sid, t, head, rows, end)
        return {}

    def deleteTableRow(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, t, r, _ = self._cell_loc(a.get("tableCellLocation"))
        if len(t.rows) == 1:
            raise self.err("The table's only row cannot be deleted: delete the table with deleteContentRange.")
        head, rows, end = self._grid(sid, t)
        del rows[r]
        self._put(sid, t, head, rows, end)
        return {}

    def deleteTableColumn(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, t, _, c = self._cell_loc(a.get("tableCellLocation"))
        if max(len(r.cells) for r in t.rows) == 1:
            raise self.err("The table's only column cannot be deleted: delete the table with deleteContentRange.")
        head, rows, end = self._grid(sid, t)
        for _, cells in rows:
            if c < len(cells):
                del cells[c]
        cols = list((head.pa or {}).get("columns") or [])
        if c < len(cols):
            del cols[c]
            head.pa = {**head.pa, "columns": cols}
        self._put(sid, t, head, rows, end)
        return {}

    def _table_range(self, a: dict[str, Any]) -> tuple[str, Table, int, int, int, int]:
        tr = a.get("tableRange")
        if not isinstance(tr, dict):
            raise self.err("tableRange is required.")
        sid, t, r, c = self._cell_loc(tr.get("tableCellLocation"))
        rs, cs = tr.get("rowSpan"), tr.get("columnSpan")
        if not _int(rs) or not _int(cs) or rs < 1 or cs < 1 or r + rs > len(t.rows) or \
                any(c + cs > len(row.cells) for row in t.rows[r:r + rs]):
            raise self.err("The table range is outside the table.")
        return sid, t, r, c, rs, cs

    def mergeTableCells(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, t, r, c, rs, cs = self._table_range(a)
        head, rows, end = self._grid(sid, t)
        hu, hcontent = rows[r][1][c]
        head_empty = len(hcontent) == 1 and hcontent[0].ch == "\n"
        for i in range(r, r + rs):
            for j in range(c, c + cs):
                if (i, j) == (r, c):
                    continue
                cu, content = rows[i][1][j]
                if len(content) > 1 or content[0].ch != "\n":
                    hcontent += content
                    content = [Unit("\n", pa={})]
                cu.pa = {k: v for k, v in (cu.pa or {}).items() if k not in ("rowSpan", "columnSpan")}
                rows[i][1][j] = (cu, content)
        if head_empty and len(hcontent) > 1:
            del hcontent[0]  # an empty head cell gives way to the merged text
        hu.pa = {**(hu.pa or {}), "rowSpan": rs, "columnSpan": cs}
        self._put(sid, t, head, rows, end)
        return {}

    def unmergeTableCells(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, t, r, c, rs, cs = self._table_range(a)
        units = self.seg[sid]
        for row in t.rows[r:r + rs]:
            for cell in row.cells[c:c + cs]:
                u = units[cell.pos]
                u.pa = {k: v for k, v in (u.pa or {}).items() if k not in ("rowSpan", "columnSpan")}
        return {}

    def updateTableCellStyle(self, a: dict[str, Any]) -> dict[str, Any]:
        style, fields = self._fields(a, "tableCellStyle", CELL_FIELDS)
        if "tableRange" in a:
            sid, t, r, c, rs, cs = self._table_range(a)
        else:
            sid, t = self._table(a.get("tableStartLocation"))
            r, c, rs, cs = 0, 0, len(t.rows), max(len(x.cells) for x in t.rows)
        units = self.seg[sid]
        for row in t.rows[r:r + rs]:
            for cell in row.cells[c:c + cs]:
                units[cell.pos].pa = self._set(units[cell.pos].pa or {}, style, fields)
        return {}

    def _indices(self, a: dict[str, Any], key: str, n: int) -> list[int]:
        got = a.get(key) or []
        if not isinstance(got, list) or any(not _int(i) or not 0 <= i < n for i in got):
            raise self.err(f"{key} must hold indices below {n}.")
        return got or list(range(n))

    def updateTableColumnProperties(self, a: dict[str, Any]) -> dict[str, Any]:
        style, fields = self._fields(a, "tableColumnProperties", COLUMN_FIELDS)
        width = style.get("width")
        if "width" in fields and width is not None:
            mag = width.get("magnitude") if isinstance(width, dict) else None
            if not isinstance(mag, (int, float)) or isinstance(mag, bool) or mag < 5:
                raise self.err("The column width must be at least 5 points.")
        sid, t = self._table(a.get("tableStartLocation"))
        n = max(len(r.cells) for r in t.rows)
        head = self.seg[sid][t.start]
        cols = list((head.pa or {}).get("columns") or []) + [{}] * n
        cols = cols[:n]
        for i in self._indices(a, "columnIndices", n):
            cols[i] = self._set(cols[i], style, fields)
        head.pa = {**(head.pa or {}), "columns": cols}
        return {}

    def updateTableRowStyle(self, a: dict[str, Any]) -> dict[str, Any]:
        style, fields = self._fields(a, "tableRowStyle", ROW_FIELDS)
        sid, t = self._table(a.get("tableStartLocation"))
        units = self.seg[sid]
        for i in self._indices(a, "rowIndices", len(t.rows)):
            u = units[t.rows[i].pos]
            u.pa = self._set(u.pa or {}, style, fields)
        return {}

    def pinTableHeaderRows(self, a: dict[str, Any]) -> dict[str, Any]:
        sid, t = self._table(a.get("tableStartLocation"))
        n = a.get("pinnedHeaderRowsCount", 0)
        if not _int(n) or not 0 <= n <= len(t.rows):
            raise self.err(f"pinnedHeaderRowsCount must be between 0 and {len(t.rows)}.")
        head = self.seg[sid][t.start]
        head.pa = {**(head.pa or {}), "pinned": n}
        return {}

    # -- objects this workspace never holds ----------------------------------------------------------------------
    def insertInlineImage(self, a: dict[str, Any]) -> dict[str, Any]:
        self.insert_pos(a)
        raise self.err("There was a problem retrieving the image. The provided image should be publicly "
                       "accessible, within size limit, and in supported formats.")

    def replaceImage(self, a: dict[str, Any]) -> dict[str, Any]:
        raise self.err(f"The image with ID {a.get('imageObjectId')!r} could not be found.")

    def deletePositionedObject(self, a: dict[str, Any]) -> dict[str, Any]:
        raise self.err(f"The positioned object with ID {a.get('objectId')!r} could not be found.")

    def _suggestion(self, a: dict[str, Any]) -> dict[str, Any]:
        raise self.err(f"The suggestion with ID {a.get('suggestionId')!r} could not be found.")

    acceptSuggestion = rejectSuggestion = deleteSuggestion = _suggestion

    # -- after the batch -----------------------------------------------------------------------------------------
    def finish(self) -> None:
        """Footnotes whose reference was deleted go with it; named ranges left with no text are gone."""
        refs = {(u.pa or {}).get("footnoteId") for u in self.seg[""] if u.ch == FOOTNOTE_REF}
        for fid in [k for k, v in self.kinds.items() if v == "footnote" and k not in refs]:
            del self.seg[fid], self.kinds[fid]
        alive = {r for units in self.seg.values() for u in units for r in u.nr}
        for rid in [r for r in self.names if r not in alive]:
            del self.names[rid]


def _spans(units: list[Unit], rid: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for p, u in enumerate(units):
        if rid in u.nr:
            if out and out[-1][1] == p:
                out[-1] = (out[-1][0], p + 1)
            else:
                out.append((p, p + 1))
    return out


def named_ranges(segments: dict[str, list[Unit]], names: dict[str, str]) -> dict[str, Any]:
    """documents.get's namedRanges: name -> every range of that name, each with its spans per segment."""
    out: dict[str, Any] = {}
    for rid, name in names.items():
        ranges = []
        for sid, units in segments.items():
            idx = starts(units)
            for s, e in _spans(units, rid):
                ranges.append(({"segmentId": sid} if sid else {}) |
                              ({"startIndex": idx[s]} if idx[s] else {}) | {"endIndex": idx[e]})
        out.setdefault(name, {"name": name, "namedRanges": []})["namedRanges"].append(
            {"namedRangeId": rid, "name": name, "ranges": ranges})
    return out


def _levels(preset: str) -> list[dict[str, Any]]:
    parts = preset.split("_")[1:]
    if parts[-1] == "PARENS":
        parts = parts[:-1]
    if parts == ["DECIMAL", "NESTED"]:
        parts = ["DECIMAL", "DECIMAL", "DECIMAL"]
    levels = []
    for i in range(9):
        p = parts[i % len(parts)]
        lv: dict[str, Any] = {"bulletAlignment": "START", "startNumber": 1,
                              "indentFirstLine": {"magnitude": 18 + 36 * i, "unit": "PT"},
                              "indentStart": {"magnitude": 36 + 36 * i, "unit": "PT"},
                              "textStyle": {"underline": False}}
        if preset.startswith("NUMBERED"):
            fmt = f"%{i}." if not preset.endswith("PARENS") else f"%{i})"
            if preset == "NUMBERED_DECIMAL_NESTED":
                fmt = ".".join(f"%{k}" for k in range(i + 1)) + "."
            lv |= {"glyphType": _NUMBERS[p], "glyphFormat": fmt}
        else:
            lv |= {"glyphSymbol": _GLYPHS[p], "glyphFormat": f"%{i}"}
        levels.append(lv)
    return levels


def apply(ed: Editor, i: int, kind: str, arg: dict[str, Any]) -> dict[str, Any]:
    ed.where = f"Invalid requests[{i}].{kind}"
    if kind in REFUSED:
        raise bad_request(f"Invalid requests[{i}]: {kind} is not supported by this workspace "
                          f"({REFUSED[kind]}).", "badRequest")
    if kind not in HANDLED:
        raise bad_request(f"Invalid JSON payload received. Unknown name \"{kind}\" at 'requests[{i}]': Cannot find "
                          "field.", "badRequest")
    reply = getattr(ed, kind)(arg)
    if sum(len(units) for units in ed.seg.values()) > DOC_LIMIT:
        raise bad_request(f"Invalid requests[{i}].{kind}: The document would exceed the maximum size of "
                          f"{DOC_LIMIT:,} characters.", "badRequest")
    return reply


# CELL, ROW are re-exported for callers that walk segments
__all__ = ["Editor", "apply", "named_ranges", "HANDLED", "REFUSED", "CELL", "ROW"]
