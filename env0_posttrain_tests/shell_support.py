"""A stand-in for the package sandbox in tests of the shell surface's logic (tools, oracle, rows): commands run
on this machine, unconfined, against the task's surface on a free loopback port. Never used outside tests;
the confinement tests use the real sandbox."""

from __future__ import annotations

import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel

from env0_posttrain.agent import shell_session
from env0_posttrain.agent.shell_sandbox import package_parts
from env0_posttrain.tasks.env0.server import Env0Surface
from env0_posttrain.tasks.env0.runner import _gws_bin
from env0_posttrain.tasks.env0.seeding import write_manifest
from env0_posttrain.workspace.local_server import free_port, uvicorn_in_thread


class Result(BaseModel):
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False


class HostRunner:
    def __init__(self, env: dict[str, str], cwd: str):
        self.env, self.cwd, self.commands = env, cwd, []

    def run(self, argv: list[str], *, timeout: float, output_cap: int, env: dict | None = None, cwd: str = "/") -> Result:
        self.commands.append(argv)
        try:
            p = subprocess.run(argv, env={**self.env, **(env or {})}, cwd=self.cwd, capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return Result(returncode=-9, stdout="", stderr="", timed_out=True)
        cut = len(p.stdout) + len(p.stderr) > output_cap
        return Result(returncode=p.returncode, stdout=p.stdout[:output_cap], stderr=p.stderr[:output_cap], truncated=cut)


RUNNERS: list[HostRunner] = []


@contextmanager
def host_sandbox(task: Any, ws: Any, limits: Any) -> Iterator[HostRunner]:
    _, manifest, extras = package_parts(task)
    with _served(Env0Surface(ws, extras)) as port:
        with _host(manifest, f"http://127.0.0.1:{port}") as runner:
            yield runner


@contextmanager
def _served(surface: Any) -> Iterator[int]:
    for attempt in range(5):  # another test may take the free port between the probe and the bind
        port = free_port()
        try:
            server = uvicorn_in_thread(surface, port, "test surface", lifespan="off")
            server.__enter__()
        except RuntimeError:
            if attempt == 4:
                raise
            continue
        try:
            yield port
        finally:
            server.__exit__(None, None, None)
        return


@contextmanager
def _host(manifest: Any, base: str) -> Iterator[HostRunner]:
    import os

    urls = {"GMAIL_URL": f"{base}/gmail", "MOCK_GMAIL_URL": f"{base}/gmail", "SLACK_URL": f"{base}/slack",
            "MOCK_SLACK_URL": f"{base}/slack", "CALENDAR_URL": f"{base}/gcal", "MOCK_GCAL_URL": f"{base}/gcal",
            "DRIVE_URL": f"{base}/gdrive", "MOCK_GDRIVE_URL": f"{base}/gdrive", "DOCS_URL": f"{base}/gdoc",
            "MOCK_GDOC_URL": f"{base}/gdoc", "WORKSPACE_URL": base}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**urls, "PATH": f"{_gws_bin(Path(tmp))}:{os.environ['PATH']}", "HOME": tmp}
        if manifest is not None:
            write_manifest(Path(tmp) / "manifest.json", manifest)
            env["NEEDLE_MANIFEST"] = str(Path(tmp) / "manifest.json")
        runner = HostRunner(env, tmp)
        RUNNERS.append(runner)
        yield runner


@contextmanager
def use_host_sandbox() -> Iterator[list[HostRunner]]:
    saved = shell_session.FACTORY[0]
    shell_session.FACTORY[0] = host_sandbox
    RUNNERS.clear()
    try:
        yield RUNNERS
    finally:
        shell_session.FACTORY[0] = saved
