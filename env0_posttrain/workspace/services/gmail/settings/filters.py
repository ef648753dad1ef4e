"""Gmail v1 users.settings.filters. Filters act on mail that arrives after they exist (internal deliveries and
messages.import), as in Gmail; a filter's `forward` is recorded but forwards nothing (the workspace sends no mail
outside itself) and needs an accepted forwarding address."""

from __future__ import annotations

from typing import Any

from ....base import api
from ....errors import bad_request, not_found
from ..data_model import Filter, Message
from ..mime import size_estimate
from ..query import Query
from .fields import S, SettingsBase, check_fields

_CRITERIA = {"from": str, "to": str, "subject": str, "query": str, "negatedQuery": str, "hasAttachment": bool,
             "excludeChats": bool, "size": "int", "sizeComparison": ("unspecified", "smaller", "larger")}



class Filters(SettingsBase):
    def filters_of(self, owner: str | None = None) -> list[Filter]:
        """A mailbox's filters, oldest first (verifier helper)."""
        owner = owner or self.ws.me.email
        return sorted((f for f in self.db.filters.values() if f.userId == owner), key=lambda f: f.id)

    def _filter_json(self, f: Filter) -> dict[str, Any]:
        return {"id": f.id, "criteria": dict(f.criteria), "action": dict(f.action)}

    @api("gmail.users.settings.filters.list", f"GET {S}/filters", "List the mailbox's filters.")
    def settings_filters_list(self, userId: str = "me") -> dict[str, Any]:
        rows = [self._filter_json(f) for f in self.filters_of(self.owner(userId))]
        return {"filter": rows} if rows else {}

    @api("gmail.users.settings.filters.get", f"GET {S}/filters/{{id}}", "Get a filter.", params={"id": "filter id"})
    def settings_filters_get(self, id: str, userId: str = "me") -> dict[str, Any]:
        f = self.db.filters.get(f"{self.owner(userId)}/{id}")
        if f is None:
            raise not_found("Filter not found")
        return self._filter_json(f)

    @api("gmail.users.settings.filters.create", f"POST {S}/filters",
         "Create a filter for incoming mail: body {criteria: {from, to, subject, query, hasAttachment}, "
         "action: {addLabelIds, removeLabelIds, forward}}.", writes=True,
         params={"body": "Filter: criteria, action"})
    def settings_filters_create(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        criteria = check_fields("filter.criteria", body.get("criteria") or {}, _CRITERIA)
        action = body.get("action") or {}
        if not isinstance(action, dict) or set(action) - {"addLabelIds", "removeLabelIds", "forward"}:
            raise bad_request("Invalid JSON payload received. Unknown name at 'filter.action'", "invalidArgument")
        if not criteria or not any(action.values()):
            raise bad_request("Filter doesn't have any criteria" if not criteria else "Filter doesn't have any actions",
                              "invalidArgument")
        add, remove = action.get("addLabelIds") or [], action.get("removeLabelIds") or []
        if not isinstance(add, list) or not isinstance(remove, list):
            raise bad_request("Invalid JSON payload received. addLabelIds must be a list", "invalidArgument")
        self.check_labels(owner, add + remove)
        act: dict[str, Any] = {k: v for k, v in (("addLabelIds", add), ("removeLabelIds", remove)) if v}
        if action.get("forward"):
            fwd = self.db.forwardingAddresses.get(f"{owner}/{self._email(action['forward'], 'forward')}")
            if fwd is None or fwd.verificationStatus != "accepted":
                raise bad_request("Unrecognized forwarding address", "failedPrecondition")
            act["forward"] = fwd.forwardingEmail
        for f in self.filters_of(owner):
            if f.criteria == criteria and f.action == act:
                raise bad_request("Filter already exists", "failedPrecondition")
        f = Filter(id="ANe1Bm" + self.new_id("filter", length=28), userId=owner, criteria=criteria, action=act)
        self.db.filters[f"{owner}/{f.id}"] = f
        return self._filter_json(f)

    @api("gmail.users.settings.filters.delete", f"DELETE {S}/filters/{{id}}", "Delete a filter.", writes=True,
         status=204, params={"id": "filter id"})
    def settings_filters_delete(self, id: str, userId: str = "me") -> None:
        if self.db.filters.pop(f"{self.owner(userId)}/{id}", None) is None:
            raise not_found("Filter not found")

    def filter_matches(self, f: Filter, m: Message) -> bool:
        c = f.criteria
        if c.get("from") and c["from"].lower() not in m.sender.lower():
            return False
        if c.get("to") and c["to"].lower() not in " ".join(m.to + m.cc + m.bcc).lower():
            return False
        if c.get("subject") and c["subject"].lower() not in m.subject.lower():
            return False
        if c.get("hasAttachment") and not m.attachments:
            return False
        if c.get("size") and c.get("sizeComparison") in ("smaller", "larger"):
            size = size_estimate(m)
            if (size < c["size"]) != (c["sizeComparison"] == "smaller"):
                return False
        names = self.label_ids_by_name(m.userId)
        if c.get("query") and not Query(c["query"], self.ws.now, names).matches(m):
            return False
        return not (c.get("negatedQuery") and Query(c["negatedQuery"], self.ws.now, names).matches(m))

    def filtered(self, owner: str, m: Message) -> Message:
        """Apply the owner's filters to a message that just arrived."""
        for f in self.filters_of(owner):
            if self.filter_matches(f, m):  # a label deleted since the filter was made is skipped
                add = [lid for lid in f.action.get("addLabelIds", ()) if self.valid_label(owner, lid)]
                m = self.relabel(m, add, f.action.get("removeLabelIds", ()))
        return m

    def add_filter(self, criteria: dict[str, Any], action: dict[str, Any], owner: str | None = None) -> Filter:
        """Plant a filter (label ids as stored; no validation beyond the field names)."""
        owner = owner or self.ws.me.email
        f = Filter(id="ANe1Bm" + self.new_id("filter", length=28), userId=owner,
                   criteria=check_fields("filter.criteria", criteria, _CRITERIA), action=dict(action))
        self.db.filters[f"{owner}/{f.id}"] = f
        return f
