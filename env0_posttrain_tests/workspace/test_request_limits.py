"""The work one request may cost: values and nesting counted in the bytes before anything is built (brackets and
commas inside strings do not count), each API's byte cap, and the runner-wide budget for large bodies (a full
budget answers the API's busy error, then frees; small bodies never wait)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from env0_posttrain.workspace import request_limits as rl
from env0_posttrain.workspace.http_app import create_app


def test_values_and_nesting_are_counted_before_parsing():
    assert rl.structure_problem(b"[" + b"{}," * rl.MAX_ELEMENTS + b"{}]") == "JSON with more than 100000 values"
    assert rl.structure_problem(b"[" + b"1," * (rl.MAX_ELEMENTS - 2) + b"1]") is None
    assert rl.structure_problem("[" * 101 + "]" * 101) == "JSON nested deeper than 100 levels"
    assert rl.structure_problem("[" * 100 + "]" * 100) is None
    assert rl.structure_problem(b'{"a": [1, {"b": [[2]]}]}' + b" " * 10) is None
    inside = json.dumps({"text": "[{," * (2 * rl.MAX_ELEMENTS), "n": [[1]] * 50})  # brackets in a string: text
    assert rl.structure_problem(inside) is None and rl.loads(inside)["n"][0] == [1]
    assert rl.structure_problem(b"[[[[]]") is None  # unbalanced: the parser's error, not ours
    with pytest.raises(rl.TooMuchJson, match="more than 100000 values"):
        rl.loads(b"[" + b"[]," * rl.MAX_ELEMENTS + b"[]]")
    with pytest.raises(rl.TooMuchJson, match="deeper than 100"):
        rl.loads("{" + '"a":{' * 150 + "}" * 151)


@pytest.mark.parametrize("path,limit", [("/api/chat.postMessage", rl.SLACK_PAYLOAD_LIMIT),
                                        ("/api/files.upload", rl.GOOGLE_PAYLOAD_LIMIT),
                                        ("/v1/customers", rl.STRIPE_PAYLOAD_LIMIT),
                                        ("/v1/documents/d1:batchUpdate", rl.GOOGLE_PAYLOAD_LIMIT),
                                        ("/upload/drive/v3/files", rl.DRIVE_UPLOAD_LIMIT)])
def test_each_api_has_its_byte_cap(path, limit):
    assert rl.body_limit(path) == limit


def test_the_budget_lets_one_oversized_body_run_alone():
    b = rl.Budget(100)
    assert b.take(60) and not b.take(50) and b.take(40)
    b.give(60)
    b.give(40)
    assert b.take(500) and not b.take(1)  # larger than the whole budget: alone
    b.give(500)
    assert b.used == 0 and b.peak == 500


def test_a_full_budget_answers_busy_and_small_bodies_never_wait(monkeypatch):
    """Another sandbox's bodies hold the whole budget: a large body gets Google's 503 / Slack's ratelimited at once
    (the wait set to 0 here), a small one is answered; once the budget is given back the large one goes through."""
    budget = rl.Budget(rl.BODY_BUDGET)
    monkeypatch.setattr(rl, "BODIES", budget)
    monkeypatch.setattr(rl, "BUSY_WAIT_S", 0.0)
    app = create_app()
    big = json.dumps({"raw": "eA", "pad": "x" * (rl.SMALL_BODY * 2)})

    async def send(path: str, body: str) -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://ws") as client:
            return await client.post(path, content=body, headers={"content-type": "application/json"})

    assert budget.take(rl.BODY_BUDGET)  # held elsewhere
    busy = asyncio.run(send("/gmail/v1/users/me/messages/send", big))
    assert busy.status_code == 503 and busy.json()["error"]["errors"][0]["reason"] == "backendError"
    slack = asyncio.run(send("/api/chat.postMessage", big))
    assert slack.status_code == 429 and slack.json() == {"ok": False, "error": "ratelimited"}
    small = asyncio.run(send("/api/chat.postMessage", json.dumps({"channel": "C0", "text": "hi"})))
    assert small.status_code == 200 and small.json()["error"] == "channel_not_found"
    budget.give(rl.BODY_BUDGET)
    assert budget.used == 0  # the refused ones gave back what they held
    sent = asyncio.run(send("/gmail/v1/users/me/messages/send", big))
    assert sent.status_code != 503 and budget.used == 0
