"""A real `dagster-webserver` for tests: on a free 127.0.0.1 port, with a scratch DAGSTER_HOME, serving the
repo's workspace (plus any extra code locations), stopped when the block ends. Shared by the UI browser
tests and the teacher backfill tests, which talk to its GraphQL API as `env0-posttrain backfill` does.
`env0_ui` starts the whole `env0-posttrain ui` instead (webserver, daemon and the artifact server), for the
journeys that launch runs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from env0_posttrain_tests.support.paths import REPO as ROOT

WAIT_S = 90


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _default_signals() -> None:
    """A server started from a script may inherit ignored SIGINT/SIGTERM (FIELD-NOTES): undo that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stop(proc: subprocess.Popen, grace_s: float = 20) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: only the server and its code servers
        proc.wait(timeout=10)


def _wait_http(url: str, proc: subprocess.Popen, log: Path, wait_s: float = WAIT_S) -> None:
    deadline = time.time() + wait_s
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"server did not answer {url} in {wait_s}s: {log.read_text()[-2000:]}")


def write_workspace(path: Path, extra_locations: list[dict] = ()) -> Path:
    """The repo's workspace.yaml plus `extra_locations` (entries of `load_from`)."""
    ws = yaml.safe_load((ROOT / "workspace.yaml").read_text())
    ws["load_from"] = [*ws["load_from"], *extra_locations]
    path.write_text(yaml.safe_dump(ws))
    return path


@contextmanager
def dagster_webserver(home: Path, *, workspace: Path | None = None, env: Mapping[str, str] = {}) -> Iterator[str]:
    """Start the webserver with DAGSTER_HOME=home (its dagster.yaml as the caller wrote it); yield its base URL
    once /server_info answers, which is after the workspace's code locations have loaded."""
    port = free_port()
    log = home / "webserver.log"
    full_env = dict(os.environ, DAGSTER_HOME=str(home), DAGSTER_DISABLE_TELEMETRY="1", **env)
    cmd = [str(Path(sys.executable).with_name("dagster-webserver")), "-w", str(workspace or ROOT / "workspace.yaml"),
           "-h", "127.0.0.1", "-p", str(port)]
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=fh, stderr=subprocess.STDOUT,
                                preexec_fn=_default_signals, start_new_session=True)
    try:
        _wait_http(f"http://127.0.0.1:{port}/server_info", proc, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(proc)


@contextmanager
def env0_ui(data: Path, *, env: Mapping[str, str] = {}, wait_s: float = 240) -> Iterator[tuple[str, str]]:
    """`env0-posttrain ui --data-dir data` on free ports, in its own session; yield (UI URL, artifact server URL)
    once both answer. Leaving the block stops it as Ctrl-C would (SIGTERM: `ui` stops dagster dev's webserver,
    daemon and code servers), its whole session killed if it has not stopped in a minute."""
    port, artifacts = free_port(), free_port()
    log = data / "ui.log"
    full_env = dict(os.environ, DAGSTER_DISABLE_TELEMETRY="1", **env)
    cmd = [str(Path(sys.executable).with_name("env0-posttrain")), "ui", "--port", str(port), "--artifacts-port",
           str(artifacts), "--data-dir", str(data)]
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=fh, stderr=subprocess.STDOUT,
                                preexec_fn=_default_signals, start_new_session=True)
    try:
        _wait_http(f"http://127.0.0.1:{port}/server_info", proc, log, wait_s)
        _wait_http(f"http://127.0.0.1:{artifacts}/", proc, log, wait_s)
        yield f"http://127.0.0.1:{port}", f"http://127.0.0.1:{artifacts}"
    finally:
        _stop(proc, grace_s=60)
