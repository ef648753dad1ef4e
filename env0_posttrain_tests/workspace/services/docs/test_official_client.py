"""google-api-python-client (packaged discovery document) drives Docs documents.batchUpdate over HTTP to the live
app: every request kind round-trips through documents.get with Google's structure and UTF-16 indexes, writeControl
guards revisions, and Drive exports the document as PDF and Word files that their own readers parse."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from env0_posttrain.workspace.services.docs.requests import HANDLED, REFUSED
from env0_posttrain_tests.support.google_clients import reseeded_service, status_of
from env0_posttrain_tests.support.live_workspace import tls_server_fixture, workspace_of as ws

pytestmark = pytest.mark.filterwarnings("ignore")

server = tls_server_fixture()


@pytest.fixture()
def docs(server):
    return reseeded_service(server[0], "docs", "v1", "")


def _doc(docs, text: str) -> str:
    did = docs.documents().create(body={"title": "Plan"}).execute()["documentId"]
    docs.documents().batchUpdate(documentId=did, body={"requests": [
        {"insertText": {"location": {"index": 1}, "text": text}}]}).execute()
    return did


def _bu(docs, did: str, *reqs, **extra):
    return docs.documents().batchUpdate(documentId=did, body={"requests": list(reqs), **extra}).execute()


def _text(content: list) -> str:
    out = []
    for el in content:
        if "paragraph" in el:
            out += [e.get("textRun", {}).get("content", "") for e in el["paragraph"]["elements"]]
        elif "table" in el:
            for row in el["table"]["tableRows"]:
                for cell in row["tableCells"]:
                    out.append(_text(cell["content"]))
    return "".join(out)


def test_tables_insert_fill_grow_shrink_merge_style_and_delete(docs):
    did = _doc(docs, "Budget\n")
    assert _bu(docs, did, {"insertTable": {"rows": 2, "columns": 2, "endOfSegmentLocation": {}}})["replies"] == [{}]
    body = docs.documents().get(documentId=did).execute()["body"]["content"]
    table = body[3]
    assert (table["startIndex"], table["endIndex"]) == (9, 20) and body[2]["paragraph"]["elements"][0][
        "textRun"]["content"] == "\n"  # the newline insertTable puts before the table
    cells = [c for r in table["table"]["tableRows"] for c in r["tableCells"]]
    assert [c["content"][0]["startIndex"] for c in cells] == [12, 14, 17, 19]
    # fill the cells from the last one back, so earlier indexes stay put
    _bu(docs, did, *[{"insertText": {"location": {"index": i}, "text": t}}
                     for i, t in zip([19, 17, 14, 12], ["40", "Rent", "12", "Food"])])
    t = docs.documents().get(documentId=did).execute()["body"]["content"][3]["table"]
    assert [[_text(c["content"]) for c in r["tableCells"]] for r in t["tableRows"]] == [
        ["Food\n", "12\n"], ["Rent\n", "40\n"]]
    loc = {"tableStartLocation": {"index": 9}, "rowIndex": 1, "columnIndex": 1}
    _bu(docs, did, {"insertTableRow": {"tableCellLocation": loc, "insertBelow": True}},
        {"insertTableColumn": {"tableCellLocation": loc, "insertRight": False}})
    t = docs.documents().get(documentId=did).execute()["body"]["content"][3]["table"]
    assert (t["rows"], t["columns"]) == (3, 3)
    assert [[_text(c["content"]) for c in r["tableCells"]] for r in t["tableRows"]] == [
        ["Food\n", "\n", "12\n"], ["Rent\n", "\n", "40\n"], ["\n", "\n", "\n"]]
    _bu(docs, did, {"deleteTableRow": {"tableCellLocation": {**loc, "rowIndex": 2}}},
        {"deleteTableColumn": {"tableCellLocation": loc}},
        {"mergeTableCells": {"tableRange": {"tableCellLocation": {**loc, "rowIndex": 0, "columnIndex": 0},
                                            "rowSpan": 1, "columnSpan": 2}}},
        {"updateTableCellStyle": {"tableStartLocation": {"index": 9}, "fields": "backgroundColor",
                                  "tableCellStyle": {"backgroundColor": {"color": {"rgbColor": {"red": 1}}}}}},
        {"updateTableColumnProperties": {"tableStartLocation": {"index": 9}, "columnIndices": [0], "fields": "*",
                                         "tableColumnProperties": {"widthType": "FIXED_WIDTH",
                                                                   "width": {"magnitude": 120, "unit": "PT"}}}},
        {"updateTableRowStyle": {"tableStartLocation": {"index": 9}, "rowIndices": [1], "fields": "minRowHeight",
                                 "tableRowStyle": {"minRowHeight": {"magnitude": 30, "unit": "PT"}}}},
        {"pinTableHeaderRows": {"tableStartLocation": {"index": 9}, "pinnedHeaderRowsCount": 1}})
    t = docs.documents().get(documentId=did).execute()["body"]["content"][3]["table"]
    head = t["tableRows"][0]["tableCells"][0]
    assert (t["rows"], t["columns"]) == (2, 2) and _text(head["content"]) == "Food\n12\n"
    assert head["tableCellStyle"]["columnSpan"] == 2 and head["tableCellStyle"]["backgroundColor"] == {
        "color": {"rgbColor": {"red": 1}}}
    assert t["tableStyle"]["tableColumnProperties"][0] == {"widthType": "FIXED_WIDTH",
                                                            "width": {"magnitude": 120, "unit": "PT"}}
    assert t["tableRows"][1]["tableRowStyle"]["minRowHeight"] == {"magnitude": 30, "unit": "PT"}
    assert t["tableRows"][0]["tableRowStyle"]["tableHeader"] is True
    _bu(docs, did, {"unmergeTableCells": {"tableRange": {"tableCellLocation": {**loc, "rowIndex": 0,
                                                                               "columnIndex": 0},
                                                         "rowSpan": 1, "columnSpan": 2}}})
    doc = docs.documents().get(documentId=did).execute()
    t = doc["body"]["content"][3]
    assert t["table"]["tableRows"][0]["tableCells"][0]["tableCellStyle"]["columnSpan"] == 1
    # half a table cannot go; the whole table (with the newline before it kept) can
    assert status_of(docs.documents().batchUpdate(documentId=did, body={"requests": [
        {"deleteContentRange": {"range": {"startIndex": 8, "endIndex": 13}}}]})) == (400, "badRequest")
    _bu(docs, did, {"deleteContentRange": {"range": {"startIndex": t["startIndex"], "endIndex": t["endIndex"]}}})
    after = docs.documents().get(documentId=did).execute()["body"]["content"]
    assert [("table" in e, _text([e])) for e in after[1:]] == [(False, "Budget\n"), (False, "\n"), (False, "\n")]


def test_text_style_paragraph_style_and_bullets(docs):
    did = _doc(docs, "Launch plan\nShip the beta\n\tWrite the notes\nTell sales\n")
    _bu(docs, did, {"updateTextStyle": {"range": {"startIndex": 1, "endIndex": 7}, "fields": "bold,fontSize",
                                        "textStyle": {"bold": True, "fontSize": {"magnitude": 18, "unit": "PT"}}}},
        {"updateParagraphStyle": {"range": {"startIndex": 1, "endIndex": 2}, "fields": "namedStyleType,alignment",
                                  "paragraphStyle": {"namedStyleType": "HEADING_1", "alignment": "CENTER"}}},
        {"createParagraphBullets": {"range": {"startIndex": 13, "endIndex": 55},
                                    "bulletPreset": "NUMBERED_DECIMAL_ALPHA_ROMAN"}})
    doc = docs.documents().get(documentId=did).execute()
    paras = [e["paragraph"] for e in doc["body"]["content"] if "paragraph" in e]
    runs = paras[0]["elements"]
    assert [(r["textRun"]["content"], r["textRun"]["textStyle"]) for r in runs] == [
        ("Launch", {"bold": True, "fontSize": {"magnitude": 18, "unit": "PT"}}), (" plan\n", {})]
    assert (runs[0]["startIndex"], runs[0]["endIndex"], runs[1]["endIndex"]) == (1, 7, 13)
    st = paras[0]["paragraphStyle"]
    assert st["namedStyleType"] == "HEADING_1" and st["alignment"] == "CENTER" and st["headingId"].startswith("h.")
    bullets = [p.get("bullet") for p in paras[1:4]]
    list_id = bullets[0]["listId"]
    assert bullets == [{"listId": list_id, "textStyle": {}}, {"listId": list_id, "nestingLevel": 1,
                                                               "textStyle": {}}, {"listId": list_id, "textStyle": {}}]
    assert _text(doc["body"]["content"]) == "Launch plan\nShip the beta\nWrite the notes\nTell sales\n\n"  # tab gone
    assert doc["lists"][list_id]["listProperties"]["nestingLevels"][0]["glyphType"] == "DECIMAL"
    assert paras[2]["paragraphStyle"]["indentStart"] == {"magnitude": 72, "unit": "PT"}  # nesting level 1
    _bu(docs, did, {"deleteParagraphBullets": {"range": {"startIndex": 13, "endIndex": 14}}},
        {"updateTextStyle": {"range": {"startIndex": 1, "endIndex": 7}, "fields": "bold", "textStyle": {}}})
    doc = docs.documents().get(documentId=did).execute()
    paras = [e["paragraph"] for e in doc["body"]["content"] if "paragraph" in e]
    assert "bullet" not in paras[1] and paras[2]["bullet"]["listId"] == list_id
    assert paras[0]["elements"][0]["textRun"]["textStyle"] == {"fontSize": {"magnitude": 18, "unit": "PT"}}
    assert status_of(docs.documents().batchUpdate(documentId=did, body={"requests": [
        {"updateTextStyle": {"range": {"startIndex": 1, "endIndex": 3}, "textStyle": {"bold": True}}}]})) \
        == (400, "badRequest")  # fields is required


def test_utf16_indexes_named_ranges_and_replace(docs):
    did = _doc(docs, "Hi 😀 team\nOwner: TBD\n")
    c = docs.documents().get(documentId=did).execute()["body"]["content"]
    assert c[1]["endIndex"] == 12 and c[2]["startIndex"] == 12  # the emoji counts two UTF-16 code units
    r = _bu(docs, did, {"createNamedRange": {"name": "owner", "range": {"startIndex": 19, "endIndex": 22}}})
    rid = r["replies"][0]["createNamedRange"]["namedRangeId"]
    _bu(docs, did, {"insertText": {"location": {"index": 1}, "text": "Oh "}})
    got = docs.documents().get(documentId=did).execute()["namedRanges"]["owner"]["namedRanges"][0]
    assert got == {"namedRangeId": rid, "name": "owner", "ranges": [{"startIndex": 22, "endIndex": 25}]}
    _bu(docs, did, {"replaceNamedRangeContent": {"namedRangeId": rid, "text": "Dana Lee"}})
    doc = docs.documents().get(documentId=did).execute()
    assert _text(doc["body"]["content"]).endswith("Owner: Dana Lee\n\n")
    assert doc["namedRanges"]["owner"]["namedRanges"][0]["ranges"] == [{"startIndex": 22, "endIndex": 30}]
    r = _bu(docs, did, {"replaceAllText": {"containsText": {"text": "dana", "matchCase": True}, "replaceText": "x"}},
            {"deleteNamedRange": {"name": "owner"}})
    assert r["replies"] == [{"replaceAllText": {}}, {}]
    assert "namedRanges" not in docs.documents().get(documentId=did).execute()


def test_headers_footers_footnotes_breaks_styles_and_people(docs, server):
    did = _doc(docs, "Intro\nBody\n")
    r = _bu(docs, did, {"createHeader": {"type": "DEFAULT"}}, {"createFooter": {"type": "DEFAULT"}},
            {"createFootnote": {"location": {"index": 6}}})
    hid = r["replies"][0]["createHeader"]["headerId"]
    foot = r["replies"][1]["createFooter"]["footerId"]
    fid = r["replies"][2]["createFootnote"]["footnoteId"]
    _bu(docs, did, {"insertText": {"location": {"segmentId": hid, "index": 0}, "text": "ACME confidential"}},
        {"insertText": {"endOfSegmentLocation": {"segmentId": fid}, "text": "See the appendix."}},
        {"insertPageBreak": {"location": {"index": 8}}},
        {"insertSectionBreak": {"sectionType": "NEXT_PAGE", "endOfSegmentLocation": {}}},
        {"updateDocumentStyle": {"documentStyle": {"marginTop": {"magnitude": 36, "unit": "PT"}},
                                 "fields": "marginTop"}},
        {"insertPerson": {"personProperties": {"email": ws(server).me.email}, "location": {"index": 1}}})
    doc = docs.documents().get(documentId=did).execute()
    assert doc["documentStyle"]["defaultHeaderId"] == hid and doc["documentStyle"]["defaultFooterId"] == foot
    assert doc["documentStyle"]["marginTop"] == {"magnitude": 36, "unit": "PT"}
    assert _text(doc["headers"][hid]["content"]) == "ACME confidential\n"
    assert _text(doc["footnotes"][fid]["content"]) == " See the appendix.\n"
    els = doc["body"]["content"][1]["paragraph"]["elements"]
    assert els[0]["person"]["personProperties"]["email"] == ws(server).me.email and els[0]["endIndex"] == 2
    ref = next(e for e in els if "footnoteReference" in e)
    assert ref["footnoteReference"]["footnoteId"] == fid and ref["footnoteReference"]["footnoteNumber"] == "1"
    kinds = [next(k for k in e if k not in ("startIndex", "endIndex")) for e in doc["body"]["content"]]
    assert kinds.count("sectionBreak") == 2
    assert any("pageBreak" in e for p in doc["body"]["content"] if "paragraph" in p
               for e in p["paragraph"]["elements"])
    assert status_of(docs.documents().batchUpdate(documentId=did, body={"requests": [
        {"createHeader": {"type": "DEFAULT"}}]})) == (400, "badRequest")  # one default header already
    _bu(docs, did, {"deleteHeader": {"headerId": hid}}, {"deleteFooter": {"footerId": foot}},
        {"updateSectionStyle": {"range": {"startIndex": 1, "endIndex": 2}, "fields": "marginLeft",
                                "sectionStyle": {"marginLeft": {"magnitude": 50, "unit": "PT"}}}})
    doc = docs.documents().get(documentId=did).execute()
    assert "headers" not in doc and "defaultHeaderId" not in doc["documentStyle"]
    assert doc["body"]["content"][0]["sectionBreak"]["sectionStyle"]["marginLeft"]["magnitude"] == 50


def test_write_control_revisions(docs):
    did = _doc(docs, "v1\n")
    rev = docs.documents().get(documentId=did).execute()["revisionId"]
    r = _bu(docs, did, {"insertText": {"location": {"index": 1}, "text": "a"}}, writeControl={"requiredRevisionId": rev})
    new = r["writeControl"]["requiredRevisionId"]
    assert new != rev and docs.documents().get(documentId=did).execute()["revisionId"] == new
    for wc in ({"requiredRevisionId": rev}, {"targetRevisionId": rev}, {"requiredRevisionId": new,
                                                                       "targetRevisionId": new}):
        assert status_of(docs.documents().batchUpdate(documentId=did, body={
            "requests": [{"insertText": {"location": {"index": 1}, "text": "b"}}], "writeControl": wc})) \
            == (400, "badRequest")
    assert _text(docs.documents().get(documentId=did).execute()["body"]["content"]) == "av1\n\n"
    r = _bu(docs, did, {"insertText": {"location": {"index": 1}, "text": "c"}}, writeControl={"targetRevisionId": new})
    assert r["writeControl"]["requiredRevisionId"] not in (rev, new)


def test_refused_requests_and_every_discovery_kind_is_handled_or_refused(docs):
    from googleapiclient.discovery_cache import get_static_doc

    kinds = set(json.loads(get_static_doc("docs", "v1"))["schemas"]["Request"]["properties"])
    assert kinds == set(HANDLED) | set(REFUSED)
    did = _doc(docs, "x\n")
    for req in ({"insertInlineImage": {"uri": "https://example.com/a.png", "location": {"index": 1}}},
                {"deletePositionedObject": {"objectId": "kix.nope"}}, {"addDocumentTab": {}},
                {"insertText": {"location": {"index": 0}, "text": "a"}}, {"noSuchRequest": {}}):
        assert status_of(docs.documents().batchUpdate(documentId=did, body={"requests": [req]})) \
            == (400, "badRequest"), req


def test_export_pdf_docx_markdown_html_and_about(server, docs):
    drive = reseeded_service(server[0], "drive", "v3", "drive/v3/")
    docs = reseeded_service(server[0], "docs", "v1", "")
    did = _doc(docs, "Quarterly review\nRevenue grew\n")
    _bu(docs, did, {"updateParagraphStyle": {"range": {"startIndex": 1, "endIndex": 2}, "fields": "namedStyleType",
                                             "paragraphStyle": {"namedStyleType": "HEADING_1"}}},
        {"updateTextStyle": {"range": {"startIndex": 18, "endIndex": 25}, "fields": "bold",
                             "textStyle": {"bold": True}}},
        {"insertTable": {"rows": 1, "columns": 2, "endOfSegmentLocation": {}}})
    from docx import Document as Docx
    from pypdf import PdfReader

    pdf = drive.files().export(fileId=did, mimeType="application/pdf").execute()
    assert pdf.startswith(b"%PDF-")
    words = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    assert "Quarterly review" in words and "Revenue grew" in words
    word = drive.files().export(fileId=did, mimeType="application/vnd.openxmlformats-officedocument."
                                                     "wordprocessingml.document").execute()
    d = Docx(io.BytesIO(word))
    assert [(p.style.name, p.text) for p in d.paragraphs[:2]] == [("Heading 1", "Quarterly review"),
                                                                   ("Normal", "Revenue grew")]
    assert len(d.tables) == 1 and len(d.tables[0].columns) == 2
    md = drive.files().export(fileId=did, mimeType="text/markdown").execute().decode()
    assert md.startswith("# Quarterly review\n**Revenue** grew\n") and "| --- | --- |" in md
    page = drive.files().export(fileId=did, mimeType="text/html").execute().decode()
    assert "<h1>Quarterly review</h1>" in page and "<b>Revenue</b>" in page and "<table>" in page
    odt = drive.files().export(fileId=did, mimeType="application/vnd.oasis.opendocument.text").execute()
    from odf import opendocument, teletype, text

    od = opendocument.load(io.BytesIO(odt))
    assert [teletype.extractText(h) for h in od.getElementsByType(text.H)] == ["Quarterly review"]
    assert "Revenue grew" in [teletype.extractText(p) for p in od.getElementsByType(text.P)]
    book = drive.files().export(fileId=did, mimeType="application/epub+zip").execute()
    with zipfile.ZipFile(io.BytesIO(book)) as z:
        assert z.read("mimetype") == b"application/epub+zip"
        assert b"<h1>Quarterly review</h1>" in z.read("EPUB/document.xhtml")
    assert status_of(drive.files().export(fileId=did, mimeType="application/rtf")) == (400, "badRequest")
    formats = drive.about().get(fields="exportFormats").execute()["exportFormats"]
    assert formats == {"application/vnd.google-apps.document": [
        "text/plain", "text/markdown", "text/html", "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.oasis.opendocument.text", "application/epub+zip"]}
