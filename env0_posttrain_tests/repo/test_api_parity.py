"""The parameter-parity audit (bench/api_parity.py): the parameters the issue named act, nothing crashes, what
Stripe does not serve is refused with its own parameter_unknown, and docs/API-PARITY.md is the audit's output."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from env0_posttrain_tests.support.paths import REPO as ROOT

pytest.importorskip("stripe")
pytest.importorskip("googleapiclient")
_spec = importlib.util.spec_from_file_location("api_parity_bench", ROOT / "bench" / "api_parity.py")
parity = importlib.util.module_from_spec(_spec)
sys.modules["api_parity_bench"] = parity
_spec.loader.exec_module(parity)

LISTS = ["stripe.customers.list", "stripe.charges.list", "stripe.paymentIntents.list", "stripe.refunds.list",
         "stripe.balanceTransactions.list", "stripe.events.list"]


@pytest.fixture(scope="module")
def rows():
    return parity.run(["stripe", *parity.DOCUMENTS])


def _verdict(rows, method: str, param: str) -> str:
    hits = [r.verdict for r in rows if r.method == method and r.param == param]
    assert hits, (method, param)
    return hits[0]


def test_stripe_list_filters_and_cursors_act(rows):
    for method in LISTS:
        for param in ("created (integer)", "created (object)", "limit", "starting_after", "ending_before"):
            assert _verdict(rows, method, param) == "acts", (method, param)


def test_calendar_attachments_act_with_supports_attachments(rows):
    for method in ("calendar.events.insert", "calendar.events.patch", "calendar.events.update"):
        assert _verdict(rows, method, "supportsAttachments") == "acts", method
        assert _verdict(rows, method, "Event.attachments") == "acts", method


def test_expand_acts_where_the_answer_holds_an_id_and_nothing_crashes(rows):
    assert _verdict(rows, "stripe.charges.list", "expand") == "acts"
    assert _verdict(rows, "stripe.charges.search", "expand") == "acts"
    assert not [r for r in rows if r.verdict == "5xx"]


def test_what_stripe_does_not_serve_is_refused_as_parameter_unknown(rows):
    refused = [r for r in rows if r.service == "stripe" and r.verdict == "refused: not served"]
    assert refused and all("parameter_unknown" in r.note for r in refused)
    assert not [r for r in rows if r.service == "stripe" and r.verdict == "refused: value"]


def test_the_docs_table_is_the_audits_output(rows):
    assert (ROOT / "docs" / "API-PARITY.md").read_text() == parity.render(rows) + "\n", \
        "regenerate: .venv/bin/python bench/api_parity.py --write docs/API-PARITY.md"
