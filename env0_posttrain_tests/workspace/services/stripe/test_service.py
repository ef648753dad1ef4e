"""The Stripe service in process: its wire format (bracket form keys), a decline that keeps its failed charge
while a refused request changes nothing, list pages and expand[], restricted keys, the auth-service gate, the
agent tools' Stripe error objects, and snapshot / restore / diff."""

from __future__ import annotations

import json
from typing import Any

import pytest

from env0_posttrain.workspace import Workspace, call_tool
from env0_posttrain.workspace.api_routes import handle
from env0_posttrain.workspace.services.stripe.wire import form_params

KEY = "sk_test_env_0_51deterministic"


def http(ws: Workspace, method: str, path: str, body: str = "", query: str = "", key: str | None = KEY,
         **headers: str) -> tuple[int, Any]:
    hs = [(b"content-type", b"application/x-www-form-urlencoded")]
    if key:
        hs.append((b"authorization", f"Bearer {key}".encode()))
    hs += [(k.replace("_", "-").lower().encode(), v.encode()) for k, v in headers.items()]
    status, out, _ = handle(ws, {"path": path, "method": method, "query_string": query.encode(), "headers": hs},
                            body.encode())
    return status, json.loads(out)


@pytest.fixture()
def ws() -> Workspace:
    return Workspace.seeded(0)


def test_form_keys_nest_as_stripe_encodes_them():
    pairs = [("amount", "100"), ("metadata[order_id]", "1234"), ("expand[]", "customer"), ("expand[]", "charge"),
             ("items[0][price]", "p1"), ("items[1][price]", "p2"), ("invoice_settings[default_payment_method]", "pm_1")]
    assert form_params(pairs) == {"amount": "100", "metadata": {"order_id": "1234"}, "expand": ["customer", "charge"],
                                  "items": [{"price": "p1"}, {"price": "p2"}],
                                  "invoice_settings": {"default_payment_method": "pm_1"}}
    assert form_params([("0", "false")]) == {"0": "false"}  # a digit name at the top is a parameter, not a list


def test_a_decline_keeps_its_failed_charge_and_a_refused_call_changes_nothing(ws):
    cus = call_tool(ws, "stripe_customers_create", {"email": "a@example.com"})["result"]
    pi = call_tool(ws, "stripe_paymentIntents_create", {"amount": 4800, "currency": "usd", "customer": cus["id"]})["result"]
    out = call_tool(ws, "stripe_paymentIntents_confirm", {"intent": pi["id"], "payment_method": "pm_card_chargeDeclinedInsufficientFunds"})
    assert out["ok"] is False and out["error"]["error"]["type"] == "card_error"
    assert out["error"]["error"]["decline_code"] == "insufficient_funds"
    [failed] = ws.stripe.db.charges.values()
    assert failed.status == "failed" and not failed.paid and failed.payment_intent_id == pi["id"]
    stored = ws.stripe.db.payment_intents[pi["id"]]
    assert stored.status == "requires_payment_method" and json.loads(stored.last_payment_error_json)["charge"] == failed.id
    before = ws.state_hash("stripe")
    bad = call_tool(ws, "stripe_refunds_create", {"charge": failed.id})
    assert bad["error"]["error"]["code"] == "charge_not_refundable" and ws.state_hash("stripe") == before


def test_tool_arguments_get_stripe_error_objects(ws):
    unknown = call_tool(ws, "stripe_customers_list", {"colour": "red"})["error"]["error"]
    assert unknown == {"type": "invalid_request_error", "message": "Received unknown parameter: colour", "param": "colour",
                       "code": "parameter_unknown", "doc_url": "https://stripe.com/docs/error-codes/parameter-unknown"}
    need = call_tool(ws, "stripe_charges_create", {"currency": "usd"})["error"]["error"]
    assert need["code"] == "parameter_missing" and need["param"] == "amount"
    small = call_tool(ws, "stripe_charges_create", {"amount": 10, "currency": "usd", "source": "tok_visa"})["error"]
    assert small["error"]["code"] == "amount_too_small" and not ws.stripe.db.charges


def test_list_pages_cursor_both_ways_and_expand(ws):
    ids = [call_tool(ws, "stripe_customers_create", {"name": f"c{i}"})["result"]["id"] for i in range(5)]
    newest_first = ids[::-1]
    first = call_tool(ws, "stripe_customers_list", {"limit": 2})["result"]
    assert [c["id"] for c in first["data"]] == newest_first[:2] and first["has_more"] is True
    nxt = call_tool(ws, "stripe_customers_list", {"limit": 2, "starting_after": newest_first[1]})["result"]
    assert [c["id"] for c in nxt["data"]] == newest_first[2:4] and nxt["has_more"] is True
    back = call_tool(ws, "stripe_customers_list", {"limit": 2, "ending_before": newest_first[2]})["result"]
    assert [c["id"] for c in back["data"]] == newest_first[:2] and back["has_more"] is False
    assert call_tool(ws, "stripe_customers_list", {"limit": 101})["error"]["error"]["param"] == "limit"
    call_tool(ws, "stripe_charges_create", {"amount": 500, "currency": "usd", "customer": ids[0], "source": "tok_amex"})
    status, page = http(ws, "GET", "/v1/charges", query="expand[]=data.customer&expand[]=data.balance_transaction")
    assert status == 200 and page["data"][0]["customer"]["name"] == "c0"
    assert page["data"][0]["balance_transaction"]["object"] == "balance_transaction"


def test_keys_restricted_keys_and_idempotency_over_http(ws):
    assert http(ws, "GET", "/v1/customers", key=None)[0] == 401
    assert http(ws, "GET", "/v1/customers", key="sk_test_wrong")[0] == 401
    ws.stripe.add_api_key("rk_test_refunds", ["refunds.write"])
    assert http(ws, "GET", "/v1/refunds", key="rk_test_refunds")[0] == 200  # write implies read
    status, body = http(ws, "GET", "/v1/charges", key="rk_test_refunds")
    assert status == 403 and "rak_charge_read" in body["error"]["message"]
    status, cus = http(ws, "POST", "/v1/customers", "email=i%40example.com", idempotency_key="k1")
    again = http(ws, "POST", "/v1/customers", "email=i%40example.com", idempotency_key="k1")
    assert status == 200 and again == (200, cus) and len(ws.stripe.db.customers) == 1
    status, err = http(ws, "POST", "/v1/customers", "email=other%40example.com", idempotency_key="k1")
    assert status == 400 and err["error"]["type"] == "idempotency_error"
    # a request refused by validation is not saved: the key still works once the request is right
    assert http(ws, "POST", "/v1/charges", "currency=usd", idempotency_key="k2")[0] == 400
    assert http(ws, "POST", "/v1/charges", "amount=900&currency=usd&source=tok_visa", idempotency_key="k2")[0] == 200


def test_behind_the_auth_service_only_a_token_with_the_scope_passes(ws):
    ws.auth.add_client(client_id="stripe-agent", client_secret="s", grant_types=["client_credentials"],
                       allowed_scopes=["stripe.payment_intents.write", "stripe.read_only", "stripe.full"])

    def token(scope: str) -> str:  # minted by the auth service, as env0's packages do (client_credentials)
        return ws.call("auth_token", {"grant_type": "client_credentials", "client_id": "stripe-agent",
                                      "client_secret": "s", "scope": scope}).body["access_token"]

    pi, ro, gone = token("stripe.payment_intents.write"), token("stripe.read_only"), token("stripe.full")
    assert ws.call("auth_revoke", {"token": gone}).ok
    ws.stripe.db.auth_required = True
    assert http(ws, "GET", "/v1/balance", key=KEY)[0] == 401  # a plain API key no longer works
    assert http(ws, "GET", "/v1/balance", key=gone)[0] == 401
    assert http(ws, "POST", "/v1/payment_intents", "amount=2500&currency=usd&payment_method=pm_card_visa&confirm=true",
                key=pi)[1]["status"] == "succeeded"
    assert http(ws, "GET", "/v1/payment_intents", key=pi)[0] == 200
    assert http(ws, "GET", "/v1/customers", key=pi)[0] == 403
    assert http(ws, "GET", "/v1/customers", key=ro)[0] == 200
    assert http(ws, "POST", "/v1/refunds", "charge=ch_x", key=ro)[0] == 403


def test_snapshot_restore_and_diff_cover_stripe(ws):
    ws.snapshot("before")
    call_tool(ws, "stripe_customers_create", {"email": "d@example.com"})
    added = ws.diff("before", "stripe")["stripe"]["customers"]["added"]
    assert [c["email"] for c in added.values()] == ["d@example.com"]
    ws.restore("before")
    assert not ws.stripe.db.customers and ws.diff("before") == {}


def _account() -> Workspace:
    """A small account: two customers, cards (one declining), a PaymentIntent and two charges."""
    ws = Workspace.seeded(0)
    s = ws.stripe
    for i, number in enumerate(("4242424242424242", "4000000000009995")):
        c = s.add_customer(name=f"c{i}", email=f"c{i}@example.com")
        s.add_card(number, c.id)
    cus = list(s.db.customers)
    call_tool(ws, "stripe_charges_create", {"amount": 5000, "currency": "usd", "customer": cus[0]})
    call_tool(ws, "stripe_charges_create", {"amount": 700, "currency": "usd", "source": "tok_visa"})
    call_tool(ws, "stripe_paymentIntents_create", {"amount": 1200, "currency": "usd", "customer": cus[1]})
    return ws


ACCOUNT = _account()
_IDS = [i for t in ("customers", "payment_methods", "charges", "payment_intents") for i in getattr(ACCOUNT.stripe.db, t)]
_STRIPE_TOOLS = sorted(n for n, s in __import__("env0_posttrain.workspace", fromlist=["TOOLS"]).TOOLS.items()
                       if s.service == "stripe")


def _calls():
    """Per tool: its required parameters always (ids of the account, amounts, currencies), a few optional ones."""
    from hypothesis import strategies as st

    from env0_posttrain.workspace import TOOLS

    ids = st.sampled_from(_IDS + ["pm_card_visa", "pm_card_chargeDeclined", "tok_amex", "nope"])
    db = ACCOUNT.stripe.db

    def of(*tables: str, extra: tuple[str, ...] = ("nope",)):  # mostly the right kind of id, sometimes any
        return st.one_of(st.sampled_from([i for t in tables for i in getattr(db, t)] + list(extra)), ids)

    by_name = {"customer": of("customers"), "charge": of("charges"), "payment_intent": of("payment_intents"),
               "intent": of("payment_intents"),
               "payment_method": of("payment_methods", extra=("pm_card_visa", "pm_card_chargeDeclined")),
               "source": of("payment_methods", extra=("tok_visa", "tok_chargeDeclined")),"amount": st.integers(-10, 20000), "amount_to_capture": st.integers(-10, 20000),
               "currency": st.sampled_from(["usd", "usd", "EUR", "x"]), "confirm": st.booleans(),
               "capture": st.booleans(), "reason": st.sampled_from(["duplicate", "fraudulent", "bogus"]),
               "capture_method": st.sampled_from(["automatic", "manual", "bogus"]), "limit": st.integers(-1, 120),
               "metadata": st.dictionaries(st.sampled_from(["k", "order_id"]), st.text(max_size=4), max_size=2),
               "email": st.sampled_from(["c0@example.com", "x@example.com"]), "type": st.sampled_from(["card", "refund"])}
    optional = ["customer", "charge", "payment_intent", "payment_method", "source", "amount", "confirm", "reason",
                "capture_method", "metadata", "limit", "starting_after", "capture"]

    def one(name):
        kinds = TOOLS[name].kinds
        return st.tuples(st.just(name), st.fixed_dictionaries(
            {r: by_name.get(r, ids) for r in TOOLS[name].required},
            optional={o: by_name.get(o, ids) for o in optional if o in kinds and o not in TOOLS[name].required}))

    return st.lists(st.sampled_from(_STRIPE_TOOLS).flatmap(one), min_size=1, max_size=8)


def test_random_stripe_calls_answer_4xx_keep_the_ledger_consistent_and_restore_exactly():
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_calls())
    def run(calls):
        ws = ACCOUNT.fork()
        ws.snapshot("start")
        h0 = ws.state_hash()
        for name, args in calls:
            res = call_tool(ws, name, args)
            if not res["ok"]:
                assert res["error"]["error"]["type"] != "api_error", (name, args, res)
        db = ws.stripe.db
        for ch in db.charges.values():
            refunded = sum(r.amount for r in db.refunds.values() if r.charge_id == ch.id)
            assert ch.amount_refunded == refunded <= ch.amount_captured and ch.refunded == (refunded == ch.amount_captured > 0)
            assert (ch.status == "failed") == (ch.failure_code is not None) and ch.paid == (ch.status == "succeeded")
        txn = {t.source_id: t for t in db.balance_transactions.values()}
        assert all(txn[c.id].net == c.amount_captured - txn[c.id].fee for c in db.charges.values() if c.captured)
        assert all(txn[r.id].net == -r.amount for r in db.refunds.values())
        for pi in db.payment_intents.values():
            if pi.status == "succeeded":
                assert db.charges[pi.latest_charge_id].status == "succeeded"
        json.dumps(ws.state("stripe"))
        ws.restore("start")
        assert ws.state_hash() == h0

    run()


def test_the_auth_services_own_tokens_open_stripe_by_scope_until_revoked(ws):
    ws.auth.add_client(client_id="stripe-agent", client_secret="sec", grant_types=("client_credentials",),
                       allowed_scopes=["stripe.payment_intents.write", "stripe.customers.read"])
    minted = call_tool(ws, "auth_token", {"grant_type": "client_credentials", "client_id": "stripe-agent",
                                          "client_secret": "sec", "scope": "stripe.payment_intents.write"})
    token = minted["result"]["access_token"]
    ws.stripe.db.auth_required = True
    paid = http(ws, "POST", "/v1/payment_intents", "amount=2500&currency=usd&payment_method=pm_card_visa&confirm=true",
                key=token)
    assert paid[0] == 200 and paid[1]["status"] == "succeeded"
    assert http(ws, "GET", "/v1/customers", key=token)[0] == 403  # a scope the token was not given
    assert call_tool(ws, "auth_revoke", {"token": token})["ok"]
    assert http(ws, "GET", "/v1/payment_intents", key=token)[0] == 401
