"""Docs v1 methods (documents get / create / batchUpdate) and the seeding helper."""

from __future__ import annotations

from typing import Any

from ...base import Service, api
from ...errors import bad_request, forbidden, google_error
from ..drive.data_model import GDOC
from .data_model import DocsDB, Document


def _render_body(text: str) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [{"endIndex": 1, "sectionBreak": {"sectionStyle": {
        "columnSeparatorStyle": "NONE", "contentDirection": "LEFT_TO_RIGHT", "sectionType": "CONTINUOUS"}}}]
    idx = 1
    for para in text.splitlines(keepends=True):
        end = idx + len(para)
        style = "NORMAL_TEXT"
        shown = para
        content.append({"startIndex": idx, "endIndex": end, "paragraph": {
            "elements": [{"startIndex": idx, "endIndex": end, "textRun": {"content": shown, "textStyle": {}}}],
            "paragraphStyle": {"namedStyleType": style, "direction": "LEFT_TO_RIGHT"}}})
        idx = end
    return content


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
        return {"title": d.title, "body": {"content": _render_body(d.text)},
                "documentStyle": {"pageSize": {"height": {"magnitude": 792, "unit": "PT"},
                                               "width": {"magnitude": 612, "unit": "PT"}}},
                "revisionId": f"ALm37B{d.revision:08d}", "suggestionsViewMode": "SUGGESTIONS_INLINE",
                "documentId": d.documentId}

    @api("docs.documents.get", "GET v1/documents/{documentId}", "Get a document (text in body.content).",
         params={"documentId": ""})
    def documents_get(self, documentId: str, suggestionsViewMode: str | None = None,
                      includeTabsContent: bool | None = None) -> dict[str, Any]:
        return self.render(self._doc(documentId))

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
         "replaceText}, deleteContentRange{range{startIndex,endIndex}}.", writes=True,
         params={"documentId": "", "body": "{requests: [...]}"})
    def documents_batchUpdate(self, documentId: str, body: dict) -> dict[str, Any]:
        d = self._doc(documentId, need=3)
        reqs = body.get("requests")
        if not isinstance(reqs, list) or not reqs:
            raise bad_request("Invalid requests: at least one request is required.", "badRequest")
        text, replies = d.text, []
        for i, r in enumerate(reqs):
            if not isinstance(r, dict) or len(r) != 1:
                raise bad_request(f"Invalid requests[{i}]: exactly one request kind is required.", "badRequest")
            kind, arg = next(iter(r.items()))
            if not isinstance(arg, dict):
                raise bad_request(f"Invalid requests[{i}].{kind}", "badRequest")
            text, reply = self._apply(i, kind, arg, text)
            replies.append(reply)
        self.db.documents[d.documentId] = d.model_copy(update={"text": text, "revision": d.revision + 1})
        self.ws.drive.document_edited(d.documentId, d.text, text)
        return {"documentId": d.documentId, "replies": replies,
                "writeControl": {"requiredRevisionId": f"ALm37B{d.revision + 1:08d}"}}

    def _apply(self, i: int, kind: str, arg: dict[str, Any], text: str) -> tuple[str, dict[str, Any]]:
        end = len(text) + 1  # body end index (exclusive), the final newline sits at end-1
        where = f"Invalid requests[{i}].{kind}"
        if kind == "insertText":
            t = arg.get("text")
            if not isinstance(t, str):
                raise bad_request(f"{where}: text is required.", "badRequest")
            if "endOfSegmentLocation" in arg:
                pos = end - 1
            else:
                idx = (arg.get("location") or {}).get("index") if isinstance(arg.get("location"), dict) else None
                if not isinstance(idx, int) or isinstance(idx, bool):
                    raise bad_request(f"{where}: location.index is required.", "badRequest")
                if idx < 1 or idx >= end:
                    raise bad_request(f"{where}: Index {idx} must be less than the end index of the referenced "
                                      f"segment, {end}.", "badRequest")
                pos = idx
            off = pos - 1
            return text[:off] + t + text[off:], {}
        if kind == "deleteContentRange":
            rng = arg.get("range")
            s = rng.get("startIndex") if isinstance(rng, dict) else None
            e = rng.get("endIndex") if isinstance(rng, dict) else None
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in (s, e)):
                raise bad_request(f"{where}: range.startIndex and range.endIndex are required.", "badRequest")
            if s < 1 or e <= s:
                raise bad_request(f"{where}: The range should not be empty.", "badRequest")
            if e >= end:
                raise bad_request(f"{where}: Index {e - 1} must be less than the end index of the referenced "
                                  f"segment, {end - 1}.", "badRequest")
            return text[:s - 1] + text[e - 1:], {}
        if kind == "replaceAllText":
            ct = arg.get("containsText")
            needle = ct.get("text") if isinstance(ct, dict) else None
            repl = arg.get("replaceText", "")
            if not isinstance(needle, str) or not needle or not isinstance(repl, str):
                raise bad_request(f"{where}: containsText.text is required.", "badRequest")
            if ct.get("matchCase", False):
                n = text.count(needle)
                return text.replace(needle, repl), {"replaceAllText": {"occurrencesChanged": n} if n else {}}
            import re
            new, n = re.subn(re.escape(needle), lambda _m: repl, text, flags=re.IGNORECASE)
            return new, {"replaceAllText": {"occurrencesChanged": n} if n else {}}
        raise bad_request(f"Invalid requests[{i}]: unsupported request {kind!r}.", "badRequest")

    # -- shared with drive ------------------------------------------------------------------------
    def ensure_document(self, fid: str, title: str, text: str) -> Document:
        if not text.endswith("\n"):
            text += "\n"
        d = Document(documentId=fid, title=title, text=text)
        self.db.documents[fid] = d
        return d

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

