"""The gate's Google scopes are the discovery documents': every method of Gmail, Calendar, Drive, Docs
and the Admin Directory we serve accepts a token holding any one scope its discovery entry lists, and refuses one
holding none of them; env0's packages keep env0's one narrower rule (messages.send)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from env0_posttrain.workspace.environment import Workspace
from env0_posttrain.workspace.services.auth.gate import Refusal, authorize, google_scopes
from env0_posttrain.workspace.tools import TOOLS
from env0_posttrain_tests.support.paths import REPO

GOOGLE = ("gmail", "calendar", "drive", "docs", "admin")
G = "https://www.googleapis.com/auth/"


def _bench_table() -> dict:
    """google_scopes.json as bench/google_scopes.py builds it now from the shipped discovery documents."""
    pytest.importorskip("googleapiclient")
    path = REPO / "bench" / "google_scopes.py"
    spec = importlib.util.spec_from_file_location("google_scopes_bench", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["google_scopes_bench"] = mod
    spec.loader.exec_module(mod)
    return mod.table()["methods"]


@pytest.fixture(scope="module")
def ws() -> Workspace:
    ws = Workspace.seeded(0)
    ws.auth.add_client(client_id="tester", allowed_scopes=["openid"], grant_types=["client_credentials"])
    return ws


def _bearer(ws: Workspace, scope: str) -> str:
    res = ws.call("auth_admin_issueToken", {"client_id": "tester", "user_id": ws.me.user_id, "scopes": [scope],
                                            "include_refresh": False})
    assert res.ok, res.body
    return "Bearer " + res.body["access_token"]


def _passes(ws: Workspace, name: str, scope: str) -> bool:
    try:
        authorize(ws, TOOLS[name], _bearer(ws, scope), {"userId": "me"})
    except Refusal as r:
        assert r.kind == "scope", (name, scope, r.kind)
        return False
    return True


def test_the_scope_table_is_the_discovery_documents_for_every_google_method():
    table = _bench_table()
    assert {k: list(v) for k, v in google_scopes().items()} == table
    assert set(table) == {s.method_id for s in TOOLS.values() if s.service in GOOGLE}
    assert all(table.values())  # every method names its scopes


def test_every_method_accepts_every_scope_its_discovery_entry_lists_and_refuses_others(ws):
    checked = 0
    for spec in (s for s in TOOLS.values() if s.service in GOOGLE):
        for url in google_scopes()[spec.method_id]:
            assert _passes(ws, spec.name, url), (spec.method_id, url)
            checked += 1
        assert not _passes(ws, spec.name, "openid"), spec.method_id
    assert checked == sum(len(v) for v in google_scopes().values())


@pytest.mark.parametrize("name, scope", [("gmail_messages_send", G + "gmail.modify"),
                                         ("gmail_messages_send", G + "gmail.compose"),
                                         ("gmail_labels_list", G + "gmail.readonly"),
                                         ("gmail_drafts_list", G + "gmail.readonly")])
def test_the_scenarios_google_serves_are_served(ws, name, scope):
    assert _passes(ws, name, scope)


def test_env0s_packages_keep_env0s_send_rule():
    ws = Workspace.seeded(0)
    ws.auth.add_client(client_id="tester", allowed_scopes=["openid"], grant_types=["client_credentials"])
    ws.auth.db.profile = "env0"  # what auth_seeding sets for an env0 package
    for scope, ok in (("gmail.compose", False), ("gmail.modify", False), ("gmail.send", True),
                      ("https://mail.google.com/", True)):
        assert _passes(ws, "gmail_messages_send", scope) is ok, scope
    assert _passes(ws, "gmail_drafts_send", "gmail.compose")  # the rest is Google's
