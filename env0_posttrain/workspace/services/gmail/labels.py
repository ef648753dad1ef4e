"""Gmail users.labels: system and user labels with their message counts."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from ...base import api
from ...errors import bad_request, conflict, not_found
from .data_model import SYSTEM_LABELS, Label
from .mailbox import Mailbox, P


@functools.cache
def palette() -> dict[str, frozenset[str]]:
    """The label colors Gmail allows, per field (label_colors.json: the discovery document's LabelColor list)."""
    data = json.loads(Path(__file__).with_name("label_colors.json").read_text())
    return {k: frozenset(data[k]) for k in ("backgroundColor", "textColor")}


def _color(value: Any) -> dict[str, str] | None:
    """A label's color as Gmail takes it: both fields, each from the palette (400 otherwise); None clears it."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - {"backgroundColor", "textColor"}:
        raise bad_request("Invalid value for color", "invalidArgument")
    out = {}
    for k, allowed in palette().items():
        c = value.get(k)
        if not isinstance(c, str) or not c:
            raise bad_request("Label color requires both backgroundColor and textColor", "invalidArgument")
        if c.lower() not in allowed:
            raise bad_request(f"Label color {c} is not on the allowed color palette", "invalidArgument")
        out[k] = c.lower()
    return out


class Labels(Mailbox):
    def _label_json(self, l: Label) -> dict[str, Any]:
        return l.model_dump(mode="json", exclude_none=True, exclude={"userId"})

    @api("gmail.users.labels.list", f"GET {P}/labels", "List labels (system and user) with ids.")
    def labels_list(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        system = [{"id": n, "name": n, "type": "system"} for n in SYSTEM_LABELS]
        return {"labels": system + [self._label_json(l) for l in sorted(self.user_labels(owner), key=lambda l: l.id)]}

    @api("gmail.users.labels.get", f"GET {P}/labels/{{id}}", "Get a label with message counts.", params={"id": ""})
    def labels_get(self, id: str, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        if id in SYSTEM_LABELS:
            out: dict[str, Any] = {"id": id, "name": id, "type": "system"}
        else:
            l = self.db.labels.get(f"{owner}/{id}")
            if l is None:
                raise not_found()
            out = self._label_json(l)
        msgs = [m for m in self.db.messages.values() if m.userId == owner and id in m.labelIds]
        threads = {m.threadId for m in msgs}
        unread = [m for m in msgs if "UNREAD" in m.labelIds]
        out.update(messagesTotal=len(msgs), messagesUnread=len(unread), threadsTotal=len(threads),
                   threadsUnread=len({m.threadId for m in unread}))
        return out

    @api("gmail.users.labels.create", f"POST {P}/labels", "Create a label.", writes=True,
         params={"body": "{name}"})
    def labels_create(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        name = self._check_label_name(owner, body.get("name"), None)
        color = _color(body.get("color"))
        self.db.seq += 1
        lid = f"Label_{self.db.seq}"
        l = Label(id=lid, userId=owner, name=name,
                  messageListVisibility=body.get("messageListVisibility", "show"),
                  labelListVisibility=body.get("labelListVisibility", "labelShow"), color=color)
        self.db.labels[f"{owner}/{lid}"] = l
        return self._label_json(l)

    def _check_label_name(self, owner: str, name: Any, own_id: str | None) -> str:
        if not isinstance(name, str) or not name.strip():
            raise bad_request("Invalid label name", "invalidArgument")
        name = name.strip()
        if name.upper() in SYSTEM_LABELS:
            raise bad_request("Invalid label name", "invalidArgument")
        for l in self.user_labels(owner):
            if l.name.lower() == name.lower() and l.id != own_id:
                raise conflict("Label name exists or conflicts", "duplicate")
        return name

    @api("gmail.users.labels.patch", f"PATCH {P}/labels/{{id}}", "Rename or restyle a label.", writes=True,
         params={"id": "", "body": "{name}"})
    def labels_patch(self, id: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        if id in SYSTEM_LABELS:
            raise bad_request(f"Invalid label: {id}", "invalidArgument")
        l = self.db.labels.get(f"{owner}/{id}")
        if l is None:
            raise not_found()
        upd = {k: body[k] for k in ("messageListVisibility", "labelListVisibility") if k in body}
        if "color" in body:
            upd["color"] = _color(body["color"])
        if "name" in body:
            upd["name"] = self._check_label_name(owner, body["name"], id)
        l = l.model_copy(update=upd)
        self.db.labels[f"{owner}/{id}"] = l
        return self._label_json(l)

    @api("gmail.users.labels.update", f"PUT {P}/labels/{{id}}",
         "Replace a label (name is required; fields left out are reset).", writes=True,
         params={"id": "", "body": "{name, messageListVisibility, labelListVisibility, color}"})
    def labels_update(self, id: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        if id in SYSTEM_LABELS:
            raise bad_request(f"Invalid label: {id}", "invalidArgument")
        if f"{owner}/{id}" not in self.db.labels:
            raise not_found()
        if "name" not in body:
            raise bad_request("Invalid label name", "invalidArgument")
        full = {"name": body["name"], "messageListVisibility": body.get("messageListVisibility", "show"),
                "labelListVisibility": body.get("labelListVisibility", "labelShow"), "color": body.get("color")}
        for k in ("messageListVisibility", "labelListVisibility"):
            if not isinstance(full[k], str):
                raise bad_request(f"Invalid value for {k}", "invalidArgument")
        if full["color"] is not None and not isinstance(full["color"], dict):
            raise bad_request("Invalid value for color", "invalidArgument")
        return self.labels_patch(id, full, userId)

    @api("gmail.users.labels.delete", f"DELETE {P}/labels/{{id}}", "Delete a label (messages keep existing).",
         writes=True, status=204, params={"id": ""})
    def labels_delete(self, id: str, userId: str = "me") -> None:
        owner = self.owner(userId)
        if id in SYSTEM_LABELS:
            raise bad_request(f"Invalid label: {id}", "invalidArgument")
        if self.db.labels.pop(f"{owner}/{id}", None) is None:
            raise not_found()
        for m in list(self.db.messages.values()):
            if m.userId == owner and id in m.labelIds:
                self.relabel(m, remove=(id,))
