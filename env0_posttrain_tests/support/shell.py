"""The package sandbox in its unconfined mode (sandbox/box.py, ENV0_SANDBOX=unconfined: commands on this
machine, the services on free loopback ports) as a stand-in for tests of the shell surface's logic (tools, oracle,
rows), so they run where namespaces do not. The shell surface itself refuses that mode; the confinement tests
(agent/shell/test_confinement.py) use the real sandbox."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from env0_posttrain.agent.shell import session as shell_session
from env0_posttrain.agent.shell.sandbox import package_parts
from env0_posttrain.sandbox.box import Sandbox, SandboxResult
from env0_posttrain.tasks.env0.serve.listeners import env0_sandbox

Result = SandboxResult


class Recording:
    """The unconfined sandbox, recording each command."""

    def __init__(self, sb: Sandbox):
        self.sb, self.commands = sb, []

    def run(self, argv: list[str], *, timeout: float, output_cap: int, env: dict | None = None, cwd: str = "/"):
        self.commands.append(argv)
        return self.sb.run(argv, timeout=timeout, output_cap=output_cap, env=env, cwd="/tmp")


RUNNERS: list[Recording] = []


@contextmanager
def host_sandbox(task: Any, ws: Any, limits: Any, paths: Any) -> Iterator[Recording]:
    package_dir, manifest, extras = package_parts(task, paths)
    with env0_sandbox(ws, package_dir=package_dir, manifest=manifest, extras=extras, mode="unconfined") as sb:
        runner = Recording(sb)
        RUNNERS.append(runner)
        yield runner


@contextmanager
def use_host_sandbox() -> Iterator[list[Recording]]:
    saved = shell_session.FACTORY[0]
    shell_session.FACTORY[0] = host_sandbox
    RUNNERS.clear()
    try:
        yield RUNNERS
    finally:
        shell_session.FACTORY[0] = saved
