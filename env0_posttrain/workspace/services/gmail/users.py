"""Gmail's methods on the mailbox itself (users.getProfile, users.watch, users.stop)."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request
from .data_model import Watch
from .mailbox import Mailbox, P


class Users(Mailbox):
    @api("gmail.users.getProfile", f"GET {P}/profile", "The mailbox address and counts.")
    def get_profile(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        msgs = [m for m in self.db.messages.values() if m.userId == owner]
        return {"emailAddress": owner, "messagesTotal": len(msgs), "threadsTotal": len({m.threadId for m in msgs}),
                "historyId": str(self.db.history)}

    @api("gmail.users.watch", f"POST {P}/watch",
         "Register push notifications to a Pub/Sub topic (nothing is pushed here).", writes=True,
         params={"body": "{topicName: projects/<p>/topics/<t>, labelIds: [..]}"})
    def watch(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        topic = body.get("topicName")
        if not isinstance(topic, str) or not topic.startswith("projects/") or "/topics/" not in topic:
            raise bad_request("Invalid topicName does not match projects/*/topics/*", "invalidArgument")
        labels = body.get("labelIds") or []
        if not isinstance(labels, list):
            raise bad_request("Invalid JSON payload received. labelIds must be a list", "invalidArgument")
        self.check_labels(owner, labels)
        exp = str(self.ws.now_ms() + 7 * 24 * 3600 * 1000)
        self.db.watches[owner] = Watch(userId=owner, topicName=topic, labelIds=tuple(labels), expiration=exp)
        return {"historyId": str(self.db.history), "expiration": exp}

    @api("gmail.users.stop", f"POST {P}/stop", "Stop push notifications for the mailbox.", writes=True, status=204)
    def stop(self, userId: str = "me") -> None:
        self.db.watches.pop(self.owner(userId), None)
