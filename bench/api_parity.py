"""Parameter parity with the real APIs, measured: every documented parameter of every method we serve, driven
against our app and classified.

    .venv/bin/python bench/api_parity.py [--write docs/API-PARITY.md] [--service stripe ...] [--method ID ...]

Where the parameters come from (the official clients, installed with the test extra):
- Stripe: stripe-python's typed parameter classes (`stripe.params.CustomerListParams`, ...), one per method we
  serve; the request options (`api_key`, `idempotency_key`, ...) are the client's, not the API's, and are skipped.
  A parameter typed as a union (`created`: an object or an integer) is probed in each form.
- Google (Gmail, Calendar, Drive, Docs): the discovery documents google-api-python-client ships: every query
  parameter of every method we route, and, for methods whose request body is a resource, every top-level field of
  that resource that a client may write (fields documented as read-only or output-only are left out).

How a parameter is judged: each method first gets a baseline request that succeeds (its required parameters and
path ids from a seeded workspace: our company plus env0's default Stripe account), then one request per
parameter with a valid value added, each on a fresh copy of the same workspace, through the app's own routes
(`api_routes.handle`), encoded as the official client encodes it. The verdict:

- `acts`: the answer or the state differs from the baseline's (the parameter did something);
- `no effect seen`: accepted (2xx) with the same answer and state: a parameter we read whose probe value changes
  nothing here, or one we silently drop; the table's note says which (`dropped` when no handler reads it);
- `refused: not served`: refused the way the real API refuses a name it does not know (Stripe's 400
  `parameter_unknown`, Google's 400 "Unknown name ... Cannot bind query parameter"): a feature we do not have,
  said out loud;
- `refused: value`: a 4xx for a documented parameter we do serve: a gap (the probe value may be at fault: the
  note has the answer);
- `5xx`: a crash (must be none);
- `baseline failed`: no successful baseline request, so the method's parameters were not probed.

Two request-level audits beside the parameters: every `Request` kind of the Docs discovery document, sent alone in a
documents.batchUpdate (`Request.KIND`, on a document with text, a 2x2 table and a named range; `acts` when
documents.get answers differently, revisionId aside; `refused: not served` when the answer says the workspace does
not support that kind; `refused: value` for any other 4xx, the note has it), plus writeControl's two revision
checks; and every export type Drive documents for a Google Doc, asked of drive.files.export (`acts` when served).

The table is written to docs/API-PARITY.md (generated; do not edit by hand).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import typing
from collections import Counter
from datetime import timedelta
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env0_posttrain.workspace.api_routes import handle  # noqa: E402
from env0_posttrain.workspace.environment import Workspace  # noqa: E402
from env0_posttrain.workspace.http_routes import SYSTEM_PARAMS  # noqa: E402
FOLDER = "application/vnd.google-apps.folder"
from env0_posttrain.workspace.tools import TOOLS, ToolSpec  # noqa: E402

KEY = "sk_test_env_0_51deterministic"
DOCUMENTS = {"gmail": "gmail.v1.json", "calendar": "calendar.v3.json", "drive": "drive.v3.json", "docs": "docs.v1.json"}
VERDICTS = ("acts", "no effect seen", "refused: not served", "refused: value", "5xx", "baseline failed", "not probed")
# parameters whose probe shows nothing by design here (why, for the table)
NO_EFFECT_EXPECTED = {
    "return_url": "only redirect-based payment methods use it; test cards never redirect",
    "off_session": "changes 3D Secure handling; our 3D Secure cards confirm without requires_action",
    "client_secret": "authorizes a publishable-key retrieve; the secret key already may",
    "type": "only `card` payment methods exist here",
}


@dataclass
class Row:
    service: str
    method: str
    param: str
    where: str  # query | body | form
    verdict: str
    note: str = ""


@dataclass
class Answer:
    status: int
    body: Any
    state: str = ""

    def same(self, other: "Answer") -> bool:
        return (self.status, self.body, self.state) == (other.status, other.body, other.state)


# -- the world the probes run in ---------------------------------------------------------------------------------
def base_workspace() -> Workspace:
    """Our seeded company plus env0's default Stripe account (Ada Lovelace, Grace Hopper, Alan Turing)."""
    from env0_posttrain.tasks.env0.seed.stripe import seed_stripe

    ws = Workspace.seeded(0)
    with tempfile.TemporaryDirectory() as empty:  # a package without data/stripe_seed.py: the default scenario
        seed_stripe(ws, Path(empty), 0)
    for ch in sorted(ws.stripe.db.charges)[:2]:  # refunds a minute apart, so `created` and cursors split the list
        assert ws.call("stripe_refunds_create", {"charge": ch, "amount": 100}).ok
        ws.now = ws.now + timedelta(minutes=1)
    cus = sorted(c.id for c in ws.stripe.db.customers.values())[0]  # a second card, one of them the default
    pm = ws.call("stripe_paymentMethods_attach", {"payment_method": "pm_card_mastercard", "customer": cus}).body["id"]
    assert ws.call("stripe_customers_update", {"customer": cus, "invoice_settings": {"default_payment_method": pm}}).ok
    _google_fixtures(ws)
    ws.snapshot("seed")
    return ws


RAW = "VG86IGF1ZGl0QGV4YW1wbGUuY29tDQpTdWJqZWN0OiBhdWRpdA0KDQpoaQ"


def _google_fixtures(ws: Workspace) -> None:
    """Objects of the agent's own that some methods need as their path ids (a draft, a delegate, a forwarding
    address, a send-as alias, a comment, a shared drive, a calendar, a file revision), made through the tools."""
    mine = next(f.id for f in ws.drive.db.files.values() if f.ownerEmail == ws.me.email and f.mimeType != FOLDER)
    for name, args in (
            ("gmail_drafts_create", {"body": {"message": {"raw": RAW}}}),
            ("gmail_settings_delegates_create", {"body": {"delegateEmail": ws.directory[4].email}}),
            ("gmail_settings_forwardingAddresses_create", {"body": {"forwardingEmail": ws.directory[5].email}}),
            ("gmail_settings_sendAs_create", {"body": {"sendAsEmail": ws.directory[6].email,
                                                       "displayName": "Audit alias"}}),
            ("drive_comments_create", {"fileId": mine, "fields": "*", "body": {"content": "Audit comment"}}),
            ("drive_drives_create", {"requestId": "audit-drive", "body": {"name": "Audit drive"}}),
            ("calendar_calendars_insert", {"body": {"summary": "Audit calendar"}}),
            ("drive_files_update", {"fileId": mine, "content": "a new revision"})):
        res = ws.call(name, args)
        assert res.ok, (name, res.body)


def send(ws: Workspace, method: str, path: str, query: list[tuple[str, str]], body: bytes = b"",
         ctype: str = "application/json") -> Answer:
    headers = [(b"content-type", ctype.encode()), (b"authorization", f"Bearer {KEY}".encode())]
    scope = {"method": method, "path": path, "query_string": urlencode(query).encode(), "headers": headers}
    status, payload, _ = handle(ws, scope, body)
    try:
        out = json.loads(payload) if payload.strip() else None
    except ValueError:
        out = payload.decode("utf-8", "replace")[:200]
    return Answer(status, out, ws.state_hash())


def _error_text(a: Answer) -> str:
    if isinstance(a.body, dict) and isinstance(a.body.get("error"), dict):
        e = a.body["error"]
        return f"{a.status} {e.get('code', '')} {e.get('message', '')}"[:160]
    return f"{a.status} {json.dumps(a.body)[:150]}"


def verdict(service: str, base: Answer, probe: Answer, known: bool) -> tuple[str, str]:
    if probe.status >= 500:
        return "5xx", _error_text(probe)
    if probe.status >= 400:
        err = probe.body.get("error") if isinstance(probe.body, dict) else None
        msg = (err.get("message") or "") if isinstance(err, dict) else ""
        unknown = (isinstance(err, dict) and err.get("code") == "parameter_unknown") if service == "stripe" else \
            "Unknown name" in msg
        if unknown and not known:
            return "refused: not served", _error_text(probe)
        return "refused: value", _error_text(probe)
    if not probe.same(base):
        return "acts", ""
    return "no effect seen", "" if known else "dropped (no handler reads it)"


# -- Stripe ------------------------------------------------------------------------------------------------------
def stripe_params_class(spec: ToolSpec) -> Any:
    import stripe.params as P

    _, res, meth = spec.method_id.split(".")
    name = res[0].upper() + res[1:]
    if name.endswith("s"):
        name = name[:-1]
    return getattr(P, f"{name}{meth[0].upper()}{meth[1:]}Params")


def stripe_fields(cls: Any) -> dict[str, tuple[Any, bool]]:
    """Parameter -> (type, required), the client's request options left out."""
    from stripe._request_options import RequestOptions

    skip = set(RequestOptions.__annotations__)
    glob = vars(sys.modules[cls.__module__])
    out = {}
    for name, ann in cls.__annotations__.items():
        if name in skip:
            continue
        tp = typing._eval_type(ann if not isinstance(ann, str) else typing.ForwardRef(ann), glob, glob)  # type: ignore[attr-defined]
        required = typing.get_origin(tp) is not typing.NotRequired
        if not required:
            tp = typing.get_args(tp)[0]
        if isinstance(tp, typing.ForwardRef):
            tp = typing._eval_type(tp, glob, glob)  # type: ignore[attr-defined]
        out[name] = (tp, required)
    return out


def _alternatives(tp: Any) -> list[Any]:
    """The forms a parameter is probed in: an object-or-integer union (`created`) in both, any other union in its
    first form (a `Literal[""]` alternative only unsets the field)."""
    if typing.get_origin(tp) not in (typing.Union, __import__("types").UnionType):
        return [tp]
    alts = [a for a in typing.get_args(tp) if a is not type(None) and
            not (typing.get_origin(a) is typing.Literal and typing.get_args(a) == ("",))]
    if any(_is_typeddict(a) for a in alts) and int in alts:
        return [a for a in alts if _is_typeddict(a) or a is int]
    return alts[:1] or [str]


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__annotations__")


def stripe_value(name: str, tp: Any, ctx: dict[str, Any]) -> Any:
    """A valid value of a Stripe parameter: a known one by name, else built from its type."""
    if name in ctx.get("values", {}):
        return ctx["values"][name]
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return typing.get_args(tp)[0]
    if tp is bool:
        return True
    if tp is int:
        return 1
    if tp is str:
        return "audit"
    if origin in (list, typing.List):
        inner = typing.get_args(tp)[0] if typing.get_args(tp) else str
        return [stripe_value(name, inner, ctx)]
    if origin in (dict, typing.Dict):
        return {"audit": "1"}
    if _is_typeddict(tp):
        fields = stripe_fields(tp)
        req = {k: stripe_value(k, t, {}) for k, (t, r) in fields.items() if r}
        if not req and fields:
            k, (t, _) = next(iter(fields.items()))
            req = {k: stripe_value(k, t, {})}
        return req
    if isinstance(tp, str) or tp is typing.Any:
        return "audit"
    alts = _alternatives(tp)
    return stripe_value(name, alts[0], ctx) if alts != [tp] else "audit"


def stripe_setups(ws: Workspace) -> dict[str, Callable[[Workspace], dict[str, Any]]]:
    """Per method: objects made first on the probe's own workspace -> its path ids and required values."""
    cus = sorted(c.id for c in ws.stripe.db.customers.values() if not c.deleted)[0]

    def call(w: Workspace, name: str, **args: Any) -> dict[str, Any]:
        res = w.call(name, args)
        assert res.ok, (name, res.body)
        return res.body

    def pi(w: Workspace, **extra: Any) -> str:
        return call(w, "stripe_paymentIntents_create", amount=2000, currency="usd", customer=cus, **extra)["id"]

    def charge(w: Workspace) -> str:
        return call(w, "stripe_charges_create", amount=2000, currency="usd", source="tok_visa")["id"]

    return {
        "stripe.paymentIntents.capture": lambda w: {"intent": pi(w, payment_method="pm_card_visa", confirm=True,
                                                                 capture_method="manual")},
        "stripe.paymentIntents.confirm": lambda w: {"intent": pi(w, payment_method="pm_card_visa")},
        "stripe.paymentIntents.cancel": lambda w: {"intent": pi(w)},
        "stripe.paymentIntents.update": lambda w: {"intent": pi(w)},
        "stripe.paymentIntents.retrieve": lambda w: {"intent": pi(w)},
        "stripe.charges.retrieve": lambda w: {"charge": charge(w)},
        "stripe.charges.update": lambda w: {"charge": charge(w)},
        "stripe.refunds.create": lambda w: {"charge": charge(w)},
        "stripe.refunds.retrieve": lambda w: {"refund": call(w, "stripe_refunds_create", charge=charge(w))["id"]},
        "stripe.paymentMethods.attach": lambda w: {"payment_method": call(w, "stripe_paymentMethods_attach",
                                                                          payment_method="pm_card_visa",
                                                                          customer=cus)["id"] and "pm_card_visa",
                                                   "customer": cus},
        "stripe.paymentMethods.detach": lambda w: {"payment_method": call(w, "stripe_paymentMethods_attach",
                                                                          payment_method="pm_card_visa",
                                                                          customer=cus)["id"]},
        "stripe.paymentMethods.retrieve": lambda w: {"payment_method": call(w, "stripe_paymentMethods_attach",
                                                                            payment_method="pm_card_visa",
                                                                            customer=cus)["id"]},
        "stripe.events.retrieve": lambda w: {"id": max(w.stripe.db.events)},
        "stripe.balanceTransactions.retrieve": lambda w: {
            "id": w.stripe.db.charges[charge(w)].balance_transaction_id},
        "stripe.customers.retrieve": lambda w: {"customer": cus},
        "stripe.customers.update": lambda w: {"customer": cus},
        "stripe.customers.delete": lambda w: {"customer": cus},
        "stripe.customers.listPaymentMethods": lambda w: {"customer": cus},
        "stripe.charges.create": lambda w: {"amount": 2000, "currency": "usd", "source": "tok_visa"},
        "stripe.paymentIntents.create": lambda w: {"amount": 2000, "currency": "usd", "customer": cus},
        "stripe.customers.search": lambda w: {"query": "name~'a'"},
        "stripe.charges.search": lambda w: {"query": "amount>0"},
        "stripe.paymentIntents.search": lambda w: {"query": "amount>0"},
    }


def _stripe_values(ws: Workspace, spec: ToolSpec, base: dict[str, Any], answer: Any) -> dict[str, Any]:
    """Values that should show an effect: cursors inside the baseline's list, a created time that splits it."""
    d = ws.stripe.db
    cus = sorted(c.id for c in d.customers.values() if not c.deleted)[0]
    ch = sorted(d.charges)[-1]
    values: dict[str, Any] = {"limit": 1, "customer": cus, "payment_method": "pm_card_visa", "currency": "usd",
                              "amount": 1500, "email": "audit@example.com", "receipt_email": "audit@example.com",
                              "description": "audit", "metadata": {"audit": "1"}, "return_url": "https://example.com/r",
                              "source": "tok_mastercard", "statement_descriptor": "AUDIT", "confirm": True,
                              "capture_method": "manual", "amount_to_capture": 1000, "charge": ch, "capture": False,
                              "automatic_payment_methods": {"enabled": True}, "types": ["charge.*"],
                              "invoice_settings": {"default_payment_method": None},
                              "payment_intent": sorted(p.id for p in d.payment_intents.values()
                                                       if p.status == "succeeded")[-1], "query": "name~'a'",
                              "type": "card" if "payment_method" in spec.method_id.lower() or
                              spec.method_id.endswith("listPaymentMethods") else None,
                              "cancellation_reason": "duplicate", "reason": "requested_by_customer",
                              "setup_future_usage": "off_session", "payment_method_types": ["card"],
                              "name": "Audit Name", "phone": "+15555550100", "off_session": True}
    data = answer.get("data") if isinstance(answer, dict) else None
    if spec.method_id.endswith((".update", ".attach")):  # another customer than the object's
        values["customer"] = sorted(c.id for c in d.customers.values())[1]
        values["invoice_settings"] = {"default_payment_method": sorted(
            p.id for p in d.payment_methods.values() if p.customer_id == cus)[0]}
    if spec.method_id == "stripe.balanceTransactions.list":
        values["currency"] = "eur"
    if isinstance(data, list) and len(data) >= 2:
        values["starting_after"] = data[0]["id"]
        values["ending_before"] = data[-1]["id"]
    elif isinstance(data, list) and data:
        values["starting_after"] = values["ending_before"] = data[0]["id"]
    created = sorted({o.get("created") for o in data or [] if isinstance(o, dict) and o.get("created")})
    values["created"] = created[0] if created else 1
    values["_created_range"] = {"gt": created[0]} if created else {"gte": 1}
    expandable = _expandable(answer)
    if expandable:
        values["expand"] = [expandable]
    if spec.method_id.startswith("stripe.customers.") and "listPaymentMethods" not in spec.method_id:
        values["expand"] = ["data.invoice_settings.default_payment_method" if isinstance(data, list)
                            else "invoice_settings.default_payment_method"]
    if spec.method_id.endswith(".search"):  # the second page of a one-result first page
        first = send(ws.fork(), *_stripe_request(spec, {**base, "limit": 1}))
        if isinstance(first.body, dict) and first.body.get("next_page"):
            values["page"] = first.body["next_page"]
    if spec.method_id == "stripe.events.list":
        values["type"] = next((e.type for e in d.events.values()), "charge.succeeded")
    if spec.method_id == "stripe.balanceTransactions.list":
        values["type"] = "charge"
        values["source"] = ch
    values.update({k: v for k, v in base.items()})
    return {k: v for k, v in values.items() if v is not None}


EXPANDABLE = ("customer", "payment_intent", "charge", "latest_charge", "payment_method", "balance_transaction",
              "source")


def _expandable(answer: Any) -> str | None:
    """A field of the answer that holds another object's id (`customer`), `data.x` inside a list."""
    if not isinstance(answer, dict):
        return None
    if answer.get("object") in ("list", "search_result"):
        for item in answer.get("data") or []:
            inner = _expandable(item)
            if inner:
                return "data." + inner
        return None
    return next((k for k in EXPANDABLE if isinstance(answer.get(k), str) and answer[k]), None)


def _stripe_request(spec: ToolSpec, args: dict[str, Any]) -> tuple[str, str, list[tuple[str, str]], bytes, str]:
    from stripe._encode import _api_encode

    path = "/" + spec.path
    rest = dict(args)
    for p in spec.path_params:
        path = path.replace("{" + p + "}", str(rest.pop(p)))
    pairs = [(k, str(v)) for k, v in _api_encode(rest)]
    if spec.http_method == "POST":
        return spec.http_method, path, [], urlencode(pairs).encode(), "application/x-www-form-urlencoded"
    return spec.http_method, path, pairs, b"", "application/x-www-form-urlencoded"


def audit_stripe(base_ws: Workspace, only: set[str] | None = None) -> list[Row]:
    rows: list[Row] = []
    setups = stripe_setups(base_ws)
    for spec in sorted((s for s in TOOLS.values() if s.service == "stripe"), key=lambda s: s.method_id):
        if only and spec.method_id not in only:
            continue
        cls = stripe_params_class(spec)
        fields = stripe_fields(cls)

        def run(extra: dict[str, Any]) -> tuple[Answer, dict[str, Any]]:
            ws = base_ws.fork()
            args = dict(setups.get(spec.method_id, lambda w: {})(ws))
            req = {k: v for k, v in args.items()}
            req.update(extra)
            return send(ws, *_stripe_request(spec, {k: v for k, v in req.items() if v is not None})), args

        base, base_args = run({})
        if base.status >= 400:
            rows.append(Row("stripe", spec.method_id, "(baseline)", "form", "baseline failed", _error_text(base)))
            continue
        values = _stripe_values(base_ws, spec, {k: v for k, v in base_args.items() if k not in spec.path_params},
                                base.body)
        known = set(spec.kinds)
        for name, (tp, _required) in sorted(fields.items()):
            forms = _alternatives(tp)
            for tp_i in forms:
                label = name if len(forms) == 1 else f"{name} ({_type_name(tp_i)})"
                ctx = {"values": dict(values)}
                if name == "created":
                    ctx["values"]["created"] = values["created"] if tp_i is int else values["_created_range"]
                if name == "expand" and "expand" not in values:
                    rows.append(Row("stripe", spec.method_id, label, "form", "not probed",
                                    "nothing in this answer holds another object's id"))
                    continue
                extra: dict[str, Any] = {"payment_method": "pm_card_visa"} if name == "confirm" else {}
                if spec.method_id == "stripe.refunds.create" and name == "payment_intent":  # instead of the charge
                    extra = {"charge": None}
                if name in base_args and name not in spec.path_params:  # a baseline parameter: probe another value
                    val = stripe_value(name, tp_i, {"values": {**ctx["values"],
                                                               name: _other(name, base_args[name], base_ws)}})
                else:
                    val = stripe_value(name, tp_i, ctx)
                probe, _ = run({**extra, name: val})
                v, note = verdict("stripe", base, probe, name in known)
                if extra:
                    note = (note + "; " if note else "") + "probed with " + ", ".join(
                        f"{k}={v}" if v is not None else f"no {k}" for k, v in extra.items())
                if v == "no effect seen" and name in NO_EFFECT_EXPECTED and name in known:
                    note = NO_EFFECT_EXPECTED[name]
                elif v == "no effect seen" and name == "expand":
                    note = f"{val[0]} is empty in this answer"
                elif v == "no effect seen" and name == "invoice_settings" and spec.method_id.endswith("create"):
                    note = "a new customer has no card yet to make the default"
                rows.append(Row("stripe", spec.method_id, label, "form", v, note))
    return rows


def _other(name: str, value: Any, ws: Workspace | None = None) -> Any:
    """Another valid value for a parameter the baseline already sends."""
    if ws is not None and name == "customer":
        return sorted(c.id for c in ws.stripe.db.customers.values())[1]
    if ws is not None and name == "charge":
        return sorted(ws.stripe.db.charges)[-1]
    if name == "query":
        return "amount>3000" if str(value).startswith("amount") else "name~'x'"
    return {"amount": 2500, "currency": "eur", "source": "tok_mastercard"}.get(name, value)


def _type_name(tp: Any) -> str:
    if tp is int:
        return "integer"
    if _is_typeddict(tp):
        return "object"
    return getattr(tp, "__name__", str(tp))


# -- Google ------------------------------------------------------------------------------------------------------
def discovery(service: str) -> dict[str, Any]:
    import googleapiclient

    docs = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
    return json.loads((docs / DOCUMENTS[service]).read_text())


def discovery_methods(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out, stack = {}, [doc]
    while stack:
        res = stack.pop()
        out.update({m["id"]: m for m in res.get("methods", {}).values()})
        stack.extend(res.get("resources", {}).values())
    return out


def _read_only(prop: dict[str, Any]) -> bool:
    text = prop.get("description", "")
    return bool(prop.get("readOnly")) or any(s in text for s in ("Read-only", "Output only", "[Output Only]",
                                                                 "output only", "read-only"))


def path_candidates(ws: Workspace) -> list[dict[str, str]]:
    """Consistent path ids from the seeded workspace, most specific first (a reply with its comment and file)."""
    out: list[dict[str, str]] = []
    g, c, d = ws.gmail, ws.calendar.db, ws.drive.db
    me = ws.me.email
    out += [{"userId": "me", "id": dr.id} for dr in g.db.drafts.values() if dr.userId == me][:2]
    out += [{"userId": "me", "delegateEmail": k.split("/", 1)[1]} for k in g.db.delegates if k.startswith(me + "/")]
    out += [{"userId": "me", "forwardingEmail": k.split("/", 1)[1]} for k in g.db.forwardingAddresses
            if k.startswith(me + "/")][:2]
    out += [{"userId": "me", "sendAsEmail": k.split("/", 1)[1]} for k in g.db.sendAs if k.startswith(me + "/")][:2]
    out += [{"fileId": cm.fileId, "commentId": cm.id} for cm in d.comments.values() if cm.authorEmail == me][:1]
    out += [{"driveId": k} for k, dr in d.drives.items() if dr.creatorEmail == me][:1]
    out += [{"calendarId": k} for k, cal in c.calendars.items() if cal.owner == me and k != me][:1]
    mine = [m for m in g.db.messages.values() if m.userId == me]
    out += [{"userId": "me", "id": m.id} for m in mine[:3]] + [{"userId": "me", "id": m.threadId} for m in mine[:3]]
    out += [{"userId": "me", "id": lid} for lid in list(g.db.labels)[:0]]
    out += [{"userId": "me", "id": lab.id} for lab in g.db.labels.values() if getattr(lab, "userId", me) == me][:3]
    out += [{"userId": "me", "id": dr.id} for dr in g.db.drafts.values()][:2]
    out += [{"userId": "me", "id": f.id} for f in g.filters_of()][:2]
    out += [{"userId": "me", "sendAsEmail": me}, {"userId": "me", "delegateEmail": ws.directory[3].email},
            {"userId": "me", "forwardingEmail": ws.directory[3].email}, {"userId": "me"}]
    out += [{"fileId": r.fileId, "commentId": r.commentId, "replyId": r.id} for r in d.replies.values()][:2]
    out += [{"fileId": cm.fileId, "commentId": cm.id} for cm in d.comments.values()][:2]
    for f in list(d.files.values())[:40]:
        for p in f.permissions[:2]:
            out.append({"fileId": f.id, "permissionId": p.id})
    out += [{"fileId": k.split("/")[0], "revisionId": k.split("/")[1]} for k in list(d.revisions)[:3]]
    out += [{"fileId": f} for f in list(d.files)[:6]] + [{"driveId": k} for k in list(d.drives)[:2]]
    out += [{"documentId": k} for k in list(ws.docs.db.documents)[:3]]
    out += [{"calendarId": e.calendarId, "eventId": e.id} for e in list(c.events.values())[:4]]
    out += [{"calendarId": r.calendarId, "ruleId": r.id} for r in list(c.acl.values())[:3]]
    out += [{"calendarId": "primary"}] + [{"calendarId": k} for k in list(c.calendars)[:3]]
    out += [{"setting": "timezone"}]
    return out


# methods probed on the primary calendar (the seeded events) before the candidates' first, empty secondary calendar
EVENTS_FIRST = ("calendar.events.list",)

# minimal valid bodies for Google methods that need one (the rest send {} or nothing)
BODIES: dict[str, Any] = {
    "gmail.users.messages.send": {"raw": "VG86IGF1ZGl0QGV4YW1wbGUuY29tDQpTdWJqZWN0OiBhdWRpdA0KDQpoaQ"},
    "gmail.users.messages.insert": {"raw": "VG86IGF1ZGl0QGV4YW1wbGUuY29tDQpTdWJqZWN0OiBhdWRpdA0KDQpoaQ"},
    "gmail.users.messages.import": {"raw": "VG86IGF1ZGl0QGV4YW1wbGUuY29tDQpTdWJqZWN0OiBhdWRpdA0KDQpoaQ"},
    "gmail.users.drafts.create": {"message": {"raw": "VG86IGF1ZGl0QGV4YW1wbGUuY29tDQpTdWJqZWN0OiBhdWRpdA0KDQpoaQ"}},
    "gmail.users.drafts.update": {"message": {"raw": "VG86IGF1ZGl0QGV4YW1wbGUuY29tDQpTdWJqZWN0OiBhdWRpdA0KDQpoaQ"}},
    "gmail.users.labels.create": {"name": "Audit"},
    "gmail.users.labels.update": {"name": "Audit"},
    "gmail.users.messages.modify": {"addLabelIds": ["STARRED"]},
    "gmail.users.threads.modify": {"addLabelIds": ["STARRED"]},
    "gmail.users.settings.filters.create": {"criteria": {"from": "x@example.com"}, "action": {"addLabelIds": ["STARRED"]}},
    "gmail.users.watch": {"topicName": "projects/audit/topics/mail"},
    "gmail.users.drafts.send": lambda ws, cand: {"id": cand.get("id")},
    "gmail.users.settings.delegates.create": lambda ws, cand: {"delegateEmail": ws.directory[7].email},
    "gmail.users.settings.forwardingAddresses.create": lambda ws, cand: {"forwardingEmail": ws.directory[8].email},
    "gmail.users.settings.sendAs.create": lambda ws, cand: {"sendAsEmail": ws.directory[9].email},
    "calendar.acl.update": lambda ws, cand: {"role": "writer", "scope": {
        "type": cand.get("ruleId", "user:x").split(":")[0], "value": cand.get("ruleId", "user:x").split(":", 1)[-1]}},
    "calendar.calendars.update": {"summary": "Audit"},
    "calendar.calendarList.insert": lambda ws, cand: {"id": next(
        (k for k in ws.calendar.db.calendars if k not in ws.calendar.db.calendarList), "primary")},
    "gmail.users.settings.updateLanguage": {"displayLanguage": "fr"},
    "calendar.events.watch": {"id": "audit-channel", "type": "web_hook", "address": "https://example.com/hook"},
    "calendar.acl.watch": {"id": "audit-channel", "type": "web_hook", "address": "https://example.com/hook"},
    "calendar.calendarList.watch": {"id": "audit-channel", "type": "web_hook", "address": "https://example.com/hook"},
    "calendar.settings.watch": {"id": "audit-channel", "type": "web_hook", "address": "https://example.com/hook"},
    "drive.files.watch": {"id": "audit-channel", "type": "web_hook", "address": "https://example.com/hook"},
    "drive.changes.watch": {"id": "audit-channel", "type": "web_hook", "address": "https://example.com/hook"},
    "calendar.events.insert": {"summary": "Audit", "start": {"dateTime": "2026-03-20T10:00:00Z"},
                               "end": {"dateTime": "2026-03-20T11:00:00Z"}},
    "calendar.events.update": {"summary": "Audit", "start": {"dateTime": "2026-03-20T10:00:00Z"},
                               "end": {"dateTime": "2026-03-20T11:00:00Z"}},
    "calendar.events.patch": {"summary": "Audit"},
    "calendar.events.import": {"iCalUID": "audit@example.com", "start": {"dateTime": "2026-03-20T10:00:00Z"},
                               "end": {"dateTime": "2026-03-20T11:00:00Z"}},
    "calendar.calendars.insert": {"summary": "Audit"},
    "calendar.acl.insert": {"role": "reader", "scope": {"type": "user", "value": "audit@example.com"}},
    "calendar.freebusy.query": {"timeMin": "2026-03-10T00:00:00Z", "timeMax": "2026-03-20T00:00:00Z",
                                "items": [{"id": "primary"}]},
    "drive.files.create": {"name": "Audit"},
    "drive.permissions.create": {"role": "reader", "type": "user", "emailAddress": "audit@example.com"},
    "drive.permissions.update": {"role": "writer"},
    "drive.comments.create": {"content": "Audit"},
    "drive.comments.update": {"content": "Audit"},
    "drive.replies.create": {"content": "Audit"},
    "drive.replies.update": {"content": "Audit"},
    "drive.drives.create": {"name": "Audit"},
    "docs.documents.create": {"title": "Audit"},
    "docs.documents.batchUpdate": {"requests": [{"insertText": {"location": {"index": 1}, "text": "Audit "}}]},
}
# parameters that act only together: probing one adds the other (query -> body fields, body field -> query)
WITH_BODY = {"supportsAttachments": {"attachments": [{"fileUrl": "https://drive.google.com/open?id=audit"}]},
             "conferenceDataVersion": {"conferenceData": {"notes": "audit"}},
             "maxAttendees": {"attendees": [{"email": "a1@example.com"}, {"email": "a2@example.com"}]}}
WITH_QUERY = {"attachments": {"supportsAttachments": "true"}, "conferenceData": {"conferenceDataVersion": 1}}
# Google fields a write legitimately ignores (why, for the table)
IGNORED_ON_WRITE = {
    "kind": "names the resource type; output only", "etag": "a concurrency token; output only",
    "id": "an existing resource keeps its id", "iCalUID": "cannot be changed after creation",
    "recurringEventId": "identifies an instance of a recurring event; set by Calendar",
    "originalStartTime": "identifies an instance of a recurring event; set by Calendar",
    "eventLabelId": "event labels need eventLabelVersion=1, which is not served (refused)",
}
# Google query parameters whose effect is outside what a workspace shows (why, for the table)
NO_EFFECT_QUERY = {
    "sendUpdates": "Calendar would email the guests; no invitation mail is modelled",
    "sendNotifications": "Calendar would email the guests; no invitation mail is modelled",
    "sendNotificationEmail": "Drive would email the grantee; no notification mail is modelled",
    "supportsAllDrives": "a compatibility flag for shared drives: accepted, nothing to do",
    "supportsTeamDrives": "deprecated alias of supportsAllDrives",
    "includeItemsFromAllDrives": "accepted; the probe's corpus holds no shared-drive items",
    "colorRgbFormat": "matters only with RGB colours in the body",
}
REQUIRED_QUERY = {"drive.comments": {"fields": "*"}, "drive.replies": {"fields": "*"}, "drive.about.get": {"fields": "*"},
                  "drive.drives.create": {"requestId": "audit-1"}, "calendar.events.quickAdd": {"text": "Lunch 1pm"},
                  "gmail.users.history.list": {"startHistoryId": None}, "drive.changes.list": {"pageToken": "1"},
                  "drive.changes.watch": {"pageToken": "1"}, "calendar.events.move": {"destination": None}}


def _query_value(service: str, method_id: str, name: str, p: dict[str, Any], base: Answer) -> Any:
    """A valid, effect-showing value of a Google query parameter."""
    special = {"maxResults": 1, "pageSize": 1, "maxAttendees": 1, "q": {"gmail": "is:unread", "drive": "name contains 'a'",
               "calendar": "a"}.get(service, "a"), "timeMin": "2026-03-12T00:00:00Z", "timeMax": "2026-03-12T00:00:00Z",
               "updatedMin": "2026-03-12T00:00:00Z", "timeZone": "Europe/Paris", "orderBy": None,
               "sendUpdates": "all", "fields": "*", "spaces": "drive", "corpora": "user", "labelIds": "INBOX",
               "includeSpamTrash": True, "showDeleted": True, "singleEvents": True, "iCalUID": None,
               "addParents": None, "removeParents": None, "format": "minimal", "metadataHeaders": "Subject",
               "mimeType": "text/plain", "emailMessage": "audit", "conferenceDataVersion": 1,
               "supportsAttachments": True, "alwaysIncludeEmail": True, "maxResults_": None}
    if name == "pageToken" and isinstance(base.body, dict):
        return base.body.get("nextPageToken") or base.body.get("_firstPageToken") or "audit"
    if name == "syncToken" and isinstance(base.body, dict):
        return base.body.get("nextSyncToken") or "audit"
    if name in special and special[name] is not None:
        return special[name]
    if "enum" in p:
        vals = p["enum"]
        default = p.get("default")
        return next((v for v in vals if v != default), vals[0])
    if p.get("type") == "boolean":
        return "false" if p.get("default") == "true" else "true"
    if p.get("type") == "integer":
        return p.get("minimum") or "1"
    if p.get("format") == "date-time":
        return "2026-03-12T00:00:00Z"
    return "audit"


def _body_value(doc: dict[str, Any], prop: dict[str, Any], name: str, depth: int = 0) -> Any:
    special = {"attachments": [{"fileUrl": "https://drive.google.com/open?id=audit", "title": "Audit"}],
               "start": {"dateTime": "2020-01-01T09:00:00Z"}, "end": {"dateTime": "2030-01-01T09:00:00Z"},
               "eventType": "focusTime", "status": "tentative", "sequence": 7,
               "attendees": [{"email": "audit@example.com"}], "colorId": "3", "description": "audit",
               "location": "Audit room", "recurrence": ["RRULE:FREQ=DAILY;COUNT=2"], "visibility": "private",
               "transparency": "transparent", "reminders": {"useDefault": False, "overrides": [
                   {"method": "popup", "minutes": 5}]}, "mimeType": "application/vnd.google-apps.folder",
               "parents": None, "starred": True, "labelIds": ["STARRED"], "threadId": None, "timeZone": "Europe/Paris",
               "color": {"backgroundColor": "#16a766", "textColor": "#ffffff"}}  # a Gmail label's, from its palette
    if name in special and special[name] is not None:
        return special[name]
    if "$ref" in prop:
        if depth > 1:
            return {}
        schema = doc["schemas"].get(prop["$ref"], {})
        props = {k: v for k, v in schema.get("properties", {}).items() if not _read_only(v)}
        if not props:
            return {}
        k, v = next(iter(props.items()))
        return {k: _body_value(doc, v, k, depth + 1)}
    t = prop.get("type")
    if "enum" in prop:
        return prop["enum"][-1]
    if t == "boolean":
        return True
    if t == "integer":
        return 1
    if t == "number":
        return 1.5
    if t == "array":
        return [_body_value(doc, prop.get("items", {}), name, depth + 1)]
    if t == "object":
        if "additionalProperties" in prop:
            return {"audit": _body_value(doc, prop["additionalProperties"], name, depth + 1)}
        return {}
    if prop.get("format") == "date-time":
        return "2026-03-20T09:00:00Z"
    return "audit"


def _google_request(spec: ToolSpec, path_args: dict[str, str], query: dict[str, Any], body: Any
                    ) -> tuple[str, str, list[tuple[str, str]], bytes, str]:
    from urllib.parse import quote

    path = "/" + spec.path
    for p in spec.path_params:
        path = path.replace("{+" + p + "}", quote(path_args[p], safe="")).replace("{" + p + "}",
                                                                                  quote(path_args[p], safe=""))
    pairs = []
    for k, v in query.items():
        for item in (v if isinstance(v, list) else [v]):
            pairs.append((k, str(item).lower() if isinstance(item, bool) else str(item)))
    raw = json.dumps(body).encode() if body is not None else b""
    return spec.http_method, path, pairs, raw, "application/json"


def audit_google(base_ws: Workspace, services: list[str], only: set[str] | None = None) -> list[Row]:
    rows: list[Row] = []
    candidates = path_candidates(base_ws)
    for service in services:
        doc = discovery(service)
        found = discovery_methods(doc)
        for spec in sorted((s for s in TOOLS.values() if s.service == service), key=lambda s: s.method_id):
            if only and spec.method_id not in only:
                continue
            m = found.get(spec.method_id)
            if m is None:
                rows.append(Row(service, spec.method_id, "(method)", "-", "baseline failed",
                                "not a method of the discovery document"))
                continue
            rows += _audit_google_method(base_ws, service, doc, spec, m, candidates)
    return rows


def _audit_google_method(base_ws: Workspace, service: str, doc: dict[str, Any], spec: ToolSpec, m: dict[str, Any],
                         candidates: list[dict[str, str]]) -> list[Row]:
    found_body = BODIES.get(spec.method_id, {} if "request" in m else None)
    body = found_body if callable(found_body) else copy.deepcopy(found_body)
    need_q = {k: v for prefix, extra in REQUIRED_QUERY.items() if spec.method_id.startswith(prefix)
              for k, v in extra.items()}
    me = base_ws.me.email
    dynamic = {"startHistoryId": str(base_ws.gmail.db.historyFloor + 1),
               "destination": next((k for k, c in base_ws.calendar.db.calendars.items() if c.owner == me and k != me),
                                   "primary")}
    need_q = {k: dynamic.get(k) if v is None else v for k, v in need_q.items()}
    required_q = {k: _query_value(service, spec.method_id, k, p, Answer(0, None))
                  for k, p in m.get("parameters", {}).items() if p.get("location") == "query" and p.get("required")}
    need_q.update({k: v for k, v in required_q.items() if k not in need_q})
    path_args: dict[str, str] | None = None
    base: Answer | None = None
    tried = [c for c in candidates if set(spec.path_params) <= set(c)] if spec.path_params else [{}]
    if spec.method_id in EVENTS_FIRST:  # a calendar with events, or the list's parameters have nothing to act on
        tried = [{"calendarId": "primary"}, *tried]
    make = body if callable(body) else None
    for cand in tried[:40]:
        ws = base_ws.fork()
        if make is not None:
            body = make(base_ws, cand)
        a = send(ws, *_google_request(spec, cand, need_q, body))
        if a.status < 400:
            path_args, base = cand, a
            break
        base = a
    if path_args is None:
        return [Row(service, spec.method_id, "(baseline)", "-", "baseline failed",
                    _error_text(base) if base else "no path ids")]
    rows: list[Row] = []
    known = set(spec.kinds)

    def probe(query: dict[str, Any], b: Any) -> Answer:
        return send(base_ws.fork(), *_google_request(spec, path_args, query, b))

    params = m.get("parameters", {})
    size = next((k for k in ("maxResults", "pageSize") if k in params), None)
    if "pageToken" in params and size and isinstance(base.body, dict):  # a token from a one-item first page
        first = probe({**need_q, size: 1}, body)
        if isinstance(first.body, dict) and first.body.get("nextPageToken"):
            base.body = {**base.body, "_firstPageToken": first.body["nextPageToken"]}
            base = Answer(base.status, {k: v for k, v in base.body.items() if k != "_firstPageToken"}, base.state)
            base_token = first.body["nextPageToken"]
        else:
            base_token = None
    else:
        base_token = None

    for name, p in sorted(m.get("parameters", {}).items()):
        if p.get("location") != "query" or name in need_q or name in SYSTEM_PARAMS:
            continue
        value = base_token if name == "pageToken" and base_token else _query_value(service, spec.method_id, name, p,
                                                                                       base)
        if name == "q" and service == "calendar":
            value = next((e.summary.split()[0] for e in base_ws.calendar.db.events.values() if e.summary), "a")
        if p.get("repeated") and not isinstance(value, list):
            value = [value]
        with_body = WITH_BODY.get(name) if isinstance(body, dict) else None
        v, note = verdict(service, base, probe({**need_q, name: value}, {**body, **with_body} if with_body else body),
                          name in known)
        if with_body and v != "acts" or with_body and v == "acts":
            base_with = probe(need_q, {**body, **with_body})
            v, note = verdict(service, base_with, probe({**need_q, name: value}, {**body, **with_body}), name in known)
            note = (note + "; " if note else "") + f"probed with body {', '.join(with_body)} on both sides"
        if v == "no effect seen" and name in NO_EFFECT_QUERY and name in known:
            note = NO_EFFECT_QUERY[name]
        rows.append(Row(service, spec.method_id, name, "query", v, note))
    ref = (m.get("request") or {}).get("$ref")
    if ref and spec.method_id.split(".")[-1] in ("insert", "create", "update", "patch", "import") and \
            isinstance(body, dict):
        schema = doc["schemas"].get(ref, {})
        for name, prop in sorted(schema.get("properties", {}).items()):
            if _read_only(prop) or name in body:
                continue
            value = _body_value(doc, prop, name)
            q = {**need_q, **WITH_QUERY.get(name, {})}
            v, note = verdict(service, probe(q, body) if name in WITH_QUERY else base, probe(q, {**body, name: value}),
                              True)
            if name in WITH_QUERY:
                note = (note + "; " if note else "") + "probed with " + ", ".join(
                    f"{k}={x}" for k, x in WITH_QUERY[name].items()) + " on both sides"
            if v == "no effect seen":
                note = IGNORED_ON_WRITE.get(name, "not stored or used (the field is dropped)")
            rows.append(Row(service, spec.method_id, f"{ref}.{name}", "body", v, note))
    return rows


# -- Docs batchUpdate request kinds and Drive export types ----------------------------------------------------------
# One example per Request kind, on the audit document (text 1-18, a 2x2 table at 19, named range "audit" at 1-6).
# A callable gets the replies of its `prefix` requests (sent first, on both sides).
_CELL = {"tableStartLocation": {"index": 19}, "rowIndex": 0, "columnIndex": 0}
_MERGE = {"mergeTableCells": {"tableRange": {"tableCellLocation": _CELL, "rowSpan": 1, "columnSpan": 2}}}
DOCS_REQUESTS: dict[str, tuple[list[dict[str, Any]], Any]] = {
    "insertText": ([], {"location": {"index": 1}, "text": "x"}),
    "deleteContentRange": ([], {"range": {"startIndex": 1, "endIndex": 3}}),
    "replaceAllText": ([], {"containsText": {"text": "Alpha", "matchCase": True}, "replaceText": "A"}),
    "insertTable": ([], {"rows": 1, "columns": 1, "location": {"index": 1}}),
    "insertTableRow": ([], {"tableCellLocation": _CELL, "insertBelow": True}),
    "insertTableColumn": ([], {"tableCellLocation": _CELL, "insertRight": True}),
    "deleteTableRow": ([], {"tableCellLocation": _CELL}),
    "deleteTableColumn": ([], {"tableCellLocation": _CELL}),
    "mergeTableCells": ([], _MERGE["mergeTableCells"]),
    "unmergeTableCells": ([_MERGE], _MERGE["mergeTableCells"]),
    "updateTableCellStyle": ([], {"tableStartLocation": {"index": 19}, "fields": "backgroundColor",
                                  "tableCellStyle": {"backgroundColor": {"color": {"rgbColor": {"red": 1}}}}}),
    "updateTableColumnProperties": ([], {"tableStartLocation": {"index": 19}, "columnIndices": [0], "fields": "*",
                                         "tableColumnProperties": {"widthType": "FIXED_WIDTH",
                                                                   "width": {"magnitude": 90, "unit": "PT"}}}),
    "updateTableRowStyle": ([], {"tableStartLocation": {"index": 19}, "rowIndices": [0], "fields": "minRowHeight",
                                 "tableRowStyle": {"minRowHeight": {"magnitude": 20, "unit": "PT"}}}),
    "pinTableHeaderRows": ([], {"tableStartLocation": {"index": 19}, "pinnedHeaderRowsCount": 1}),
    "updateTextStyle": ([], {"range": {"startIndex": 1, "endIndex": 6}, "fields": "bold", "textStyle": {"bold": True}}),
    "updateParagraphStyle": ([], {"range": {"startIndex": 1, "endIndex": 2}, "fields": "namedStyleType",
                                  "paragraphStyle": {"namedStyleType": "HEADING_1"}}),
    "createParagraphBullets": ([], {"range": {"startIndex": 1, "endIndex": 18},
                                    "bulletPreset": "BULLET_DISC_CIRCLE_SQUARE"}),
    "deleteParagraphBullets": ([{"createParagraphBullets": {"range": {"startIndex": 1, "endIndex": 18},
                                                            "bulletPreset": "BULLET_DISC_CIRCLE_SQUARE"}}],
                               {"range": {"startIndex": 1, "endIndex": 18}}),
    "createNamedRange": ([], {"name": "second", "range": {"startIndex": 7, "endIndex": 11}}),
    "deleteNamedRange": ([], {"name": "audit"}),
    "replaceNamedRangeContent": ([], {"namedRangeName": "audit", "text": "Omega"}),
    "createHeader": ([], {"type": "DEFAULT"}),
    "createFooter": ([], {"type": "DEFAULT"}),
    "deleteHeader": ([{"createHeader": {"type": "DEFAULT"}}],
                     lambda r: {"headerId": r[0]["createHeader"]["headerId"]}),
    "deleteFooter": ([{"createFooter": {"type": "DEFAULT"}}],
                     lambda r: {"footerId": r[0]["createFooter"]["footerId"]}),
    "createFootnote": ([], {"location": {"index": 6}}),
    "insertPageBreak": ([], {"location": {"index": 6}}),
    "insertSectionBreak": ([], {"sectionType": "NEXT_PAGE", "location": {"index": 6}}),
    "updateDocumentStyle": ([], {"documentStyle": {"marginTop": {"magnitude": 36, "unit": "PT"}},
                                 "fields": "marginTop"}),
    "updateSectionStyle": ([], {"range": {"startIndex": 1, "endIndex": 2}, "fields": "marginLeft",
                                "sectionStyle": {"marginLeft": {"magnitude": 50, "unit": "PT"}}}),
    "insertPerson": ([], lambda r: {"personProperties": {"email": "audit@example.com"}, "location": {"index": 1}}),
    "insertInlineImage": ([], {"uri": "https://example.com/chart.png", "location": {"index": 1}}),
    "replaceImage": ([], {"imageObjectId": "kix.audit", "uri": "https://example.com/chart.png"}),
    "deletePositionedObject": ([], {"objectId": "kix.audit"}),
    "acceptSuggestion": ([], {"suggestionId": "suggest.audit"}),
    "rejectSuggestion": ([], {"suggestionId": "suggest.audit"}),
    "deleteSuggestion": ([], {"suggestionId": "suggest.audit"}),
}
# Every export type Drive documents for a Google Doc (Drive's "Export MIME types for Google Workspace documents").
DOC_EXPORTS = ("text/plain", "text/markdown", "text/html", "application/pdf",
               "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
               "application/vnd.oasis.opendocument.text", "application/rtf", "application/epub+zip", "application/zip")


EXPORT_NOTES = {"application/pdf": "fpdf2 with its core fonts: a character outside Latin-1 prints as '?'",
                "text/markdown": "headings, bold/italic/strikethrough, links, lists and tables from the structure",
                "text/html": "headings, b/i/u/s, links, lists and tables from the structure",
                "application/rtf": "no maintained RTF writer among the dependencies",
                "application/zip": "the zipped web page is not served"}


def _audit_document(ws: Workspace) -> str:
    did = ws.call("docs_documents_create", {"body": {"title": "Audit"}}).body["documentId"]
    res = ws.call("docs_documents_batchUpdate", {"documentId": did, "body": {"requests": [
        {"insertText": {"location": {"index": 1}, "text": "Alpha beta\nGamma\n"}},
        {"insertTable": {"rows": 2, "columns": 2, "endOfSegmentLocation": {}}},
        {"createNamedRange": {"name": "audit", "range": {"startIndex": 1, "endIndex": 6}}}]}})
    assert res.ok, res.body
    return did


def _doc_view(ws: Workspace, did: str) -> Any:
    got = ws.call("docs_documents_get", {"documentId": did}).body
    return {k: v for k, v in got.items() if k != "revisionId"}


def audit_docs_requests(base_ws: Workspace) -> list[Row]:
    doc = discovery("docs")
    rows: list[Row] = []
    for kind in sorted(doc["schemas"]["Request"]["properties"]):
        prefix, example = DOCS_REQUESTS.get(kind, ([], {}))
        ws = base_ws.fork()
        did = _audit_document(ws)
        replies: list[Any] = []
        if prefix:
            res = ws.call("docs_documents_batchUpdate", {"documentId": did, "body": {"requests": prefix}})
            assert res.ok, (kind, res.body)
            replies = res.body["replies"]
        before = _doc_view(ws, did)
        arg = example(replies) if callable(example) else example
        res = ws.call("docs_documents_batchUpdate", {"documentId": did, "body": {"requests": [{kind: arg}]}})
        status = 200 if res.ok else int(res.body.get("error", {}).get("code", 400))
        msg = "" if res.ok else str(res.body.get("error", {}).get("message", ""))
        if status >= 500:
            v, note = "5xx", msg
        elif status >= 400:
            v = "refused: not served" if "not supported by this workspace" in msg else "refused: value"
            note = f"{status} {msg}"
        elif _doc_view(ws, did) != before:
            v, note = "acts", ""
        else:
            v, note = "no effect seen", ""
        rows.append(Row("docs", "docs.documents.batchUpdate", f"Request.{kind}", "body", v, note[:160]))
    rows += _audit_write_control(base_ws)
    return rows


def _audit_write_control(base_ws: Workspace) -> list[Row]:
    rows = []
    for key in ("requiredRevisionId", "targetRevisionId"):
        ws = base_ws.fork()
        did = _audit_document(ws)
        stale = ws.call("docs_documents_get", {"documentId": did}).body["revisionId"]
        edit = {"insertText": {"location": {"index": 1}, "text": "x"}}
        ok_now = ws.call("docs_documents_batchUpdate", {"documentId": did, "body": {
            "requests": [edit], "writeControl": {key: stale}}})
        refused = ws.call("docs_documents_batchUpdate", {"documentId": did, "body": {
            "requests": [edit], "writeControl": {key: stale}}})
        v = "acts" if ok_now.ok and not refused.ok else "no effect seen"
        note = ("the latest revision is applied; an older one is 400" + (
            " (no collaborator edits are merged here, so an older target is refused as Google refuses one too far "
            "behind)" if key == "targetRevisionId" else ""))
        rows.append(Row("docs", "docs.documents.batchUpdate", f"WriteControl.{key}", "body", v, note))
    return rows


def audit_drive_exports(base_ws: Workspace) -> list[Row]:
    rows: list[Row] = []
    for mime in DOC_EXPORTS:
        ws = base_ws.fork()
        did = _audit_document(ws)
        res = ws.call("drive_files_export", {"fileId": did, "mimeType": mime})
        if res.ok:
            rows.append(Row("drive", "drive.files.export", f"mimeType={mime}", "query", "acts",
                            EXPORT_NOTES.get(mime, "")))
        else:
            e = res.body.get("error", {})
            served = "conversion is not supported" not in str(e.get("message", ""))
            rows.append(Row("drive", "drive.files.export", f"mimeType={mime}", "query",
                            "refused: value" if served else "refused: not served",
                            f"{e.get('code', '')} {e.get('message', '')}; {EXPORT_NOTES.get(mime, '')}"))
    return rows


# -- the report -------------------------------------------------------------------------------------------------
def summary(rows: list[Row]) -> dict[str, Counter]:
    out: dict[str, Counter] = {}
    for r in rows:
        out.setdefault(r.service, Counter())[r.verdict] += 1
    return out


def render(rows: list[Row]) -> str:
    from env0_posttrain.util.markdown_table import Markdown, md_table as markdown_table

    lines = ["# API parameter parity (generated)", "",
             "Generated by `bench/api_parity.py --write docs/API-PARITY.md`; do not edit by hand. What each verdict "
             "means, and where the parameters come from, is in the program's docstring: stripe-python's typed "
             "parameter classes for Stripe, the discovery documents google-api-python-client ships for Gmail, "
             "Calendar, Drive and Docs (query parameters; writable top-level fields of a resource body; every Request kind "
             "of Docs documents.batchUpdate and its writeControl; every export type Drive documents for a Google Doc).",
             "",
             "## Summary", ""]
    sums = summary(rows)
    lines.append(markdown_table(["service", *VERDICTS, "probed"],
                                [[s, *[c.get(v, 0) for v in VERDICTS], sum(c.values())] for s, c in sums.items()]))
    lines += ["", "Google body fields a handler does not read are dropped, as before: Google accepts every documented "
              "field, so refusing one would break clients Google serves; the table lists each (`no effect seen`, "
              "\"dropped\"). Stripe refuses what it does not serve with its own `parameter_unknown`."]
    lines += ["", "Headers are outside this probe. Conditional requests: a Google resource whose answer carries an "
              "`etag` (Calendar events, calendars, calendar lists, ACL rules and settings; Directory users, groups, "
              "members and their lists) takes `If-Match` on a write (a stale one is 412 `conditionNotMet`, nothing "
              "written) and `If-None-Match` on a read (the current etag is 304); Gmail, Drive and Docs answers "
              "carry no etag here, so their conditional headers are ignored. Slack, the Directory API and the OAuth "
              "server are not probed (their tests are the official clients' under env0_posttrain_tests/workspace/)."]
    lines += ["", "## Every parameter", ""]
    for service in sums:
        lines += [f"### {service}", ""]
        # the parameter as code, the note as written (this program's own words and our services' answers to it)
        lines.append(markdown_table(["method", "parameter", "in", "verdict", "note"],
                                    [[r.method, Markdown(f"`{r.param}`"), r.where, r.verdict,
                                      Markdown(r.note.replace("|", "/"))] for r in rows if r.service == service],
                                    align="lllll"))
        lines.append("")
    return "\n".join(lines)


def run(services: list[str], only: set[str] | None = None) -> list[Row]:
    ws = base_workspace()
    rows: list[Row] = []
    if "stripe" in services:
        rows += audit_stripe(ws, only)
    rows += audit_google(ws, [s for s in services if s != "stripe"], only)
    if "drive" in services and (not only or "drive.files.export" in only):
        rows += audit_drive_exports(ws)
    if "docs" in services and (not only or "docs.documents.batchUpdate" in only):
        rows += audit_docs_requests(ws)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--service", action="append", choices=["stripe", *DOCUMENTS], help="default: all five")
    ap.add_argument("--method", action="append", help="only these method ids")
    ap.add_argument("--write", type=Path, help="write the generated table here (docs/API-PARITY.md)")
    args = ap.parse_args()
    rows = run(args.service or ["stripe", *DOCUMENTS], set(args.method) if args.method else None)
    for service, counts in summary(rows).items():
        print(f"{service:9s} " + "  ".join(f"{v}: {counts.get(v, 0)}" for v in VERDICTS))
    if args.write:
        args.write.write_text(render(rows) + "\n")
        print(f"wrote {args.write} ({len(rows)} rows)")
    else:
        for r in rows:
            if r.verdict not in ("acts", "refused: not served"):
                print(f"  {r.service} {r.method} {r.param} [{r.where}]: {r.verdict} {r.note}")
    return 1 if any(r.verdict == "5xx" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
