"""The official `stripe` Python client against our Stripe service on a live local server: one test per method
env0's Stripe packages use (customers, charges with a declined card, refunds, balance, PaymentIntents, idempotent
retries) and the error classes the client raises from our error objects."""

from __future__ import annotations

import pytest

stripe = pytest.importorskip("stripe")

from env0_posttrain.workspace.local_server import running_server  # noqa: E402

KEY = "sk_test_env_0_51deterministic"


@pytest.fixture(scope="module")
def server():
    with running_server(seed=0) as (base, app):
        yield base, app


@pytest.fixture()
def ws(server):
    """A freshly seeded workspace behind the server, and the client's module globals pointed at it."""
    base, app = server
    from env0_posttrain.workspace import Workspace

    app.state.ws = Workspace.seeded(0)
    saved = stripe.api_base, stripe.api_key, stripe.max_network_retries
    stripe.api_base, stripe.api_key, stripe.max_network_retries = base, KEY, 0
    yield app.state.ws
    stripe.api_base, stripe.api_key, stripe.max_network_retries = saved


def test_customers_create_list_retrieve(ws):
    made = stripe.Customer.create(name="Ada Lovelace", email="ada@example.com", metadata={"tier": "gold"})
    stripe.Customer.create(name="Grace Hopper", email="grace@example.com")
    assert made.id.startswith("cus_") and made.metadata["tier"] == "gold"
    found = stripe.Customer.list(email="ada@example.com")
    assert [c.id for c in found.data] == [made.id] and found.has_more is False
    assert stripe.Customer.retrieve(made.id).email == "ada@example.com"
    assert [c.name for c in stripe.Customer.list(limit=1).auto_paging_iter()] == ["Grace Hopper", "Ada Lovelace"]


def test_charges_create_list_retrieve_and_a_declined_card(ws):
    cus = stripe.Customer.create(email="buyer@example.com")
    ok = stripe.Charge.create(amount=4800, currency="usd", customer=cus.id, source="tok_visa")
    assert ok.status == "succeeded" and ok.paid and ok.captured and ok.amount == 4800
    with pytest.raises(stripe.CardError) as e:
        stripe.Charge.create(amount=4800, currency="usd", customer=cus.id, source="tok_chargeDeclinedInsufficientFunds")
    assert e.value.code == "card_declined" and e.value.http_status == 402
    assert e.value.error.decline_code == "insufficient_funds"
    listed = stripe.Charge.list(customer=cus.id)
    assert sorted(c.status for c in listed.data) == ["failed", "succeeded"]  # the decline leaves its failed charge
    assert stripe.Charge.retrieve(ok.id, expand=["customer"]).customer.email == "buyer@example.com"


def test_refunds_in_part_then_the_rest_and_no_more(ws):
    cus = stripe.Customer.create(email="r@example.com")
    ch = stripe.Charge.create(amount=9000, currency="usd", customer=cus.id, source="tok_mastercard")
    part = stripe.Refund.create(charge=ch.id, amount=3000, reason="requested_by_customer")
    assert part.status == "succeeded" and part.amount == 3000 and part.charge == ch.id
    rest = stripe.Refund.create(charge=ch.id)
    assert rest.amount == 6000 and stripe.Charge.retrieve(ch.id).refunded is True
    assert {r.id for r in stripe.Refund.list(charge=ch.id).data} == {part.id, rest.id}
    with pytest.raises(stripe.InvalidRequestError) as e:
        stripe.Refund.create(charge=ch.id, amount=1)
    assert e.value.code == "charge_already_refunded" and e.value.http_status == 400


def test_balance_counts_charges_less_fees_and_refunds(ws):
    before = stripe.Balance.retrieve()
    cus = stripe.Customer.create(email="b@example.com")
    ch = stripe.Charge.create(amount=10000, currency="usd", customer=cus.id, source="tok_visa")
    stripe.Refund.create(charge=ch.id, amount=2500)
    after = stripe.Balance.retrieve()
    usd = lambda parts: next(p.amount for p in parts if p.currency == "usd")  # noqa: E731
    fee = round(10000 * 0.029) + 30
    assert usd(after.pending) - usd(before.pending) == 10000 - fee  # a new charge settles in two days
    assert usd(after.available) - usd(before.available) == -2500  # a refund leaves the available funds at once
    txns = stripe.BalanceTransaction.list(source=ch.id)
    assert [t.type for t in txns.data] == ["charge"] and txns.data[0].fee == fee


def test_payment_intent_declines_then_succeeds_with_another_card(ws):
    cus = stripe.Customer.create(email="pi@example.com")
    pi = stripe.PaymentIntent.create(amount=2500, currency="usd", customer=cus.id, metadata={"order_id": "1234"})
    assert pi.status == "requires_payment_method"
    with pytest.raises(stripe.CardError) as e:
        stripe.PaymentIntent.confirm(pi.id, payment_method="pm_card_chargeDeclined")
    assert e.value.error.payment_intent.status == "requires_payment_method"
    done = stripe.PaymentIntent.confirm(pi.id, payment_method="pm_card_visa")
    assert done.status == "succeeded" and done.amount_received == 2500
    charge = stripe.Charge.retrieve(done.latest_charge)
    assert charge.metadata["order_id"] == "1234" and charge.payment_intent == pi.id
    once = stripe.PaymentIntent.create(amount=2500, currency="usd", customer=cus.id, payment_method="pm_card_visa",
                                       confirm=True)
    assert once.status == "succeeded"
    assert {p.id for p in stripe.PaymentIntent.list(customer=cus.id).data} == {pi.id, once.id}


def test_idempotent_retry_returns_the_same_charge_and_charges_once(ws):
    cus = stripe.Customer.create(email="idem@example.com")
    first = stripe.Charge.create(amount=4999, currency="usd", customer=cus.id, source="tok_visa",
                                 idempotency_key="order-1234")
    again = stripe.Charge.create(amount=4999, currency="usd", customer=cus.id, source="tok_visa",
                                 idempotency_key="order-1234")
    assert again.id == first.id and len(stripe.Charge.list(customer=cus.id).data) == 1
    with pytest.raises(stripe.IdempotencyError):
        stripe.Charge.create(amount=5000, currency="usd", customer=cus.id, source="tok_visa",
                             idempotency_key="order-1234")


def test_error_types_the_client_raises(ws):
    with pytest.raises(stripe.InvalidRequestError) as e:
        stripe.Customer.retrieve("cus_missing")
    assert e.value.http_status == 404 and e.value.code == "resource_missing"
    with pytest.raises(stripe.InvalidRequestError) as e:
        stripe.Charge.create(currency="usd", source="tok_visa")
    assert e.value.param == "amount"
    with pytest.raises(stripe.AuthenticationError):
        stripe.Customer.list(api_key="sk_test_not_a_key_0000")
    ws.stripe.add_api_key("rk_test_readonly_customers", ["customers.read"])
    assert stripe.Customer.list(api_key="rk_test_readonly_customers").object == "list"
    with pytest.raises(stripe.PermissionError) as e:
        stripe.Customer.create(email="x@example.com", api_key="rk_test_readonly_customers")
    assert e.value.http_status == 403


def test_search_customers_and_charges(ws):
    exact = stripe.Customer.create(name="Acme Corporation", email="billing@acme-corporation.com")
    stripe.Customer.create(name="Acme Corp", email="accounts@acme-corp.io")
    assert [c.id for c in stripe.Customer.search(query="name:'Acme Corporation'").data] == [exact.id]
    assert len(stripe.Customer.search(query="name~'acme'").data) == 2
    stripe.Charge.create(amount=9000, currency="usd", customer=exact.id, source="tok_visa", metadata={"inv": "4471"})
    found = stripe.Charge.search(query=f"customer:'{exact.id}' AND metadata['inv']:'4471' AND amount>=9000")
    assert found.object == "search_result" and [c.amount for c in found.data] == [9000]
    with pytest.raises(stripe.InvalidRequestError):
        stripe.Customer.search(query="colour:'red'")


def test_client_object_style_with_stripe_client(server, ws):
    client = stripe.StripeClient(KEY, base_addresses={"api": server[0]}, max_network_retries=0)
    cus = client.v1.customers.create({"email": "sc@example.com"})
    pms = client.v1.customers.payment_methods.list(cus.id)
    assert pms.data == [] and client.v1.customers.retrieve(cus.id).email == "sc@example.com"


def test_expand_refuses_a_field_stripe_does_not_expand(ws):
    charge = stripe.Charge.create(amount=500, currency="usd", source="tok_visa")
    for field in ("amount", "id", "currency", "data"):
        with pytest.raises(stripe.InvalidRequestError) as e:
            stripe.Charge.retrieve(charge.id, expand=[field])
        assert e.value.http_status == 400 and e.value.param == "expand" and f"({field})" in e.value.user_message
    got = stripe.Charge.retrieve(charge.id, expand=["balance_transaction", "customer"])
    assert got.balance_transaction.object == "balance_transaction" and got.customer is None
