"""HTTP routing cost: requests/s through the workspace ASGI app in process, no sockets.

    OMP_NUM_THREADS=1 .venv/bin/python bench/http_routing_bench.py [--seconds 2] [--repeat 3]

Two drivers per request: raw ASGI calls (the app's own cost: routing, handler, JSON) and httpx's
ASGITransport (what a Python client in the same process pays on top). Rows: a list call and a get call at
the front of the route table (Gmail), a get call near its end (Admin Directory), Slack methods early and late
in their table, an unknown path (the 404 walks every route). Rates are per CPU second of this process
(`time.process_time`, so other load on the machine disturbs them less than wall time would); best of
`--repeat` runs; a quiet moment still helps.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from env0_posttrain.workspace import Workspace  # noqa: E402
from env0_posttrain.workspace.http_app import create_app  # noqa: E402


def requests(ws: Workspace) -> list[tuple[str, str, int]]:
    mid = ws.gmail.mailbox()[0].id
    other = ws.directory[3].email
    return [
        ("GET gmail messages.list maxResults=10", "/gmail/v1/users/me/messages?maxResults=10", 200),
        ("GET gmail messages.get", f"/gmail/v1/users/me/messages/{mid}?format=metadata", 200),
        ("GET admin users.get (late in the table)", f"/admin/directory/v1/users/{other}", 200),
        ("GET slack conversations.history limit=10", "/api/conversations.history?channel=general&limit=10", 200),
        ("GET slack users.info (late among Slack's)", f"/api/users.info?user={ws.directory[3].slack_user_id}", 200),
        ("GET unknown path (404)", "/no/such/api", 404),
    ]


async def raw_asgi(app, target: str, seconds: float) -> tuple[float, int]:
    path, _, query = target.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "root_path": "", "query_string": query.encode(),
             "headers": [(b"host", b"bench")], "client": ("127.0.0.1", 1), "server": ("bench", 80)}
    status = 0

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    n, t0 = 0, time.process_time()
    while time.process_time() - t0 < seconds:
        for _ in range(20):
            await app(dict(scope), receive, send)
        n += 20
    return n / (time.process_time() - t0), status


async def via_httpx(app, target: str, seconds: float) -> tuple[float, int]:
    import httpx

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:
        status = (await client.get(target)).status_code
        n, t0 = 0, time.process_time()
        while time.process_time() - t0 < seconds:
            for _ in range(20):
                await client.get(target)
            n += 20
        return n / (time.process_time() - t0), status


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    app = create_app(lambda: Workspace.seeded(0))
    rows = []
    for label, target, want in requests(app.state.ws):
        best = []
        for driver in (raw_asgi, via_httpx):
            runs = [asyncio.run(driver(app, target, a.seconds)) for _ in range(a.repeat)]
            assert all(s == want for _, s in runs), (label, runs)
            best.append(max(r for r, _ in runs))
        rows.append((label, *best))
    width = max(len(r[0]) for r in rows)
    print(f"| {'request'.ljust(width)} | raw ASGI req/CPU-s | CPU µs/req | httpx ASGITransport req/CPU-s |")
    print(f"|{'-' * (width + 2)}|------------------:|-----------:|-----------------------------:|")
    for label, raw, hx in rows:
        print(f"| {label.ljust(width)} | {raw:>17,.0f} | {1e6 / raw:>10,.0f} | {hx:>28,.0f} |")
    print(f"\nmachine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the end;"
          f" OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")


if __name__ == "__main__":
    main()
