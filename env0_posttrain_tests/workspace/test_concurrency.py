"""Eight concurrent writers lose no update, over HTTP and in process; history ids stay consistent."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

from env0_posttrain.workspace import Workspace, call_tool

from env0_posttrain.workspace.local_server import running_server

WRITERS, EACH = 8, 15


def _check_no_lost_update(ws: Workspace, sent_ids: list[str], ts: list[str]) -> None:
    assert len(set(sent_ids)) == WRITERS * EACH
    assert all(i in ws.gmail.db.messages for i in sent_ids)
    history = [ws.gmail.db.messages[i].historyId for i in sent_ids]
    assert len(set(history)) == len(history)  # every write got its own history id
    assert max(history) <= ws.gmail.db.history
    assert len(set(ts)) == WRITERS * EACH
    texts = {m.text for m in ws.slack.history("general")}
    assert all(f"w{w}-{i}" in texts for w in range(WRITERS) for i in range(EACH))


def test_eight_concurrent_http_writers_lose_no_update():
    with running_server(seed=0) as (base, app):
        def writer(w: int) -> tuple[list[str], list[str]]:
            ids, ts = [], []
            with httpx.Client(base_url=base) as c:
                for i in range(EACH):
                    r = c.post("/gmail/v1/users/me/messages/send",
                               json={"raw": _raw(f"w{w}-{i}")})
                    assert r.status_code == 200, r.text
                    ids.append(r.json()["id"])
                    r = c.post("/api/chat.postMessage", data={"channel": "general", "text": f"w{w}-{i}"})
                    assert r.json()["ok"], r.text
                    ts.append(r.json()["ts"])
            return ids, ts

        with ThreadPoolExecutor(WRITERS) as pool:
            results = list(pool.map(writer, range(WRITERS)))
        ws = app.state.ws
        _check_no_lost_update(ws, [i for r in results for i in r[0]], [t for r in results for t in r[1]])
        assert len(ws.action_log) == 2 * WRITERS * EACH


def test_eight_concurrent_in_process_writers_lose_no_update():
    ws = Workspace.seeded(0)

    def writer(w: int) -> tuple[list[str], list[str]]:
        ids, ts = [], []
        for i in range(EACH):
            r = call_tool(ws, "gmail_messages_send", {"to": "x@example.com", "subject": f"w{w}-{i}", "body_text": "b"})
            ids.append(r["result"]["id"])
            r = call_tool(ws, "slack_chat_postMessage", {"channel": "general", "text": f"w{w}-{i}"})
            ts.append(r["result"]["ts"])
        return ids, ts

    with ThreadPoolExecutor(WRITERS) as pool:
        results = list(pool.map(writer, range(WRITERS)))
    _check_no_lost_update(ws, [i for r in results for i in r[0]], [t for r in results for t in r[1]])
    seqs = [e["seq"] for e in ws.action_log]
    assert seqs == list(range(1, len(seqs) + 1))


def _raw(subject: str) -> str:
    import base64
    msg = f"To: partner@example.com\r\nSubject: {subject}\r\n\r\nhello\r\n".encode()
    return base64.urlsafe_b64encode(msg).decode()
