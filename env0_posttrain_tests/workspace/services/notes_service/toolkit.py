"""The test service's rows, its two API methods and its env0 JSON: a list of notes, each one line of text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from env0_posttrain.workspace.base import DB, Row, Service, api, table
from env0_posttrain.workspace.services.env0_shapes import diff_rows

if TYPE_CHECKING:
    from env0_posttrain.workspace.environment import Workspace


class Note(Row):
    id: str
    text: str


class NotesDB(DB):
    notes: dict[str, Note] = table()


class Notes(Service):
    name = "notes"
    DB = NotesDB
    db: NotesDB

    def bootstrap(self) -> None:
        self.db.notes["welcome"] = Note(id="welcome", text="Welcome to notes.")

    @api("notes.notes.list", "GET notes/v1/notes", "List the notes.")
    def notes_list(self) -> dict[str, Any]:
        return {"notes": [n.dump() for n in self.db.notes.values()]}

    @api("notes.notes.insert", "POST notes/v1/notes", "Write a note.", writes=True, params={"body": "{text}"})
    def notes_insert(self, body: dict[str, Any]) -> dict[str, Any]:
        note = Note(id=self.new_id("note"), text=str(body.get("text", "")))
        self.db.notes[note.id] = note
        return note.dump()


def notes_state(ws: Workspace) -> dict[str, Any]:
    return {"notes": [n.dump() for n in ws.service("notes").db.notes.values()]}


def notes_diff(old: dict, cur: dict) -> dict:
    return {"notes": diff_rows(old["notes"], cur["notes"])}
