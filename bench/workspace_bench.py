"""Workspace benchmark: in-process tool calls/s, HTTP list requests/s on loopback, snapshot+restore time.

    .venv/bin/python bench/workspace_bench.py [--seconds 3] [--clients 4]

Prints one table. The HTTP server runs in its own process (uvicorn, as `serve` runs it), so the client
threads here do not share its interpreter lock; on a 2-core machine client and server still share cores.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from datetime import timedelta

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from env0_posttrain.workspace import SERVICE_NAMES, Workspace, call_tool, openai_tools, service_tools  # noqa: E402


def big_workspace(seed: int = 0) -> Workspace:
    """The issue's scale: 1,000 messages, 200 events, 300 files (seeded filler topped up), 120 more Slack posts."""
    ws = Workspace.seeded(seed)
    people = ws.directory
    for i in range(1000 - len(ws.gmail.db.messages)):
        p = people[i % len(people)]
        ws.gmail.add_message(sender=f"{p.name} <{p.email}>", subject=f"Status update {i}",
                             body=f"Update number {i} on the project. " * 5, date=ws.now - timedelta(minutes=7 * i),
                             unread=i % 3 == 0)
    for i in range(200 - len(ws.calendar.db.events)):
        start = ws.now + timedelta(hours=3 * i)
        ws.calendar.add_event(summary=f"Review {i}", start=start, end=start + timedelta(minutes=30),
                              attendees=[ws.me.email, people[i % len(people)].email])
    add_calendar_sharing(ws)
    for i in range(300 - len(ws.drive.db.files)):
        ws.drive.add_file(name=f"notes-{i}.txt", content=f"notes {i}\n" * 20)
    for i in range(120):
        ws.slack.add_message("general", user=people[i % len(people)].slack_user_id, text=f"note {i}",
                             when=ws.now - timedelta(minutes=11 * i))
    ws.snapshot("seed")
    return ws


def add_calendar_sharing(ws: Workspace) -> None:
    """Calendar's newer state at scale: 20 secondary calendars in my list, each shared with 5 people."""
    people = ws.directory
    for i in range(20):
        cal = ws.calendar.add_calendar(summary=f"Project {i}", owner=ws.me.email)
        for k in range(5):
            ws.calendar.add_acl(cal.id, role="reader" if k % 2 else "writer", value=people[(i + k) % len(people)].email)


def bench_in_process(seconds: float) -> list[tuple[str, float]]:
    ws = Workspace.seeded(0)
    mid = ws.gmail.mailbox()[0].id
    fid = next(iter(ws.docs.db.documents))
    other = ws.directory[3]
    mix = [
        ("gmail_messages_list", {"q": "is:unread", "maxResults": 10}),
        ("gmail_messages_get", {"id": mid}),
        ("gmail_messages_modify", {"id": mid, "body": {"addLabelIds": ["STARRED"]}}),
        ("calendar_events_list", {"timeMin": "2026-03-11T00:00:00Z", "timeMax": "2026-03-12T00:00:00Z",
                                  "singleEvents": True, "orderBy": "startTime"}),
        ("drive_files_get", {"fileId": fid, "fields": "id,name,owners"}),
        ("docs_documents_get", {"documentId": fid}),
        ("slack_conversations_history", {"channel": "general", "limit": 10}),
        ("slack_users_lookupByEmail", {"email": other.email}),
        ("admin_users_get", {"userKey": other.email}),
        ("admin_tokens_list", {"userKey": other.email}),
    ]
    out = []
    total_n, total_t = 0, 0.0
    for name, args in mix:
        assert call_tool(ws, name, args)["ok"], name
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds / len(mix):
            for _ in range(50):
                call_tool(ws, name, args)
            n += 50
        dt = time.perf_counter() - t0
        out.append((f"  {name}", n / dt))
        total_n, total_t = total_n + n, total_t + dt
    out.insert(0, ("in-process tool calls/s (mix of 10 calls, seeded workspace)", total_n / total_t))
    return out


def bench_snapshot() -> list[tuple[str, float]]:
    ws = big_workspace()
    snaps, restores = [], []
    for i in range(200):
        call_tool(ws, "slack_chat_postMessage", {"channel": "general", "text": f"m{i}"})
        t0 = time.perf_counter()
        ws.snapshot("b")
        t1 = time.perf_counter()
        ws.restore("b")
        t2 = time.perf_counter()
        snaps.append(t1 - t0)
        restores.append(t2 - t1)
    h0 = ws.state_hash()
    ws.snapshot("b")
    for i in range(20):
        call_tool(ws, "gmail_messages_send", {"to": "x@example.com", "subject": str(i), "body_text": "b"})
    ws.restore("b")
    assert ws.state_hash() == h0
    t0 = time.perf_counter()
    fresh = Workspace(seed=99)
    from env0_posttrain.workspace.seeding import populate
    populate(fresh)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    Workspace.seeded(0)
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    big_workspace().state_hash()
    hash_cold = time.perf_counter() - t0
    return [
        ("snapshot, 1000 msgs/200 events/300 files (median ms)", statistics.median(snaps) * 1e3),
        ("restore, same workspace (median ms)", statistics.median(restores) * 1e3),
        ("snapshot + restore (median ms)", statistics.median(a + b for a, b in zip(snaps, restores)) * 1e3),
        ("state_hash of that workspace, first time (ms)", hash_cold * 1e3),
        ("Workspace.seeded(seed), first build of a seed (ms)", cold * 1e3),
        ("Workspace.seeded(seed), again (ms)", warm * 1e3),
    ]


def serve_forever(port: int) -> None:
    import uvicorn

    from env0_posttrain.workspace.http_app import create_app

    app = create_app(big_workspace)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


def bench_http(seconds: float, clients: int) -> list[tuple[str, float]]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    try:
        deadline = time.time() + 60
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/_admin/health")
                if c.getresponse().status == 200:
                    break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        rows = []
        for label, path in [
            ("HTTP GET gmail messages.list, 100 messages (req/s)", "/gmail/v1/users/me/messages?maxResults=100"),
            ("HTTP GET slack conversations.history, 100 messages (req/s)", "/api/conversations.history?channel=general&limit=100"),
            ("HTTP GET drive files.list, 100 files (req/s)", "/drive/v3/files?pageSize=100"),
        ]:
            cpu0 = _cpu_seconds(proc.pid)
            rate, n = _load(port, path, seconds, clients)
            cpu = (_cpu_seconds(proc.pid) - cpu0) / n
            rows.append((label, rate))
            rows.append(("  server CPU per request (µs; 1e6/x = one-core capacity)", cpu * 1e6))
        return rows
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _cpu_seconds(pid: int) -> float:
    """user + system CPU time of a process, from /proc (independent of what else loads the machine)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _load(port: int, path: str, seconds: float, clients: int) -> tuple[float, int]:
    counts = [0] * clients
    check = http.client.HTTPConnection("127.0.0.1", port)
    check.request("GET", path)
    resp = check.getresponse()
    body = json.loads(resp.read())
    assert resp.status == 200 and (len(body.get("messages", body.get("files", []))) == 100), body
    stop = time.perf_counter() + seconds

    def worker(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        while time.perf_counter() < stop:
            conn.request("GET", path)
            r = conn.getresponse()
            r.read()
            assert r.status == 200
            counts[i] += 1

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - t0), sum(counts)


def tool_sizes() -> list[tuple[str, float]]:
    rows = []
    for svc in SERVICE_NAMES:
        names = service_tools(svc)
        rows.append((f"openai_tools chars, {svc} ({len(names)} tools)", len(json.dumps(openai_tools(names)))))
    rows.append(("openai_tools chars, all", len(json.dumps(openai_tools()))))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.serve:
        serve_forever(a.serve)
        return
    goals = {"in-process tool calls/s": "≥ 10,000", "HTTP GET gmail": "≥ 1,000", "snapshot + restore": "≤ 5"}
    rows = bench_in_process(a.seconds) + bench_snapshot() + bench_http(a.seconds, a.clients) + tool_sizes()
    width = max(len(r[0]) for r in rows)
    print(f"| {'measure'.ljust(width)} | {'value':>10} | goal     |")
    print(f"|{'-' * (width + 2)}|{'-' * 12}|----------|")
    for label, value in rows:
        goal = next((g for k, g in goals.items() if label.startswith(k)), "")
        v = f"{value:,.0f}" if value >= 100 else f"{value:.2f}"
        print(f"| {label.ljust(width)} | {v:>10} | {goal:<8} |")
    print(f"\nmachine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
