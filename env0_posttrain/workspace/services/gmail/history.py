"""Gmail users.history.list: the mailbox's change log since a historyId."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request, not_found
from ...paging import check_size, page
from .mailbox import Mailbox, P

HISTORY_TYPES = ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")

_HISTORY_KEY = {"messageAdded": "messagesAdded", "messageDeleted": "messagesDeleted", "labelAdded": "labelsAdded",
                "labelRemoved": "labelsRemoved"}


class History(Mailbox):
    @api("gmail.users.history.list", f"GET {P}/history",
         "Changes to the mailbox since a historyId (from getProfile, a message or a thread).",
         params={"startHistoryId": "required", "historyTypes": "messageAdded|messageDeleted|labelAdded|labelRemoved",
                 "labelId": "", "maxResults": "", "pageToken": ""})
    def history_list(self, startHistoryId: str, userId: str = "me", historyTypes: list[str] | None = None,
                     labelId: str | None = None, maxResults: int | None = None,
                     pageToken: str | None = None) -> dict[str, Any]:
        owner = self.owner(userId)
        try:
            start = int(startHistoryId)
        except ValueError:
            raise bad_request(f"Invalid value for startHistoryId: {startHistoryId}", "invalidArgument") from None
        if start < self.db.historyFloor:  # older than the retained history: the client must do a full sync
            raise not_found("Requested entity was not found.")
        for t in historyTypes or []:
            if t not in HISTORY_TYPES:
                raise bad_request(f"Invalid value at 'history_types' ({t})", "invalidArgument")
        size = check_size(maxResults, 100, 500, "maxResults")
        groups: dict[int, dict[str, Any]] = {}
        for key in self._history_keys(start):
            r = self.db.historyLog[key]
            if r.userId != owner or (historyTypes and r.kind not in historyTypes):
                continue
            cur = self.db.messages.get(r.messageId)
            labels = list(cur.labelIds) if cur is not None else list(r.labelIds)
            if labelId and labelId not in labels and labelId not in r.labelIds:
                continue
            msg = {"id": r.messageId, "threadId": r.threadId}
            g = groups.setdefault(r.id, {"id": str(r.id), "messages": []})
            g["messages"].append(msg)
            entry = {"message": {**msg, "labelIds": labels}}
            if r.kind in ("labelAdded", "labelRemoved"):
                entry["labelIds"] = list(r.labelIds)
            g.setdefault(_HISTORY_KEY[r.kind], []).append(entry)
        chunk, nxt = page(list(groups.values()), pageToken, size)
        out: dict[str, Any] = {"history": chunk} if chunk else {}
        if nxt:
            out["nextPageToken"] = nxt
        out["historyId"] = str(self.db.history)
        return out

    def _history_keys(self, start: int) -> list[str]:
        """Log keys after `start`, in order (the sorted key list is memoised until the log changes)."""
        import bisect

        keys = self.db.cached("history_keys", self.db.historyLog.version, lambda: sorted(self.db.historyLog))
        return keys[bisect.bisect_right(keys, f"{start:012d}/~"):]
