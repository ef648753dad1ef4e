"""google-api-python-client's Gmail client against the live app: a label's `color` is stored and must come from
Gmail's palette (label_colors.json, the discovery document's list; 400 otherwise), and `q` groups as Gmail's search
does: `{a b}` any, `(a b)` all, `-` before a group, `op:{a b}`, OR between groups."""

from __future__ import annotations

import base64
import json
import re
from email.message import EmailMessage
from pathlib import Path

import googleapiclient
import pytest

from env0_posttrain.workspace.services.gmail.labels import palette
from env0_posttrain_tests.support.google_clients import reseeded_service, status_of
from env0_posttrain_tests.support.live_workspace import tls_server_fixture, workspace_of as ws

pytestmark = pytest.mark.filterwarnings("ignore")
server = tls_server_fixture()


@pytest.fixture()
def gmail(server):
    return reseeded_service(server[0], "gmail", "v1", "").users()


def test_the_shipped_palette_is_the_discovery_documents():
    doc = json.loads((Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" / "gmail.v1.json")
                     .read_text())
    for field, allowed in palette().items():
        listed = doc["schemas"]["LabelColor"]["properties"][field]["description"]
        assert allowed == frozenset(re.findall(r"#[0-9a-f]{6}", listed)) and len(allowed) > 100


def test_label_color_is_stored_and_checked_against_the_palette(gmail):
    color = {"backgroundColor": "#16a766", "textColor": "#ffffff"}
    made = gmail.labels().create(userId="me", body={"name": "Clients", "color": color}).execute()
    assert made["color"] == color and gmail.labels().get(userId="me", id=made["id"]).execute()["color"] == color
    assert status_of(gmail.labels().create(userId="me", body={"name": "Odd", "color": {
        "backgroundColor": "#123456", "textColor": "#ffffff"}})) == (400, "invalidArgument")
    assert status_of(gmail.labels().patch(userId="me", id=made["id"], body={"color": {
        "backgroundColor": "#16a766"}})) == (400, "invalidArgument")
    assert "Odd" not in [l["name"] for l in gmail.labels().list(userId="me").execute()["labels"]]
    again = gmail.labels().patch(userId="me", id=made["id"], body={"color": {
        "backgroundColor": "#FB4C2F", "textColor": "#000000"}}).execute()
    assert again["color"] == {"backgroundColor": "#fb4c2f", "textColor": "#000000"}


def _send(gmail, subject: str, body: str) -> str:
    msg = EmailMessage()
    msg["To"], msg["Subject"] = "someone@example.com", subject
    msg.set_content(body)
    raw = base64.urlsafe_b64encode(msg.as_bytes()).decode()
    return gmail.messages().send(userId="me", body={"raw": raw}).execute()["id"]


def test_q_groups_as_gmail_does(server, gmail):
    a = _send(gmail, "Zebra budget", "numbers for zorblax")
    b = _send(gmail, "Zebra invoice", "the quarnix invoice")
    c = _send(gmail, "Zebra party", "zorblax and quarnix both")

    def ids(q: str) -> set[str]:
        return {m["id"] for m in gmail.messages().list(userId="me", q=q).execute().get("messages", [])}

    assert ids("{zorblax quarnix}") == {a, b, c}
    assert ids("(zorblax quarnix)") == {c}
    assert ids("subject:zebra -{zorblax quarnix}") == set()
    assert ids("subject:zebra -(zorblax quarnix)") == {a, b}
    assert ids("subject:zebra subject:{budget invoice}") == {a, b}
    assert ids("subject:(zebra party)") == {c}
    assert ids('subject:"zebra budget" OR {quarnix}') == {a, b, c}
    assert ids('"quarnix invoice" OR subject:"zebra party"') == {b, c}
    assert ids("zorblax AND quarnix") == {c}
    assert ids("subject:zebra {zorblax") == {a, c}  # an unbalanced brace is read as a space
    assert len(ws(server).gmail.db.messages) > 3
