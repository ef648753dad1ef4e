"""Gmail users.threads: list, get, and label writes, trash and delete over a whole thread."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request, not_found
from ...paging import check_size, page
from .data_model import Message
from .mailbox import P, oldest_first
from .messages import _FORMATS, Messages

_LABEL_LISTS = {"body": "{addLabelIds: [..], removeLabelIds: [..]}"}


def _label_lists(body: dict) -> tuple[list, list]:
    add, remove = body.get("addLabelIds") or [], body.get("removeLabelIds") or []
    if not isinstance(add, list) or not isinstance(remove, list):
        raise bad_request("Invalid JSON payload received. addLabelIds must be a list", "invalidArgument")
    return add, remove


class Threads(Messages):
    @api("gmail.users.threads.list", f"GET {P}/threads", "List threads (newest first).",
         params={"q": "Gmail search", "maxResults": "", "pageToken": ""})
    def threads_list(self, userId: str = "me", q: str | None = None, maxResults: int | None = None,
                     pageToken: str | None = None, labelIds: list[str] | None = None,
                     includeSpamTrash: bool = False) -> dict[str, Any]:
        owner = self.owner(userId)
        size = check_size(maxResults, 100, 500, "maxResults")
        threads: dict[str, Message] = {}
        for m in self.search(owner, q, labelIds, includeSpamTrash):
            threads.setdefault(m.threadId, m)
        chunk, nxt = page(list(threads.values()), pageToken, size)
        out: dict[str, Any] = {}
        if chunk:
            out["threads"] = [{"id": m.threadId, "snippet": self.render(m, "minimal")["snippet"],
                               "historyId": str(self._thread_history(owner, m.threadId))} for m in chunk]
        if nxt:
            out["nextPageToken"] = nxt
        out["resultSizeEstimate"] = len(threads)
        return out

    def _thread(self, owner: str, tid: str) -> list[Message]:
        msgs = [m for m in self.db.messages.values() if m.userId == owner and m.threadId == tid]
        if not msgs:
            raise not_found()
        return oldest_first(msgs)

    def _thread_history(self, owner: str, tid: str) -> int:
        return max(m.historyId for m in self._thread(owner, tid))

    @api("gmail.users.threads.get", f"GET {P}/threads/{{id}}", "Get all messages of a thread.",
         params={"id": "thread id", "format": "full|metadata|minimal"})
    def threads_get(self, id: str, userId: str = "me", format: str = "full",
                    metadataHeaders: list[str] | None = None) -> dict[str, Any]:
        owner = self.owner(userId)
        if format not in _FORMATS:
            raise bad_request(f"Invalid value at 'format' ({format})", "invalidArgument", "format")
        msgs = self._thread(owner, id)
        return {"id": id, "historyId": str(max(m.historyId for m in msgs)),
                "messages": [self.render(m, format, metadataHeaders) for m in msgs]}

    def _thread_json(self, owner: str, tid: str) -> dict[str, Any]:
        msgs = self._thread(owner, tid)
        return {"id": tid, "historyId": str(max(m.historyId for m in msgs)),
                "messages": [{"id": m.id, "threadId": m.threadId, "labelIds": list(m.labelIds)} for m in msgs]}

    @api("gmail.users.threads.modify", f"POST {P}/threads/{{id}}/modify",
         "Add/remove labels on every message of a thread.", writes=True, params={"id": "thread id", **_LABEL_LISTS})
    def threads_modify(self, id: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        add, remove = _label_lists(body)
        if not add and not remove:
            raise bad_request("No label add or removes specified", "invalidArgument")
        self.check_labels(owner, add + remove)
        for m in self._thread(owner, id):
            self.relabel(m, add, remove)
        return self._thread_json(owner, id)

    @api("gmail.users.threads.trash", f"POST {P}/threads/{{id}}/trash", "Move a whole thread to trash.", writes=True,
         params={"id": "thread id"})
    def threads_trash(self, id: str, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        for m in self._thread(owner, id):
            self.relabel(m, add=("TRASH",), remove=("INBOX",))
        return self._thread_json(owner, id)

    @api("gmail.users.threads.untrash", f"POST {P}/threads/{{id}}/untrash", "Restore a whole thread from trash.",
         writes=True, params={"id": "thread id"})
    def threads_untrash(self, id: str, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        for m in self._thread(owner, id):
            self.messages_untrash(m.id, userId)
        return self._thread_json(owner, id)

    @api("gmail.users.threads.delete", f"DELETE {P}/threads/{{id}}", "Permanently delete a whole thread.",
         writes=True, status=204, params={"id": "thread id"})
    def threads_delete(self, id: str, userId: str = "me") -> None:
        owner = self.owner(userId)
        for m in self._thread(owner, id):
            self.drop(m)
