"""Docs v1 methods (documents get / create / batchUpdate) and the seeding helper."""

from __future__ import annotations

import copy
from typing import Any

from ...base import Service, api
from ...errors import bad_request, forbidden, google_error
from ..drive.data_model import GDOC
from . import render as R
from .data_model import DocsDB, Document
from .export import EXPORT_LIMIT, export
from .requests import Editor, apply, named_ranges
from .units import FOOTNOTE_REF, Unit, decode, encode, from_text, plain_text


REVISION_PREFIX = "ALm37B"
VIEW_MODES = ("DEFAULT_FOR_CURRENT_ACCESS", "SUGGESTIONS_INLINE", "PREVIEW_SUGGESTIONS_ACCEPTED",
              "PREVIEW_WITHOUT_SUGGESTIONS")
DOC_STYLE = {"background": {"color": {}}, "pageNumberStart": 1,
             "marginTop": {"magnitude": 72, "unit": "PT"}, "marginBottom": {"magnitude": 72, "unit": "PT"},
             "marginRight": {"magnitude": 72, "unit": "PT"}, "marginLeft": {"magnitude": 72, "unit": "PT"},
             "pageSize": {"height": {"magnitude": 792, "unit": "PT"}, "width": {"magnitude": 612, "unit": "PT"}},
             "marginHeader": {"magnitude": 36, "unit": "PT"}, "marginFooter": {"magnitude": 36, "unit": "PT"}}


def revision_id(n: int) -> str:
    return f"{REVISION_PREFIX}{n:08d}"


def body_units(d: Document) -> list[Unit]:
    return decode(d.body) if d.body is not None else from_text(d.text, body=True)


def editor(d: Document, people: Any = None) -> Editor:
    segs = {"": body_units(d)} | {k: decode(v) for k, v in d.segments.items()}
    return Editor(d.documentId, segs, dict(d.kinds), copy.deepcopy(d.lists), dict(d.names), copy.deepcopy(d.style),
                  d.serial, people)


def stored(d: Document, ed: Editor, **update: Any) -> Document:
    body = ed.seg[""]
    return d.model_copy(update={"body": encode(body), "text": plain_text(body),
                                "segments": {k: encode(v) for k, v in ed.seg.items() if k},
                                "kinds": dict(ed.kinds), "lists": ed.lists, "names": dict(ed.names),
                                "style": ed.style, "serial": ed.serial, **update})


class Docs(Service):
    name = "docs"
    DB = DocsDB
    db: DocsDB

    def bootstrap(self) -> None:
        pass

    def _doc(self, documentId: str, need: int = 1) -> Document:
        d = self.db.documents.get(documentId)
        role = self.ws.drive.caller_role(documentId)
        if d is None or role < 1:
            raise google_error(404, "Requested entity was not found.", "notFound")
        if role < need:
            raise forbidden("The caller does not have permission", "forbidden")
        return d

    def render(self, d: Document) -> dict[str, Any]:
        ed = editor(d)
        body = ed.seg[""]
        fn = {(u.pa or {}).get("footnoteId", ""): str(n + 1)
              for n, u in enumerate(u for u in body if u.ch == FOOTNOTE_REF)}
        out: dict[str, Any] = {"title": d.title, "body": {"content": R.content(body, fn)}}
        for kind in ("header", "footer", "footnote"):
            segs = {k: {f"{kind}Id": k, "content": R.content(ed.seg[k], fn)} for k, v in d.kinds.items() if v == kind}
            if segs:
                out[f"{kind}s"] = segs
        out["documentStyle"] = DOC_STYLE | d.style
        out["namedStyles"] = R.NAMED_STYLES
        if d.lists:
            out["lists"] = copy.deepcopy(d.lists)
        if d.names:
            out["namedRanges"] = named_ranges(ed.seg, d.names)
        return out | {"revisionId": revision_id(d.revision), "suggestionsViewMode": "SUGGESTIONS_INLINE",
                      "documentId": d.documentId}

    @api("docs.documents.get", "GET v1/documents/{documentId}", "Get a document (text in body.content).",
         params={"documentId": ""})
    def documents_get(self, documentId: str, suggestionsViewMode: str | None = None,
                      includeTabsContent: bool | None = None) -> dict[str, Any]:
        if suggestionsViewMode not in (None, *VIEW_MODES):
            raise bad_request(f"Invalid value at 'suggestions_view_mode' ({suggestionsViewMode})", "invalid",
                              "suggestionsViewMode")
        out = self.render(self._doc(documentId))
        if suggestionsViewMode:  # no suggestions exist here, so every mode shows the same content
            out["suggestionsViewMode"] = suggestionsViewMode
        if includeTabsContent is True or includeTabsContent == "true":
            # Google moves the content into the document's tabs (here always one) and leaves the top level empty
            tab = {k: out.pop(k) for k in ("body", "headers", "footers", "footnotes", "documentStyle", "namedStyles",
                                           "lists", "namedRanges") if k in out}
            out["tabs"] = [{"tabProperties": {"tabId": "t.0", "title": "Tab 1"}, "documentTab": tab}]
        return out

    @api("docs.documents.create", "POST v1/documents", "Create an empty document in My Drive.", writes=True,
         params={"body": "{title}"})
    def documents_create(self, body: dict | None = None) -> dict[str, Any]:
        title = (body or {}).get("title") or "Untitled document"
        if not isinstance(title, str):
            raise bad_request("Invalid value at 'document.title'", "invalid")
        f = self.ws.drive.create_document_file(title, self.ws.me.email)
        return self.render(self.db.documents[f.id])

    @api("docs.documents.batchUpdate", "POST v1/documents/{documentId}:batchUpdate",
         "Edit a document. body.requests: insertText{text,location{index}}, replaceAllText{containsText{text},"
         "replaceText}, deleteContentRange{range{startIndex,endIndex}}, insertTable{rows,columns,location}, "
         "updateTextStyle{range,textStyle,fields}, updateParagraphStyle{range,paragraphStyle,fields}, "
         "createParagraphBullets{range,bulletPreset}, createNamedRange, createHeader and the other Docs request "
         "kinds; optional writeControl{requiredRevisionId}.", writes=True,
         params={"documentId": "", "body": "{requests: [...]}"})
    def documents_batchUpdate(self, documentId: str, body: dict) -> dict[str, Any]:
        d = self._doc(documentId, need=3)
        reqs = body.get("requests")
        if not isinstance(reqs, list) or not reqs:
            raise bad_request("Invalid requests: at least one request is required.", "badRequest")
        self._write_control(d, body.get("writeControl"))
        ed, replies = editor(d, self.ws.person), []
        for i, r in enumerate(reqs):
            if not isinstance(r, dict) or len(r) != 1:
                raise bad_request(f"Invalid requests[{i}]: exactly one request kind is required.", "badRequest")
            kind, arg = next(iter(r.items()))
            if not isinstance(arg, dict):
                raise bad_request(f"Invalid requests[{i}].{kind}", "badRequest")
            replies.append(apply(ed, i, kind, arg))
        ed.finish()
        new = stored(d, ed, revision=d.revision + 1)
        self.db.documents[d.documentId] = new
        self.ws.drive.document_edited(d.documentId, d.text, new.text)
        return {"replies": replies, "writeControl": {"requiredRevisionId": revision_id(new.revision)},
                "documentId": d.documentId}

    def _write_control(self, d: Document, wc: Any) -> None:
        """requiredRevisionId must be the latest revision; targetRevisionId may only name the latest here (no
        collaborator edits are ever merged, so an older target is refused as Google refuses a too-old one)."""
        if wc is None:
            return
        if not isinstance(wc, dict):
            raise bad_request("Invalid value at 'write_control'.", "badRequest")
        if "requiredRevisionId" in wc and "targetRevisionId" in wc:
            raise bad_request("Invalid JSON payload received. Oneof field 'control' is already set. Cannot set "
                              "'targetRevisionId'", "badRequest")
        if wc.get("writeMode") not in (None, "WRITE_MODE_UNSPECIFIED", "EDIT"):
            raise bad_request("Invalid writeControl.writeMode: suggestions are not supported by this workspace.",
                              "badRequest")
        current = revision_id(d.revision)
        for key in ("requiredRevisionId", "targetRevisionId"):
            rid = wc.get(key)
            if rid is None or rid == current:
                continue
            known = isinstance(rid, str) and rid.startswith(REVISION_PREFIX) and rid[len(REVISION_PREFIX):].isdigit() \
                and int(rid[len(REVISION_PREFIX):]) < d.revision
            if not known:
                raise bad_request(f"Invalid {key}: {rid!r} is not a revision of this document.", "badRequest")
            if key == "requiredRevisionId":
                raise bad_request(f"The document's latest revision is {current}, not the required revision {rid}.",
                                  "badRequest")
            raise bad_request(f"The target revision {rid} is too far behind the latest revision {current}. Retry "
                              "after reading the latest version of the document.", "badRequest")

    # -- shared with drive ------------------------------------------------------------------------
    def ensure_document(self, fid: str, title: str, text: str) -> Document:
        if not text.endswith("\n"):
            text += "\n"
        d = Document(documentId=fid, title=title, text=text)
        self.db.documents[fid] = d
        return d

    def copy_structure(self, src: str, dst: str) -> None:
        """files.copy of a Google Doc: the copy gets the whole document (styles, tables, lists), not just text."""
        a, b = self.db.documents.get(src), self.db.documents.get(dst)
        if a is not None and b is not None:
            self.db.documents[dst] = a.model_copy(update={"documentId": dst, "title": b.title, "revision": 1})

    def export(self, fid: str, mime: str) -> bytes:
        """files.export's bytes; over Drive's 10 MB export limit it fails as Drive does."""
        d = self.db.documents.get(fid)
        if d is None:
            return b""
        too_big = forbidden("This file is too large to be exported.", "exportSizeLimitExceeded")
        if len(d.text) > EXPORT_LIMIT:
            raise too_big
        data = export(d.documentId, d.title, d.text, body_units(d), d.lists, mime)
        if len(data) > EXPORT_LIMIT:
            raise too_big
        return data

    def rename(self, fid: str, title: str) -> None:
        d = self.db.documents.get(fid)
        if d is not None:
            self.db.documents[fid] = d.model_copy(update={"title": title})

    # -- seeding helper -------------------------------------------------------------------------
    def add_document(self, *, title: str, text: str, owner: str | None = None, folder: str | None = None,
                     shared_with: dict[str, str] | None = None, domain_role: str | None = None) -> Document:
        """Plant a Google Doc (a Drive file plus its text)."""
        f = self.ws.drive.add_file(name=title, content=text, mime_type=GDOC, parent=folder, owner=owner,
                                   shared_with=shared_with, domain_role=domain_role)
        return self.db.documents[f.id]

    def text_of(self, document_id: str) -> str:
        return self.db.documents[document_id].text

