"""Docs state: each document's title and plain text (paragraphs end with a newline).

The Docs JSON (structural elements with start/end indexes) is rendered from the text on read,
so indexes are always consistent with the content.
"""

from __future__ import annotations

from ...base import DB, Row, table


class Document(Row):
    documentId: str
    title: str
    text: str = "\n"
    revision: int = 1


class DocsDB(DB):
    documents: dict[str, Document] = table()
