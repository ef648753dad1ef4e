"""What google-api-python-client reaches on the workspace server: per Google API, every method of its discovery
document called through the official client, built the way docs/SERVE.md shows (from the discovery document the
server serves, so rootUrl, batchPath and the upload paths are the server's).

    .venv/bin/python bench/client_reach.py

Each method is called once with placeholder values for its required parameters (and `body={}` where it takes
one), in process (the client's HTTP object hands each request to the app), on a seeded workspace. A method is
*reached* when the request ran that method's own handler: the action log gained an entry for the tool whose method
id is the discovery method's (a 404 for a placeholder id counts: the handler answered it). A method the server
does not implement gets Google's "Method not found" and nothing is logged. Media: every method with `mediaUpload`
is called with a small binary body twice, multipart and resumable (three chunks); every method with
`supportsMediaDownload` through its `_media` variant. Batch: one `new_batch_http_request` per API with one reached
call, sent to the document's batchPath.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from pathlib import Path
from typing import Any

import httplib2
from googleapiclient.discovery import build, fix_method_name, key2param
from googleapiclient.errors import HttpError
from googleapiclient.http import MediaIoBaseUpload
from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env0_posttrain.util.markdown_table import md_table  # noqa: E402
from env0_posttrain.workspace import discovery  # noqa: E402
from env0_posttrain.workspace.environment import Workspace  # noqa: E402
from env0_posttrain.workspace.http_app import create_app  # noqa: E402
from env0_posttrain.workspace.tools import TOOLS  # noqa: E402

APIS = [("gmail", "v1"), ("calendar", "v3"), ("drive", "v3"), ("docs", "v1"), ("admin", "directory_v1")]
BASE = "http://workspace.test"
MEDIA = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 4


class AppHttp:
    """An httplib2.Http stand-in that answers from the app in process (no socket); 308 is not followed."""

    def __init__(self, client: TestClient):
        self.client = client

    def request(self, uri: str, method: str = "GET", body: Any = None, headers: dict | None = None,
                redirections: int = 0, connection_type: Any = None) -> tuple[httplib2.Response, bytes]:
        if hasattr(body, "read"):  # a resumable chunk comes as a stream slice
            body = body.read()
        r = self.client.request(method, uri, content=body, headers=headers or {})
        info = {k.lower(): v for k, v in r.headers.items()}
        info["status"] = str(r.status_code)
        return httplib2.Response(info), r.content


def _methods(resources: dict, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str, dict]]:
    out = []
    for rname, r in sorted(resources.items()):
        for mname, m in sorted(r.get("methods", {}).items()):
            out.append(((*path, rname), mname, m))
        out += _methods(r.get("resources", {}), (*path, rname))
    return out


def _value(param: dict) -> Any:
    if "enum" in param:
        return param["enum"][-1] if len(param["enum"]) > 1 else param["enum"][0]
    if param.get("type") == "integer":
        return 1
    if param.get("type") == "boolean":
        return True
    if "pattern" in param:
        return re.sub(r"\[\^/\]\+|\.\*", "x", param["pattern"]).strip("^$")
    return "x"


def _callable(service: Any, path: tuple[str, ...], name: str) -> Any:
    obj = service
    for r in path:
        obj = getattr(obj, fix_method_name(r))()
    return getattr(obj, fix_method_name(name))


def _reached(ws_of: Any, method_id: str, run: Any) -> bool:
    ws = ws_of()
    mark = len(ws.action_log)
    try:
        run()
    except HttpError:
        pass
    return any(TOOLS[e["tool"]].method_id == method_id for e in ws.action_log[mark:] if e["tool"] in TOOLS)


def measure() -> list[dict[str, Any]]:
    app = create_app(lambda: Workspace.seeded(0))
    http = AppHttp(TestClient(app, base_url=BASE))
    ws_of = lambda: app.state.ws  # noqa: E731
    rows = []
    for api, version in APIS:
        doc = discovery.shipped(api, version)
        if doc is None:
            raise SystemExit("google-api-python-client is not installed (the test extra): no discovery documents")
        service = build(api, version, http=http, static_discovery=False, cache_discovery=False,
                        discoveryServiceUrl=f"{BASE}/discovery/v1/apis/{{api}}/{{apiVersion}}/rest")
        listed = _methods(doc["resources"])
        reached, uploads, downloads, a_call = 0, [0, 0, 0], [0, 0], None
        for path, name, m in listed:
            kwargs = {key2param(k): _value(p) for k, p in m.get("parameters", {}).items() if p.get("required")}
            if "request" in m:
                kwargs["body"] = {}
            fn = _callable(service, path, name)
            if _reached(ws_of, m["id"], lambda: fn(**kwargs).execute()):
                reached += 1
                if a_call is None and m["httpMethod"] == "GET":
                    a_call = (m["id"], fn, kwargs)
            if "mediaUpload" in m:
                uploads[2] += 1
                for i, resumable in enumerate((False, True)):
                    media = MediaIoBaseUpload(io.BytesIO(MEDIA), mimetype="application/pdf", chunksize=400,
                                              resumable=resumable)
                    uploads[i] += _reached(ws_of, m["id"], lambda: fn(**kwargs, media_body=media).execute())
            if m.get("supportsMediaDownload"):
                downloads[1] += 1
                media_fn = _callable(service, path, fix_method_name(name) + "_media")
                downloads[0] += _reached(ws_of, m["id"], lambda: media_fn(**kwargs).execute())
        batch = "-"
        if a_call is not None:
            request = service.new_batch_http_request()
            request.add(a_call[1](**a_call[2]))
            ok = _reached(ws_of, a_call[0], request.execute)
            batch = f"/{doc.get('batchPath', 'batch')}: {'reached' if ok else 'not reached'}"
        rows.append({"service": f"{api} {version}", "listed": len(listed), "reached": reached,
                     "uploads": f"{uploads[0]} / {uploads[1]} of {uploads[2]}" if uploads[2] else "-",
                     "downloads": f"{downloads[0]} of {downloads[1]}" if downloads[1] else "-", "batch": batch})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    total = [sum(r["listed"] for r in rows), sum(r["reached"] for r in rows)]
    body = [[r["service"], r["listed"], r["reached"], f"{100 * r['reached'] / r['listed']:.0f} %", r["uploads"],
             r["downloads"], r["batch"]] for r in rows]
    body.append(["all", total[0], total[1], f"{100 * total[1] / total[0]:.0f} %", "", "", ""])
    return md_table(["API", "methods listed", "reached", "share", "media uploads (multipart / resumable)",
                     "media downloads", "batch"], body, "lrrrlll")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.parse_args()
    print(table(measure()))


if __name__ == "__main__":
    main()
