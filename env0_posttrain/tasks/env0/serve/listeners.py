"""env0's services as a sandbox serves them: one listener per env0 service (services.py) at env0's own ports, and
the variables a package's scripts read to reach them (env0's URL variables, its mock Slack tokens)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ....sandbox.box import Mode, Sandbox, SandboxLimits
from ....workspace.environment import Workspace
from ..services import LISTENERS, service_urls
from .server import Env0Surface, serve_services

SLACK_TOKENS = {"SLACK_BOT_TOKEN": "mock-bot-token", "SLACK_USER_TOKEN": "mock-user-token"}


class Env0Listeners(Env0Surface):
    """The surface of one workspace (Env0Surface) with what a sandbox needs to serve it (sandbox.box.Surface)."""

    ports = tuple(s.port for s in LISTENERS)

    @contextmanager
    def serve(self, sock_dir: Path | None) -> Iterator[dict[str, str]]:
        with serve_services(self, sock_dir) as base:
            yield {**SLACK_TOKENS, **service_urls(base)}


def env0_sandbox(ws: Workspace, *, package_dir: Path | None = None, manifest: dict[str, Any] | None = None,
                 extras: dict[str, Any] | None = None, mode: Mode | None = None,
                 limits: SandboxLimits | None = None) -> Sandbox:
    """A sandbox serving `ws` on env0's surface (enter it with `with`); `extras`: what the server needs beyond rows."""
    return Sandbox(Env0Listeners(ws, extras), package_dir=package_dir, manifest=manifest, mode=mode, limits=limits)
