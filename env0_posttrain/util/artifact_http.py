"""A run's files over HTTP: the URLs asset metadata links to, and the read-only server `env0-posttrain ui` starts.

Browsers refuse file:// links from an http:// page (Chromium: "Not allowed to load local resource"), so every
report, explorer, plot and TensorBoard folder a materialization records is linked as
`<ENV0_ARTIFACTS_URL>/<folder under the data dir>`, and `ui` serves those folders beside the Dagster UI. Only the
folders in SERVED are served, read-only (GET and HEAD), and nothing outside them: starlette's StaticFiles
resolves every path (`..`, encoded or not, and symlinks) and refuses one that leaves its folder; a folder without an
index.html is listed, so TensorBoard's event files can be fetched one click from the metadata.
"""

from __future__ import annotations

import html
import os
import stat
from pathlib import Path
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

ARTIFACTS_URL_ENV = "ENV0_ARTIFACTS_URL"
ARTIFACTS_PORT = 3001  # beside the Dagster UI's 3000
DEFAULT_ARTIFACTS_URL = f"http://127.0.0.1:{ARTIFACTS_PORT}"
SERVED = ("artifacts", "models", "runs")  # reports, plots, adapters and curves; built students; the specs


def artifacts_base() -> str:
    """Where the artifact server answers (set by `ui` for its Dagster processes; the default `ui` otherwise)."""
    return (os.environ.get(ARTIFACTS_URL_ENV) or DEFAULT_ARTIFACTS_URL).rstrip("/")


def artifact_url(path: str | Path, root: Path, base: str | None = None) -> str | None:
    """The URL of `path` (absolute, or relative to the data root) on the artifact server; None when it lies outside
    the served folders (a hub id, a file elsewhere), which then stays a plain path."""
    p = Path(os.path.abspath(Path(root) / path))
    root = Path(os.path.abspath(root))
    if not p.is_relative_to(root):
        return None
    rel = p.relative_to(root)
    if not rel.parts or rel.parts[0] not in SERVED:
        return None
    tail = "/" if p.is_dir() else ""
    return f"{base or artifacts_base()}/{quote(rel.as_posix())}{tail}"


def _listing(title: str, entries: list[tuple[str, bool, int]], up: bool = True) -> str:
    rows = '<li><a href="../">../</a></li>' if up else ""
    rows += "".join(f'<li><a href="{quote(name)}{"/" if is_dir else ""}">{html.escape(name)}{"/" if is_dir else ""}</a>'
                   f"{'' if is_dir else f' ({size:,} bytes)'}</li>" for name, is_dir, size in entries)
    return (f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<h1>{html.escape(title)}</h1><ul>{rows}</ul>")


# Text the browser should show, not download. YAML, Markdown and JSON Lines go as text/plain (browsers render
# text/yaml and text/markdown as downloads), JSON as itself; all as UTF-8. Shown as text, never as a page.
TEXT_TYPES = {".yaml": "text/plain", ".yml": "text/plain", ".md": "text/plain", ".jsonl": "text/plain",
              ".txt": "text/plain", ".log": "text/plain", ".csv": "text/plain", ".json": "application/json"}


def text_media_type(path: str) -> str | None:
    media = TEXT_TYPES.get(os.path.splitext(path)[1].lower())
    return f"{media}; charset=utf-8" if media else None


def artifact_app(root: Path) -> Any:
    """The ASGI app: each folder of SERVED under `root` at /<folder>/, an index of them at /."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import HTMLResponse, RedirectResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    class ListedFiles(StaticFiles):
        """StaticFiles (html mode) that lists a folder without an index.html, entries that stay inside only."""

        async def check_config(self) -> None:
            if self.directory is not None and os.path.isdir(self.directory):  # a folder not made yet: 404s
                await super().check_config()

        def file_response(self, full_path, stat_result, scope, status_code=200) -> Any:
            response = super().file_response(full_path, stat_result, scope, status_code)
            if media := text_media_type(str(full_path)):  # else the host's mimetypes table (often octet-stream)
                response.headers["content-type"] = media
                response.headers["x-content-type-options"] = "nosniff"
            return response

        async def get_response(self, path: str, scope) -> Any:
            try:
                return await super().get_response(path, scope)
            except HTTPException as err:
                if err.status_code != 404:
                    raise
                try:
                    full, st = self.lookup_path(path)  # the containment check of StaticFiles itself
                except (OSError, ValueError):
                    raise err from None
                if st is None or not stat.S_ISDIR(st.st_mode):
                    raise
                if not scope["path"].endswith("/"):
                    return RedirectResponse(scope["path"] + "/")
                entries = []
                for entry in sorted(os.scandir(full), key=lambda e: e.name):
                    inner, est = self.lookup_path(os.path.join(path, entry.name))
                    if est is not None:  # a link that leaves the folder is not shown (and not served)
                        entries.append((entry.name, stat.S_ISDIR(est.st_mode), est.st_size))
                return HTMLResponse(_listing(scope["path"], entries))

    async def index(request) -> Any:
        return HTMLResponse(_listing("env0-posttrain artifacts", [(n, True, 0) for n in SERVED], up=False))

    root = Path(root)
    routes = [Route("/", index), *(Mount(f"/{name}", app=ListedFiles(directory=root / name, html=True, check_dir=False))
                                   for name in SERVED)]
    return Starlette(routes=routes)


def start_server(root: Path, host: str, port: int) -> Callable[[], None]:
    """Serve `artifact_app(root)` on host:port in a thread of this process; returns the function that stops it.
    The socket listens before this returns, so a port in use fails at once (OSError) instead of inside the thread,
    and a request sent right away waits for the server instead of being refused."""
    import socket
    import threading

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections queue from now on, before the thread serves them
    except OSError:
        sock.close()
        raise
    server = uvicorn.Server(uvicorn.Config(artifact_app(root), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="env0-artifacts")
    thread.start()

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

    return stop
