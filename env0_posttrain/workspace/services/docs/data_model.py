"""Docs state: each document's title, its segments as units (units.py) and its document-level parts.

`text` is the body's plain text (paragraphs end with a newline, markers dropped), kept beside the structure for the
readers that want words only (Drive search and revisions, verifiers, env0's state export). A document planted
with text only has `body` None: its structure is that text's paragraphs until its first edit.
"""

from __future__ import annotations

from typing import Any

from ...base import DB, Row, table


class Document(Row):
    documentId: str
    title: str
    text: str = "\n"
    revision: int = 1
    body: list[Any] | None = None              # units.encode() of the body
    segments: dict[str, list[Any]] = {}        # headerId / footerId / footnoteId -> units.encode()
    kinds: dict[str, str] = {}                 # segment id -> "header" | "footer" | "footnote"
    lists: dict[str, Any] = {}                 # listId -> {"listProperties": ...}
    names: dict[str, str] = {}                 # namedRangeId -> name
    style: dict[str, Any] = {}                 # documentStyle fields set by updateDocumentStyle / createHeader
    serial: int = 0                            # ids minted so far (ids derive from documentId and this)


class DocsDB(DB):
    documents: dict[str, Document] = table()
