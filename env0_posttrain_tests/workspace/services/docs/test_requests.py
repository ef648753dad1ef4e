"""Docs batchUpdate edge cases in process: plain documents render as they always did, agent text cannot forge
structure, deletions and replacements never break a table, a batch is all or nothing, copies keep structure, and
an export over Drive's limit fails as Drive's does."""

from __future__ import annotations

import pytest

from env0_posttrain.workspace import Workspace
from env0_posttrain_tests.support.workspace import err, ok


@pytest.fixture()
def ws():
    return Workspace.seeded(21)


def _new(ws, text: str) -> str:
    did = ok(ws, "docs_documents_create", {"body": {"title": "Edge"}})["documentId"]
    _bu(ws, did, {"insertText": {"location": {"index": 1}, "text": text}})
    return did


def _bu(ws, did: str, *reqs):
    return ok(ws, "docs_documents_batchUpdate", {"documentId": did, "body": {"requests": list(reqs)}})


def _bad(ws, did: str, *reqs) -> str:
    e = err(ws, "docs_documents_batchUpdate", {"documentId": did, "body": {"requests": list(reqs)}})
    assert e["code"] == 400, e
    return e["message"]


def _content(ws, did: str) -> list:
    return ok(ws, "docs_documents_get", {"documentId": did})["body"]["content"]


def test_a_planted_plain_document_renders_as_before(ws):
    d = ws.docs.add_document(title="Plain", text="One\nTwo\n")
    para = {"namedStyleType": "NORMAL_TEXT", "direction": "LEFT_TO_RIGHT"}
    assert _content(ws, d.documentId)[1:] == [
        {"startIndex": 1, "endIndex": 5, "paragraph": {"elements": [
            {"startIndex": 1, "endIndex": 5, "textRun": {"content": "One\n", "textStyle": {}}}], "paragraphStyle": para}},
        {"startIndex": 5, "endIndex": 9, "paragraph": {"elements": [
            {"startIndex": 5, "endIndex": 9, "textRun": {"content": "Two\n", "textStyle": {}}}], "paragraphStyle": para}}]
    assert ws.docs.db.documents[d.documentId].body is None  # untouched until its first edit


def test_agent_text_cannot_forge_structure(ws):
    did = _new(ws, "a\ue001b\x01c\ue003\n")
    assert ws.docs.text_of(did) == "abc\n\n"
    assert [k for e in _content(ws, did) for k in e if k in ("paragraph", "table")] == ["paragraph", "paragraph"]


def test_deletions_respect_segment_cell_and_table_bounds(ws):
    did = _new(ws, "Alpha\nBeta\n")
    _bu(ws, did, {"deleteContentRange": {"range": {"startIndex": 4, "endIndex": 9}}})
    assert ws.docs.text_of(did) == "Alpta\n\n"  # two paragraphs merged
    assert "newline character at the end of the segment" in _bad(
        ws, did, {"deleteContentRange": {"range": {"startIndex": 1, "endIndex": 8}}})
    _bu(ws, did, {"insertTable": {"rows": 1, "columns": 2, "location": {"index": 1}}})
    c = _content(ws, did)
    table = next(e for e in c if "table" in e)
    cell = table["table"]["tableRows"][0]["tableCells"][0]
    assert "end of a table cell" in _bad(ws, did, {"deleteContentRange": {
        "range": {"startIndex": cell["content"][0]["startIndex"], "endIndex": cell["endIndex"]}}})
    assert "newline character before a table" in _bad(ws, did, {"deleteContentRange": {
        "range": {"startIndex": table["startIndex"] - 1, "endIndex": table["startIndex"]}}})
    assert "inside the bounds of an existing paragraph" in _bad(ws, did, {"insertText": {
        "location": {"index": table["startIndex"]}, "text": "x"}})


def test_replace_all_text_never_breaks_a_table(ws):
    did = _new(ws, "x\n")
    _bu(ws, did, {"insertTable": {"rows": 1, "columns": 1, "endOfSegmentLocation": {}}})
    cell_text = next(e for e in _content(ws, did) if "table" in e)["table"]["tableRows"][0]["tableCells"][0]
    _bu(ws, did, {"insertText": {"location": {"index": cell_text["content"][0]["startIndex"]}, "text": "x"}})
    r = _bu(ws, did, {"replaceAllText": {"containsText": {"text": "x\n"}, "replaceText": "y"}})
    assert r["replies"] == [{"replaceAllText": {"occurrencesChanged": 1}}]  # the body's, not the cell's last newline
    t = next(e for e in _content(ws, did) if "table" in e)["table"]
    assert t["tableRows"][0]["tableCells"][0]["content"][0]["paragraph"]["elements"][0]["textRun"]["content"] == "x\n"


def test_a_batch_is_all_or_nothing_and_ids_are_deterministic(ws):
    did = _new(ws, "Notes\n")
    before = ws.state_hash()
    assert "rows and columns" in _bad(ws, did, {"insertTable": {"rows": 2, "columns": 2, "location": {"index": 1}}},
                                      {"createHeader": {"type": "DEFAULT"}},
                                      {"insertTable": {"rows": 0, "columns": 2, "location": {"index": 1}}})
    assert ws.state_hash() == before
    assert "at most 20 columns" in _bad(ws, did, {"insertTable": {"rows": 1, "columns": 21, "location": {"index": 1}}})
    assert "surrogate" in _bad(ws, _new(ws, "😀\n"), {"insertText": {"location": {"index": 2}, "text": "x"}})
    a = Workspace.seeded(21)
    b = Workspace.seeded(21)
    ids = []
    for w in (a, b):
        d = _new(w, "Same\n")
        ids.append(_bu(w, d, {"createHeader": {}}, {"createNamedRange": {"name": "n", "range": {
            "startIndex": 1, "endIndex": 3}}})["replies"])
    assert ids[0] == ids[1]


def test_deleting_a_footnote_reference_deletes_the_footnote(ws):
    did = _new(ws, "Claim\n")
    fid = _bu(ws, did, {"createFootnote": {"location": {"index": 6}}})["replies"][0]["createFootnote"]["footnoteId"]
    assert fid in ok(ws, "docs_documents_get", {"documentId": did})["footnotes"]
    _bu(ws, did, {"deleteContentRange": {"range": {"startIndex": 6, "endIndex": 7}}})
    assert "footnotes" not in ok(ws, "docs_documents_get", {"documentId": did})


def test_a_copy_keeps_the_structure(ws):
    did = _new(ws, "Title\n")
    _bu(ws, did, {"updateParagraphStyle": {"range": {"startIndex": 1, "endIndex": 2}, "fields": "namedStyleType",
                                           "paragraphStyle": {"namedStyleType": "TITLE"}}},
        {"insertTable": {"rows": 1, "columns": 3, "endOfSegmentLocation": {}}})
    copy = ok(ws, "drive_files_copy", {"fileId": did, "body": {"name": "Copy"}})["id"]
    got = ok(ws, "docs_documents_get", {"documentId": copy})
    assert got["title"] == "Copy" and got["body"] == ok(ws, "docs_documents_get", {"documentId": did})["body"]


def test_an_export_over_ten_megabytes_is_export_size_limit_exceeded(ws):
    d = ws.docs.add_document(title="Huge", text="word " * (2 * 1024 * 1024 + 1))
    e = err(ws, "drive_files_export", {"fileId": d.documentId, "mimeType": "text/plain"})
    assert (e["code"], e["errors"][0]["reason"]) == (403, "exportSizeLimitExceeded")
    e = err(ws, "drive_files_export", {"fileId": d.documentId, "mimeType": "application/rtf"})
    assert (e["code"], e["errors"][0]["reason"]) == (400, "badRequest")


def test_a_document_cannot_grow_past_googles_size_limit(ws):
    did = _new(ws, "x\n")
    before = ws.state_hash()
    assert "maximum size" in _bad(ws, did, {"insertText": {"location": {"index": 1}, "text": "y" * 1_020_001}})
    assert ws.state_hash() == before


def test_merged_paragraphs_keep_the_first_ones_style(ws):
    did = _new(ws, "Heading\nbody text\n")
    _bu(ws, did, {"updateParagraphStyle": {"range": {"startIndex": 1, "endIndex": 2}, "fields": "namedStyleType",
                                           "paragraphStyle": {"namedStyleType": "HEADING_2"}}},
        {"deleteContentRange": {"range": {"startIndex": 8, "endIndex": 9}}})  # the heading's newline
    first = _content(ws, did)[1]["paragraph"]
    assert first["elements"][0]["textRun"]["content"] == "Headingbody text\n"
    assert first["paragraphStyle"]["namedStyleType"] == "HEADING_2"


def test_get_with_tabs_content_and_view_modes(ws):
    did = _new(ws, "Tabbed\n")
    got = ok(ws, "docs_documents_get", {"documentId": did, "includeTabsContent": True,
                                         "suggestionsViewMode": "PREVIEW_WITHOUT_SUGGESTIONS"})
    assert "body" not in got and got["suggestionsViewMode"] == "PREVIEW_WITHOUT_SUGGESTIONS"
    tab = got["tabs"][0]
    assert tab["tabProperties"]["tabId"] == "t.0" and tab["documentTab"]["body"] == _content_body(ws, did)
    assert err(ws, "docs_documents_get", {"documentId": did, "suggestionsViewMode": "SIDEWAYS"})["code"] == 400


def _content_body(ws, did: str) -> dict:
    return ok(ws, "docs_documents_get", {"documentId": did})["body"]


def _walk(content: list, start: int) -> int:
    """Google's index invariant: elements abut; a table, each row and each cell take one index before content."""
    for e in content:
        assert e.get("startIndex", 0) == start, (e, start)
        if "table" in e:
            at = start + 1
            for row in e["table"]["tableRows"]:
                assert row["startIndex"] == at
                at += 1
                for c in row["tableCells"]:
                    assert c["startIndex"] == at
                    at = _walk(c["content"], at + 1)
                    assert c["endIndex"] == at
                assert row["endIndex"] == at
            assert e["endIndex"] == at
        if "paragraph" in e:
            els = e["paragraph"]["elements"]
            assert els[-1]["endIndex"] == e["endIndex"] and els[-1]["textRun"]["content"].endswith("\n")
        start = e["endIndex"]
    return start


def _spots(content: list, paras: list, tables: list) -> None:
    for e in content:
        if "paragraph" in e:
            paras.append((e.get("startIndex", 0), e["endIndex"]))
        if "table" in e:
            tables.append(e)
            for row in e["table"]["tableRows"]:
                for c in row["tableCells"]:
                    _spots(c["content"], paras, tables)


def test_random_edits_keep_the_structure_consistent(ws):
    """A seeded walk of edits at indexes taken from the document: no 5xx, and documents.get stays consistent."""
    import random

    rnd = random.Random(7)
    did = _new(ws, "Start\n")
    done = set()
    for _ in range(60):
        paras, tables = [], []
        _spots(_content(ws, did), paras, tables)
        p, q = rnd.choice(paras), rnd.choice(paras)
        i = rnd.randint(p[0], p[1] - 1)
        s, e = sorted((i, rnd.randint(q[0], q[1])))
        e = max(e, s + 1)
        ops = [("insertText", {"location": {"index": i}, "text": rnd.choice(["ab", "x\ny", "\n", "😀"])}),
               ("deleteContentRange", {"range": {"startIndex": s, "endIndex": e}}),
               ("insertTable", {"rows": rnd.randint(1, 2), "columns": rnd.randint(1, 3), "location": {"index": i}}),
               ("updateTextStyle", {"range": {"startIndex": s, "endIndex": e}, "fields": "italic",
                                    "textStyle": {"italic": True}}),
               ("createParagraphBullets", {"range": {"startIndex": s, "endIndex": e},
                                           "bulletPreset": "NUMBERED_DECIMAL_NESTED"}),
               ("createNamedRange", {"name": "r", "range": {"startIndex": s, "endIndex": e}}),
               ("replaceNamedRangeContent", {"namedRangeName": "r", "text": "R"}),
               ("replaceAllText", {"containsText": {"text": rnd.choice(["a", "\n"])}, "replaceText": "b"}),
               ("createFootnote", {"location": {"index": i}}), ("insertPageBreak", {"location": {"index": i}})]
        if tables:
            t = rnd.choice(tables)
            r = rnd.randrange(t["table"]["rows"])
            cell = {"tableStartLocation": {"index": t["startIndex"]}, "rowIndex": r,
                    "columnIndex": rnd.randrange(len(t["table"]["tableRows"][r]["tableCells"]))}
            ops += [("insertTableRow", {"tableCellLocation": cell}), ("insertTableColumn", {"tableCellLocation": cell}),
                    ("deleteTableRow", {"tableCellLocation": cell}), ("deleteTableColumn", {"tableCellLocation": cell}),
                    ("deleteContentRange", {"range": {"startIndex": t["startIndex"], "endIndex": t["endIndex"]}})]
        kind, arg = rnd.choice(ops)
        res = ws.call("docs_documents_batchUpdate", {"documentId": did, "body": {"requests": [{kind: arg}]}})
        assert res.ok or res.status == 400, (kind, arg, res.body)
        if res.ok:
            done.add(kind)
        _walk(_content(ws, did), 0)
    assert {"insertText", "deleteContentRange", "insertTable", "insertTableRow", "deleteTableColumn"} <= done
