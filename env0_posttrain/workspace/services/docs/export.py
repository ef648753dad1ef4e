"""Drive files.export of a Google Doc: the formats served here, each rendered from the document's structure by the
format's own library (fpdf2 for PDF, python-docx for Word, odfpy for OpenDocument, EbookLib for EPUB), never by
hand-written file writers. Rich Text is not served: no maintained RTF writer is in the project's dependencies."""

from __future__ import annotations

import html
import io
from dataclasses import dataclass
from typing import Any

from .units import CELL, PAGE_BREAK, ROW, SECTION, TABLE, TABLE_END, Para, Table, Unit, parse

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ODT = "application/vnd.oasis.opendocument.text"
EPUB = "application/epub+zip"
FORMATS = ("text/plain", "text/markdown", "text/html", PDF, DOCX, ODT, EPUB)
EXPORT_LIMIT = 10 * 1024 * 1024  # Drive: exported content is limited to 10 MB
_MARKS = {SECTION, TABLE, ROW, CELL, TABLE_END}
_HEAD = {"TITLE": 1, "HEADING_1": 1, "HEADING_2": 2, "HEADING_3": 3, "HEADING_4": 4, "HEADING_5": 5,
         "HEADING_6": 6, "SUBTITLE": 2}
_SIZES = {"TITLE": 26, "SUBTITLE": 15, "HEADING_1": 20, "HEADING_2": 16, "HEADING_3": 14, "HEADING_4": 12}


@dataclass
class Line:
    """One paragraph: its named style, list (nesting level, numbered?) and styled runs without the newline."""
    style: str
    bullet: tuple[int, bool] | None
    runs: list[tuple[str, dict[str, Any]]]
    page_break: bool = False

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.runs)


def outline(units: list[Unit], lists: dict[str, Any]) -> list[Line | list[list[list[Line]]]]:
    """The body as lines and tables (a table: rows of cells of lines)."""
    blocks, _ = parse(units)
    return _walk(units, blocks, lists)


def _walk(units: list[Unit], blocks: list[Any], lists: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for b in blocks:
        if isinstance(b, Para):
            pa = units[b.end - 1].pa or {}
            runs: list[tuple[str, dict[str, Any]]] = []
            for u in units[b.start:b.end - 1]:
                if u.ch in _MARKS or u.ch >= "\ue000" and u.ch <= "\ue0ff":
                    continue
                if runs and runs[-1][1] == u.ts:
                    runs[-1] = (runs[-1][0] + u.ch, u.ts)
                else:
                    runs.append((u.ch, u.ts))
            bullet = None
            if "bullet" in pa:
                lv = pa["bullet"].get("nestingLevel", 0)
                levels = lists.get(pa["bullet"]["listId"], {}).get("listProperties", {}).get("nestingLevels", [])
                bullet = (lv, bool(levels and "glyphType" in levels[min(lv, len(levels) - 1)]))
            out.append(Line(pa.get("namedStyleType", "NORMAL_TEXT"), bullet, runs,
                            any(u.ch == PAGE_BREAK for u in units[b.start:b.end])))
        elif isinstance(b, Table):
            out.append([[_walk(units, c.blocks, lists) for c in r.cells] for r in b.rows])
    return out


def _lines(cell: list[Any]) -> list[Line]:
    return [x for x in cell if isinstance(x, Line)]


# -- Markdown -----------------------------------------------------------------------------------------------------
def _md_runs(line: Line) -> str:
    out = []
    for t, ts in line.runs:
        if ts.get("link", {}).get("url"):
            t = f"[{t}]({ts['link']['url']})"
        if ts.get("bold"):
            t = f"**{t}**"
        if ts.get("italic"):
            t = f"*{t}*"
        if ts.get("strikethrough"):
            t = f"~~{t}~~"
        out.append(t)
    return "".join(out)


def markdown(items: list[Any]) -> str:
    out = []
    for it in items:
        if isinstance(it, Line):
            text = _md_runs(it)
            if it.style in _HEAD and it.text:
                text = "#" * _HEAD[it.style] + " " + text
            elif it.bullet is not None:
                text = "   " * it.bullet[0] + ("1. " if it.bullet[1] else "* ") + text
            out.append(text)
        else:
            rows = [[" ".join(_md_runs(x) for x in _lines(c)).replace("|", "\\|") for c in r] for r in it]
            out.append("| " + " | ".join(rows[0]) + " |")
            out.append("|" + " --- |" * len(rows[0]))
            out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out) + "\n"


# -- HTML ---------------------------------------------------------------------------------------------------------
def _html_runs(line: Line) -> str:
    out = []
    for t, ts in line.runs:
        t = html.escape(t)
        for key, tag in (("bold", "b"), ("italic", "i"), ("underline", "u"), ("strikethrough", "s")):
            if ts.get(key):
                t = f"<{tag}>{t}</{tag}>"
        if ts.get("link", {}).get("url"):
            t = f'<a href="{html.escape(ts["link"]["url"], quote=True)}">{t}</a>'
        out.append(t)
    return "".join(out)


def _html_items(items: list[Any]) -> str:
    out, open_list = [], None
    for it in items:
        if isinstance(it, Line) and it.bullet is not None:
            tag = "ol" if it.bullet[1] else "ul"
            if open_list != tag:
                if open_list:
                    out.append(f"</{open_list}>")
                out.append(f"<{tag}>")
                open_list = tag
            out.append(f"<li>{_html_runs(it)}</li>")
            continue
        if open_list:
            out.append(f"</{open_list}>")
            open_list = None
        if isinstance(it, Line):
            tag = f"h{_HEAD[it.style]}" if it.style in _HEAD else "p"
            out.append(f"<{tag}>{_html_runs(it)}</{tag}>")
        else:
            out.append("<table>" + "".join("<tr>" + "".join(f"<td>{_html_items(c)}</td>" for c in r) + "</tr>"
                                           for r in it) + "</table>")
    if open_list:
        out.append(f"</{open_list}>")
    return "".join(out)


def to_html(title: str, items: list[Any]) -> str:
    return (f'<html><head><meta content="text/html; charset=UTF-8" http-equiv="content-type">'
            f"<title>{html.escape(title)}</title></head><body>{_html_items(items)}</body></html>")


# -- PDF (fpdf2) --------------------------------------------------------------------------------------------------
def _latin(text: str) -> str:
    """fpdf2's core fonts are Latin-1: other characters print as '?' (no font file is shipped for them)."""
    return text.encode("latin-1", errors="replace").decode("latin-1")


def to_pdf(title: str, items: list[Any]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="letter")
    pdf.set_title(_latin(title))
    pdf.set_margins(72, 72, 72)
    pdf.add_page()

    def write(items: list[Any]) -> None:
        for it in items:
            if isinstance(it, Line):
                if it.page_break:
                    pdf.add_page()
                size = _SIZES.get(it.style, 11)
                indent = 18 * (it.bullet[0] + 1) if it.bullet else 0
                pdf.set_x(72 + indent)
                for t, ts in it.runs or [("", {})]:
                    style = ("B" if ts.get("bold") or it.style in _HEAD else "") + ("I" if ts.get("italic") else "") \
                        + ("U" if ts.get("underline") else "")
                    pdf.set_font("Helvetica", style, size)
                    prefix = "- " if it.bullet and t is it.runs[0][0] else ""
                    pdf.write(size * 1.3, _latin(prefix + t))
                pdf.ln(size * 1.5)
            else:
                pdf.set_font("Helvetica", "", 10)
                with pdf.table() as table:
                    for r in it:
                        row = table.row()
                        for c in r:
                            row.cell(_latin("\n".join(x.text for x in _lines(c))))
                pdf.ln(8)

    write(items)
    return bytes(pdf.output())


# -- DOCX (python-docx) -------------------------------------------------------------------------------------------
def to_docx(title: str, items: list[Any]) -> bytes:
    import docx

    d = docx.Document()
    d.core_properties.title = title

    def runs(p: Any, line: Line) -> None:
        for t, ts in line.runs:
            r = p.add_run(t)
            r.bold, r.italic, r.underline = ts.get("bold"), ts.get("italic"), ts.get("underline")

    def fill(container: Any, items: list[Any]) -> None:
        for it in items:
            if isinstance(it, Line):
                if it.style in _HEAD:
                    p = container.add_paragraph(style="Title" if it.style == "TITLE" else f"Heading {_HEAD[it.style]}")
                elif it.bullet is not None:
                    p = container.add_paragraph(style="List Number" if it.bullet[1] else "List Bullet")
                else:
                    p = container.add_paragraph()
                runs(p, it)
            else:
                table = container.add_table(rows=len(it), cols=max(len(r) for r in it))
                for i, r in enumerate(it):
                    for j, c in enumerate(r):
                        cell = table.cell(i, j)
                        lines = _lines(c)
                        for k, line in enumerate(lines):
                            runs(cell.paragraphs[0] if k == 0 else cell.add_paragraph(), line)

    fill(d, items)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


# -- OpenDocument text (odfpy) ------------------------------------------------------------------------------------
def to_odt(title: str, items: list[Any]) -> bytes:
    from odf import dc, opendocument, style, table, text

    d = opendocument.OpenDocumentText()
    d.meta.addElement(dc.Title(text=title))
    spans = {}
    for key, attrs in (("bold", {"fontweight": "bold"}), ("italic", {"fontstyle": "italic"}),
                       ("underline", {"textunderlinestyle": "solid"})):
        st = style.Style(name=key, family="text")
        st.addElement(style.TextProperties(**attrs))
        d.automaticstyles.addElement(st)
        spans[key] = st

    def para(line: Line) -> Any:
        el = text.H(outlinelevel=_HEAD[line.style]) if line.style in _HEAD else text.P()
        for t, ts in line.runs:
            key = next((k for k in spans if ts.get(k)), None)
            if key:
                el.addElement(text.Span(stylename=spans[key], text=t))
            else:
                el.addText(t)
        return el

    def fill(parent: Any, items: list[Any]) -> None:
        for it in items:
            if isinstance(it, Line):
                if it.bullet is not None:
                    lst = text.List()
                    item = text.ListItem()
                    item.addElement(para(it))
                    lst.addElement(item)
                    parent.addElement(lst)
                else:
                    parent.addElement(para(it))
            else:
                tb = table.Table()
                tb.addElement(table.TableColumn(numbercolumnsrepeated=max(len(r) for r in it)))
                for r in it:
                    tr = table.TableRow()
                    for c in r:
                        tc = table.TableCell()
                        fill(tc, c)
                        tr.addElement(tc)
                    tb.addElement(tr)
                parent.addElement(tb)

    fill(d.text, items)
    buf = io.BytesIO()
    d.write(buf)
    return buf.getvalue()


# -- EPUB (EbookLib) ----------------------------------------------------------------------------------------------
def to_epub(doc_id: str, title: str, items: list[Any]) -> bytes:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier(doc_id)
    book.set_title(title)
    book.set_language("en")
    chapter = epub.EpubHtml(title=title, file_name="document.xhtml", lang="en")
    chapter.content = f"<html><body>{_html_items(items)}</body></html>"
    book.add_item(chapter)
    book.toc = [chapter]
    book.spine = [chapter]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    buf = io.BytesIO()
    epub.write_epub(buf, book)
    return buf.getvalue()


def export(doc_id: str, title: str, text: str, units: list[Unit], lists: dict[str, Any], mime: str) -> bytes:
    if mime == "text/plain":
        return text.encode("utf-8")
    items = outline(units, lists)
    if mime == "text/markdown":
        return markdown(items).encode("utf-8")
    if mime == "text/html":
        return to_html(title, items).encode("utf-8")
    if mime == PDF:
        return to_pdf(title, items)
    if mime == ODT:
        return to_odt(title, items)
    if mime == EPUB:
        return to_epub(doc_id, title, items)
    return to_docx(title, items)
