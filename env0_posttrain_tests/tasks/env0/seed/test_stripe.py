"""env0 Stripe packages through our runtime: a fixture package of our own making in env-0's shape (a Dockerfile
seeding `task:<name>` from data/stripe_seed.py with env_0_stripe's helpers, solve.sh with curl and an
Idempotency-Key retry, test.sh reading /_admin/state, diff and action_log) gets the oracle's full reward, a
no-op none; an agent's tool calls (a decline included) are judged like the HTTP calls they stand for."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from env0_posttrain.tasks.env0.seed.env0_defaults import env0_imports
from env0_posttrain.tasks.env0.run.runner import run_and_record
from env0_posttrain.tasks.env0.serve.server import log_entry
from env0_posttrain.tasks.env0.serve.shapes import STATE
from env0_posttrain.tasks.env0.seed.stripe import auth_enabled, scenario, seed_stripe
from env0_posttrain.workspace import TOOLS, Workspace, call_tool
from env0_posttrain_tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "env0_stripe_refund"
needs_shell = pytest.mark.skipif(shutil.which("curl") is None or shutil.which("bash") is None,
                                 reason="env0 packages' scripts need bash and curl")


@needs_shell
def test_oracle_full_reward_noop_none_and_the_idempotent_retry_refunds_once():
    res = run_and_record(FIXTURE, oracle=True)
    assert res.verifier_error is None and res.reward == 1.0
    assert res.result["metrics"] == {"refunded": True, "balance_read": True, "wrong": False, "added_refunds": 1}
    noop = run_and_record(FIXTURE)
    assert noop.verifier_error is None and noop.reward == 0.0


@needs_shell
def test_agent_tool_calls_are_judged_as_their_http_requests(tmp_path: Path):
    ws = Workspace.seeded(0)
    seed_stripe(ws, FIXTURE, 0)
    dup = next(c for c in ws.stripe.db.charges.values() if "duplicate" in c.metadata_json)
    other = next(c for c in ws.stripe.db.charges.values() if c.customer_id != dup.customer_id)
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([{"name": "stripe_refunds_create", "arguments": {"charge": dup.id}},
                                 {"name": "stripe_balance_retrieve", "arguments": {}}]))
    assert run_and_record(FIXTURE, calls=calls).reward == 1.0  # ids are the seeder's: same seed, same ids
    calls.write_text(json.dumps([{"name": "stripe_refunds_create", "arguments": {"charge": other.id}}]))
    res = run_and_record(FIXTURE, calls=calls)
    assert res.reward == -1.0 and res.result["metrics"]["wrong"] is True


def test_seeding_runs_the_packages_seeder_with_the_env_0_stripe_stand_in():
    ws = Workspace.seeded(0)
    assert scenario(FIXTURE) == "task:env0_stripe_refund" and not auth_enabled(FIXTURE)
    summary = seed_stripe(ws, FIXTURE, 0)
    db = ws.stripe.db
    assert summary == {"customers": 2, "charges": 3} and len(db.customers) == 2 and len(db.charges) == 3
    shop = next(c for c in db.customers.values() if c.name == "Harbor Bikes")
    assert shop.default_payment_method in db.payment_methods  # set on the object after db.add: kept
    assert all(c.balance_transaction_id in db.balance_transactions for c in db.charges.values())
    state = STATE["stripe"](ws)
    row = next(c for c in state["charges"] if "duplicate" in c["metadata_json"])
    assert {"customer_id", "payment_method_id", "payment_intent_id", "amount_refunded", "paid", "captured"} <= set(row)
    assert "env_0_stripe" not in __import__("sys").modules  # the stand-in is gone again after seeding


def test_default_scenario_and_the_auth_flag(tmp_path: Path):
    pkg = tmp_path / "pkg"
    (pkg / "environment").mkdir(parents=True)
    (pkg / "environment" / "Dockerfile").write_text("ENV AUTH_ENABLED=1\nRUN stripe --db /data/stripe.db seed "
                                                    "--scenario default\n")
    ws = Workspace.seeded(0)
    seed_stripe(ws, pkg, 0)
    ada = ws.stripe.db.customers["cus_OhbVrpoiVgRV5IfLBcbfnoGM"]  # env0 packages name Ada's id outright
    assert ada.email == "ada@example.com" and ws.stripe.db.auth_required is True
    assert {c.email for c in ws.stripe.db.customers.values()} == {"ada@example.com", "grace@example.com",
                                                                 "alan@example.com"}


def test_env_0_stripe_resolves_under_env0s_import_hook_too(tmp_path: Path):
    (tmp_path / "packages" / "environments").mkdir(parents=True)  # an env0 checkout without any stripe package
    with env0_imports(tmp_path):
        from env_0_stripe.testcards import spec_for_number  # type: ignore[import-not-found]

        assert spec_for_number("4000000000009995")["decline_code"] == "insufficient_funds"


def test_a_tool_call_is_logged_as_stripe_http_request():
    ws = Workspace.seeded(0)
    call_tool(ws, "stripe_customers_create", {"email": "x@example.com"})
    prefix, post = log_entry(TOOLS["stripe_refunds_create"], {"charge": "ch_1", "amount": 300}, 200)
    assert prefix == "stripe" and post["path"] == "/v1/refunds" and post["request_body"] == {"charge": "ch_1", "amount": 300}
    _, get = log_entry(TOOLS["stripe_charges_list"], {"customer": "cus_1"}, 200)
    assert get["method"] == "GET" and get["path"] == "/v1/charges?customer=cus_1" and get["request_body"] is None
