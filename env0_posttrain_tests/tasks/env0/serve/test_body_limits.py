"""A body attack through both doors (a package's scripts, an agent's shell commands): bodies made of
`{}` by the MB on four connections at once, a `/_gws` call carrying them, Slack `blocks` nested 5,000 deep or
120,000 wide (as JSON and as a form field, under Slack's byte cap), and bodies over Slack's and Google's byte caps. Each is refused with the
API's own error before any object is built (the parse limit refused every big body: the parser never saw one), the
next command answers, and a round of two concurrent episodes goes on, counted."""

from __future__ import annotations

import json

import pytest

from env0_posttrain.workspace import request_limits
from env0_posttrain_tests.sandbox.test_attacks import (  # noqa: F401 - pytestmark: skipped where nothing is confined
    DOORS,
    attack,
    corpus,
    package_round,
    pytestmark,
    shell_round,
)

BODIES = """python3 - <<'PY'
import http.client, json, socket, threading, urllib.parse
def post(port, path, body, ctype="application/json"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", path, body, {"Content-Type": ctype})
    r = c.getresponse()
    text = r.read().decode("utf-8", "replace")
    c.close()
    return [r.status, text[:200]]
def declared(port, path, length):  # only the head: a body over the cap is answered by its Content-Length
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(f"POST {path} HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\n"
              f"Content-Length: {length}\\r\\n\\r\\n".encode())
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\\r\\n\\r\\n")
    return [int(head.split()[1]), body.decode()[:200]]
empties = b"[" + b"{}," * 1400000 + b"{}]"  # 4 MB, 1.4 million objects
out = {}
def send(i):
    out[f"gmail-{i}"] = post(9001, "/gmail/v1/users/me/messages/send", b'{"raw": "eA", "payload": ' + empties + b"}")
threads = [threading.Thread(target=send, args=(i,)) for i in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
out["gws"] = post(9001, "/_gws", b'{"service": "gmail", "method_id": "gmail.users.messages.list", "params": '
                  b'{"q": ' + empties + b"}}")
c = http.client.HTTPConnection("127.0.0.1", 9002, timeout=30)
c.request("GET", "/api/conversations.list")
chan = next(ch["id"] for ch in json.loads(c.getresponse().read())["channels"] if ch.get("is_member"))
deep, wide = "[" * 5000 + "]" * 5000, "[" + "[]," * 120000 + "[]]"
for name, blocks in (("deep", deep), ("wide", wide)):
    out[f"slack-json-{name}"] = post(9002, "/api/chat.postMessage",
                                     json.dumps({"channel": chan, "text": "x"})[:-1].encode() + b', "blocks": '
                                     + blocks.encode() + b"}")
    out[f"slack-form-{name}"] = post(9002, "/api/chat.postMessage", urllib.parse.urlencode(
        {"channel": chan, "text": "x", "blocks": blocks}).encode(), "application/x-www-form-urlencoded")
out["slack-over-cap"] = declared(9002, "/api/chat.postMessage", 3 << 20)
out["gmail-over-cap"] = declared(9001, "/gmail/v1/users/me/messages/send", 11 << 20)
out["slack-honest"] = post(9002, "/api/chat.postMessage", json.dumps({"channel": chan, "text": "still here"}).encode())
print("STATUSES", " ".join(f"{k}={v[0]}" for k, v in sorted(out.items())), flush=True)
print("BODIES", json.dumps(out), flush=True)
PY"""


STATUSES = "STATUSES " + " ".join(sorted([*(f"gmail-{i}=400" for i in range(4)), "gws=400", "gmail-over-cap=413",
                                          "slack-over-cap=413", "slack-honest=200",
                                          *(f"slack-{k}-{n}=200" for k in ("json", "form") for n in ("deep", "wide"))]))


def _answers(text: str) -> dict[str, list]:
    line = next(x for x in text.splitlines() if x.startswith("BODIES "))
    return json.loads(line.split(" ", 1)[1])


def _assert_refused(out: dict[str, list]) -> None:
    for i in range(4):
        status, body = out[f"gmail-{i}"]
        assert status == 400 and "Invalid JSON payload received. JSON with more than 100000 values" in body, body
    assert out["gws"][0] == 400 and "gws: JSON with more than 100000 values" in out["gws"][1]
    for name in ("deep", "wide"):
        assert json.loads(out[f"slack-json-{name}"][1]) == {"ok": False, "error": "invalid_json"}
        assert json.loads(out[f"slack-form-{name}"][1]) == {"ok": False, "error": "invalid_blocks_format"}
    assert out["slack-over-cap"][0] == 413 and json.loads(out["slack-over-cap"][1])["error"] == "request_too_large"
    assert out["gmail-over-cap"][0] == 413 and "exceeds the limit: 10485760 bytes" in out["gmail-over-cap"][1]
    assert out["slack-honest"][0] == 200 and json.loads(out["slack-honest"][1])["ok"] is True


@pytest.mark.parametrize("door", DOORS)
def test_bodies_that_hold_too_much_are_refused_before_they_are_built(door, tmp_path, corpus, monkeypatch):  # noqa: F811
    from env0_posttrain.tasks import generate_tasks

    refused: list[int] = []  # the sizes of the texts the parse limit refused: the parser never saw them
    real = request_limits.structure_problem

    def spy(raw):
        problem = real(raw)
        if problem is not None:
            refused.append(len(raw))
        return problem
    monkeypatch.setattr(request_limits, "structure_problem", spy)
    out, then = attack(door, BODIES, tmp_path, generate_tasks(0, per_template=1)[0], after="echo next-answered")
    monkeypatch.undo()
    _assert_refused(_answers(out))
    assert STATUSES in out and then.startswith("next-answered")
    assert len([n for n in refused if n > 1 << 20]) >= 5 and len(refused) >= 9, refused  # 4 + gws; Slack's 4
    eps = shell_round(BODIES) if door == "shell" else package_round(corpus, BODIES)  # two episodes at once, counted
    seen = [m["content"] for e in eps for m in e.messages if m["role"] == "tool"][::2] if door == "shell" else \
        [e.verifier.detail for e in eps if e.task_id.startswith("env0-hostile")]  # test.sh's output, cut short
    assert seen and all(STATUSES in text for text in seen), seen


def test_a_refused_body_that_reached_no_tool_is_recorded_cut():
    """So a flood of refused bodies does not pile up whole in the runner for the episode; a body that reached a
    tool, or was answered 2xx, is kept whole for replay."""
    from env0_posttrain.tasks.env0.serve.recording import REFUSED_BODY_KEPT, recorded

    body = b"[" + b"{}," * 100_000 + b"{}]"
    cut = recorded("gmail", "POST", "/gmail/v1/users/me/messages/send", b"", [], body, 400, [])
    assert cut.body_cut_from == len(body) and cut.body_bytes() == body[:REFUSED_BODY_KEPT]
    call = {"tool": "gmail_users_messages_send", "args": {}, "ok": False, "status": 400}
    for status, log in ((400, [call]), (200, [])):
        whole = recorded("gmail", "POST", "/gmail/v1/users/me/messages/send", b"", [], body, status, log)
        assert whole.body_cut_from is None and whole.body_bytes() == body
