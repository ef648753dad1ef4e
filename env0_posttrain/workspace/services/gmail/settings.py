"""Gmail v1 users.settings.*: filters, forwarding addresses, send-as aliases and delegates (the
single-resource settings are in prefs.py).

Filters act on mail that arrives after they exist (internal deliveries and messages.import), as in
Gmail; a filter's `forward` and autoForwarding are recorded but forward nothing (the workspace sends
no mail outside itself). Addresses in the company's domain are verified at once; others stay
"pending" (no verification mail can be answered), so autoForwarding and forward actions reject them.
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request, conflict, not_found
from .data_model import Delegate, Filter, ForwardingAddress, MailSetting, Message, SendAs
from .mailbox import Mailbox
from .mime import size_estimate
from .query import Query

S = "gmail/v1/users/{userId}/settings"
_CRITERIA = {"from": str, "to": str, "subject": str, "query": str, "negatedQuery": str, "hasAttachment": bool,
             "excludeChats": bool, "size": "int", "sizeComparison": ("unspecified", "smaller", "larger")}


def check_fields(where: str, body: Any, spec: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad_request(f"Invalid JSON payload received. {where} must be an object", "invalidArgument")
    out: dict[str, Any] = {}
    for k, v in body.items():
        kind = spec.get(k)
        if kind is None:
            raise bad_request(f'Invalid JSON payload received. Unknown name "{k}" at \'{where}\'', "invalidArgument")
        if v is None:
            continue
        ok = (isinstance(v, kind) if kind in (bool, str) else v in kind if isinstance(kind, tuple)
              else (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, str) and v.isdigit()))
        if not ok:
            raise bad_request(f"Invalid value at '{where}.{k}' ({v!r})", "invalidArgument")
        out[k] = str(v) if kind == "ms" else int(v) if kind == "int" else v
    return out


class MailSettings(Mailbox):
    def _email(self, value: Any, field: str) -> str:
        if not isinstance(value, str) or "@" not in value or " " in value.strip():
            raise bad_request(f"Invalid {field}", "invalidArgument")
        return value.strip().lower()

    def _status(self, email: str) -> str:
        return "accepted" if email.endswith("@" + self.ws.domain) else "pending"

    # -- filters ------------------------------------------------------------------------------------
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

    # -- forwarding addresses -----------------------------------------------------------------------
    def _fwd_json(self, f: ForwardingAddress) -> dict[str, Any]:
        return {"forwardingEmail": f.forwardingEmail, "verificationStatus": f.verificationStatus}

    @api("gmail.users.settings.forwardingAddresses.list", f"GET {S}/forwardingAddresses",
         "List addresses mail may be forwarded to.")
    def settings_forwardingAddresses_list(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        rows = [self._fwd_json(f) for k, f in sorted(self.db.forwardingAddresses.items()) if f.userId == owner]
        return {"forwardingAddresses": rows} if rows else {}

    @api("gmail.users.settings.forwardingAddresses.get", f"GET {S}/forwardingAddresses/{{forwardingEmail}}",
         "Get a forwarding address.", params={"forwardingEmail": ""})
    def settings_forwardingAddresses_get(self, forwardingEmail: str, userId: str = "me") -> dict[str, Any]:
        f = self.db.forwardingAddresses.get(f"{self.owner(userId)}/{forwardingEmail.strip().lower()}")
        if f is None:
            raise not_found()
        return self._fwd_json(f)

    @api("gmail.users.settings.forwardingAddresses.create", f"POST {S}/forwardingAddresses",
         "Add a forwarding address (an address outside the company stays pending verification).", writes=True,
         params={"body": "{forwardingEmail}"})
    def settings_forwardingAddresses_create(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        email = self._email(body.get("forwardingEmail"), "forwardingEmail")
        if f"{owner}/{email}" in self.db.forwardingAddresses:
            raise conflict("Forwarding address already exists", "alreadyExists")
        f = ForwardingAddress(userId=owner, forwardingEmail=email, verificationStatus=self._status(email))
        self.db.forwardingAddresses[f"{owner}/{email}"] = f
        return self._fwd_json(f)

    @api("gmail.users.settings.forwardingAddresses.delete", f"DELETE {S}/forwardingAddresses/{{forwardingEmail}}",
         "Remove a forwarding address (and turn off auto-forwarding to it).", writes=True, status=204,
         params={"forwardingEmail": ""})
    def settings_forwardingAddresses_delete(self, forwardingEmail: str, userId: str = "me") -> None:
        owner = self.owner(userId)
        email = forwardingEmail.strip().lower()
        if self.db.forwardingAddresses.pop(f"{owner}/{email}", None) is None:
            raise not_found()
        auto = self.setting(owner, "autoForwarding")  # type: ignore[attr-defined]
        if auto.get("emailAddress") == email:
            self.db.mailSettings[f"{owner}/autoForwarding"] = MailSetting(userId=owner, name="autoForwarding",
                                                                          value={"enabled": False})

    # -- send-as aliases ----------------------------------------------------------------------------
    def _send_as(self, owner: str, email: str) -> SendAs:
        row = self.db.sendAs.get(f"{owner}/{email.strip().lower()}")
        if row is None and email.strip().lower() == owner:
            person = self.ws.person(owner)
            row = SendAs(userId=owner, sendAsEmail=owner, displayName=person.name if person else "", treatAsAlias=False)
        if row is None:
            raise not_found()
        return row

    def _send_as_json(self, s: SendAs) -> dict[str, Any]:
        primary = s.sendAsEmail == s.userId
        default = s.isDefault or (primary and not any(r.isDefault for r in self.db.sendAs.values()
                                                      if r.userId == s.userId and r.sendAsEmail != s.userId))
        out = {"sendAsEmail": s.sendAsEmail, "displayName": s.displayName, "replyToAddress": s.replyToAddress or "",
               "signature": s.signature, "isPrimary": primary, "isDefault": default}
        if not primary:
            out.update(treatAsAlias=s.treatAsAlias, verificationStatus=s.verificationStatus)
        return out

    @api("gmail.users.settings.sendAs.list", f"GET {S}/sendAs", "List the addresses you can send as (with signatures).")
    def settings_sendAs_list(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        rows = [self._send_as(owner, owner)] + [r for k, r in sorted(self.db.sendAs.items())
                                                if r.userId == owner and r.sendAsEmail != owner]
        return {"sendAs": [self._send_as_json(r) for r in rows]}

    @api("gmail.users.settings.sendAs.get", f"GET {S}/sendAs/{{sendAsEmail}}", "Get a send-as address.",
         params={"sendAsEmail": ""})
    def settings_sendAs_get(self, sendAsEmail: str, userId: str = "me") -> dict[str, Any]:
        return self._send_as_json(self._send_as(self.owner(userId), sendAsEmail))

    def _put_send_as(self, owner: str, row: SendAs, body: dict) -> dict[str, Any]:
        upd = check_fields("sendAs", {k: v for k, v in body.items() if k not in ("sendAsEmail", "isPrimary",
                                                                            "verificationStatus", "smtpMsa")},
                     {"displayName": str, "replyToAddress": str, "signature": str, "isDefault": bool,
                      "treatAsAlias": bool})
        if upd.get("isDefault") is False and row.isDefault:
            raise bad_request("Cannot unset isDefault; make another address the default", "invalidArgument")
        if upd.get("isDefault"):
            if row.verificationStatus != "accepted":
                raise bad_request("Send-as address is not verified", "failedPrecondition")
            for k, r in list(self.db.sendAs.items()):
                if r.userId == owner and r.isDefault and r.sendAsEmail != row.sendAsEmail:
                    self.db.sendAs[k] = r.model_copy(update={"isDefault": False})
        row = row.model_copy(update=upd)
        self.db.sendAs[f"{owner}/{row.sendAsEmail}"] = row
        return self._send_as_json(row)

    @api("gmail.users.settings.sendAs.create", f"POST {S}/sendAs",
         "Add a send-as alias (outside the company it stays pending verification).", writes=True,
         params={"body": "{sendAsEmail, displayName, replyToAddress, signature, isDefault}"})
    def settings_sendAs_create(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        email = self._email(body.get("sendAsEmail"), "sendAsEmail")
        if email == owner or f"{owner}/{email}" in self.db.sendAs:
            raise conflict("Send-as address already exists", "alreadyExists")
        return self._put_send_as(owner, SendAs(userId=owner, sendAsEmail=email, verificationStatus=self._status(email)),
                                 body)

    @api("gmail.users.settings.sendAs.update", f"PUT {S}/sendAs/{{sendAsEmail}}",
         "Replace a send-as address's settings (display name, signature, reply-to, default).", writes=True,
         params={"sendAsEmail": "", "body": "SendAs"})
    def settings_sendAs_update(self, sendAsEmail: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        row = self._send_as(owner, sendAsEmail)
        blank = row.model_copy(update={"displayName": "", "replyToAddress": None, "signature": ""})
        return self._put_send_as(owner, blank, body)

    @api("gmail.users.settings.sendAs.patch", f"PATCH {S}/sendAs/{{sendAsEmail}}",
         "Change some of a send-as address's settings, e.g. {signature}.", writes=True,
         params={"sendAsEmail": "", "body": "SendAs fields to change"})
    def settings_sendAs_patch(self, sendAsEmail: str, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        return self._put_send_as(owner, self._send_as(owner, sendAsEmail), body)

    @api("gmail.users.settings.sendAs.delete", f"DELETE {S}/sendAs/{{sendAsEmail}}", "Remove a send-as alias.",
         writes=True, status=204, params={"sendAsEmail": ""})
    def settings_sendAs_delete(self, sendAsEmail: str, userId: str = "me") -> None:
        owner = self.owner(userId)
        row = self._send_as(owner, sendAsEmail)
        if row.sendAsEmail == owner:
            raise bad_request("Cannot delete the primary send-as address", "invalidArgument")
        del self.db.sendAs[f"{owner}/{row.sendAsEmail}"]

    @api("gmail.users.settings.sendAs.verify", f"POST {S}/sendAs/{{sendAsEmail}}/verify",
         "Re-send the verification mail for a pending send-as alias.", writes=True, status=204,
         params={"sendAsEmail": ""})
    def settings_sendAs_verify(self, sendAsEmail: str, userId: str = "me") -> None:
        row = self._send_as(self.owner(userId), sendAsEmail)
        if row.verificationStatus != "pending":
            raise bad_request("Send-as address does not need verification", "failedPrecondition")

    # -- delegates ----------------------------------------------------------------------------------
    @api("gmail.users.settings.delegates.list", f"GET {S}/delegates", "List who may read and send as you.")
    def settings_delegates_list(self, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        rows = [{"delegateEmail": d.delegateEmail, "verificationStatus": d.verificationStatus}
                for k, d in sorted(self.db.delegates.items()) if d.userId == owner]
        return {"delegates": rows} if rows else {}

    @api("gmail.users.settings.delegates.get", f"GET {S}/delegates/{{delegateEmail}}", "Get a delegate.",
         params={"delegateEmail": ""})
    def settings_delegates_get(self, delegateEmail: str, userId: str = "me") -> dict[str, Any]:
        d = self.db.delegates.get(f"{self.owner(userId)}/{delegateEmail.strip().lower()}")
        if d is None:
            raise not_found()
        return {"delegateEmail": d.delegateEmail, "verificationStatus": d.verificationStatus}

    @api("gmail.users.settings.delegates.create", f"POST {S}/delegates",
         "Let a colleague (same company) read, send and delete your mail.", writes=True,
         params={"body": "{delegateEmail}"})
    def settings_delegates_create(self, body: dict, userId: str = "me") -> dict[str, Any]:
        owner = self.owner(userId)
        email = self._email(body.get("delegateEmail"), "delegateEmail")
        if email == owner or self.ws.person(email) is None:
            raise bad_request("Invalid delegate: the delegate must be another user in your organization",
                              "invalidArgument")
        if f"{owner}/{email}" in self.db.delegates:
            raise conflict("Delegate already exists", "alreadyExists")
        self.db.delegates[f"{owner}/{email}"] = Delegate(userId=owner, delegateEmail=email)
        return {"delegateEmail": email, "verificationStatus": "accepted"}

    @api("gmail.users.settings.delegates.delete", f"DELETE {S}/delegates/{{delegateEmail}}", "Remove a delegate.",
         writes=True, status=204, params={"delegateEmail": ""})
    def settings_delegates_delete(self, delegateEmail: str, userId: str = "me") -> None:
        if self.db.delegates.pop(f"{self.owner(userId)}/{delegateEmail.strip().lower()}", None) is None:
            raise not_found()

    # -- seeding helpers ----------------------------------------------------------------------------
    def add_filter(self, criteria: dict[str, Any], action: dict[str, Any], owner: str | None = None) -> Filter:
        """Plant a filter (label ids as stored; no validation beyond the field names)."""
        owner = owner or self.ws.me.email
        f = Filter(id="ANe1Bm" + self.new_id("filter", length=28), userId=owner,
                   criteria=check_fields("filter.criteria", criteria, _CRITERIA), action=dict(action))
        self.db.filters[f"{owner}/{f.id}"] = f
        return f

    def add_forwarding_address(self, email: str, owner: str | None = None, status: str | None = None) -> None:
        owner = owner or self.ws.me.email
        email = email.lower()
        self.db.forwardingAddresses[f"{owner}/{email}"] = ForwardingAddress(
            userId=owner, forwardingEmail=email, verificationStatus=status or self._status(email))
