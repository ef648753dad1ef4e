"""The Stripe service in process: its wire format (bracket form keys), a decline that keeps its failed charge
while a refused request changes nothing, list pages and expand[], restricted keys, the auth-service gate, the
agent tools' Stripe error objects, and snapshot / restore / diff."""

from __future__ import annotations

import json
from types import SimpleNamespace
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
    assert unknown == {"type": "invalid_request_error", "message": "Received unknown parameter: colour", "param": "colour"}
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
    rows = {"tok-pi": SimpleNamespace(scope="stripe.payment_intents.write", revoked=False),
            "tok-ro": SimpleNamespace(scope="stripe.read_only", revoked=False),
            "tok-gone": SimpleNamespace(scope="stripe.full", revoked=True)}
    ws.auth = SimpleNamespace(access_row=rows.get)  # the auth service's token reader, as the gate calls it
    ws.stripe.db.auth_required = True
    assert http(ws, "GET", "/v1/balance", key=KEY)[0] == 401  # a plain API key no longer works
    assert http(ws, "GET", "/v1/balance", key="tok-gone")[0] == 401
    assert http(ws, "POST", "/v1/payment_intents", "amount=2500&currency=usd&payment_method=pm_card_visa&confirm=true",
                key="tok-pi")[1]["status"] == "succeeded"
    assert http(ws, "GET", "/v1/payment_intents", key="tok-pi")[0] == 200
    assert http(ws, "GET", "/v1/customers", key="tok-pi")[0] == 403
    assert http(ws, "GET", "/v1/customers", key="tok-ro")[0] == 200
    assert http(ws, "POST", "/v1/refunds", "charge=ch_x", key="tok-ro")[0] == 403


def test_snapshot_restore_and_diff_cover_stripe(ws):
    ws.snapshot("before")
    call_tool(ws, "stripe_customers_create", {"email": "d@example.com"})
    added = ws.diff("before", "stripe")["stripe"]["customers"]["added"]
    assert [c["email"] for c in added.values()] == ["d@example.com"]
    ws.restore("before")
    assert not ws.stripe.db.customers and ws.diff("before") == {}
