"""The episode's sandbox: env0's container layout around the task's workspace (sandbox/box.py), with the
shell spec's limits, plus what an agent's commands need beyond a package's own scripts.

The sandbox itself confines every command (a bubblewrap container per command: allowlist root, no capabilities,
cleared environment, its own pid namespace so nothing outlives it, a seccomp filter, hard file-size limit, a
size- and file-count-limited tmpfs for its writable folders, the sandbox's pids and memory cgroups where the
machine has them); this layer passes the spec's limits in, passes $WORKSPACE_URL on (the sandbox's listener for the
workspace's whole API at its real paths, each method behind its own service's gate; the Admin SDK, which env0 has
no port for, is reached only there), and reports the forks the process limit refused. The shell surface refuses the unconfined mode
(ENV0_SANDBOX=unconfined): an agent's commands never run on the host itself.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from env0_posttrain.spec.runspec import ShellSpec
from env0_posttrain.tasks.task_paths import TaskPaths

FILE_CAP = 1 << 30  # bytes a command may write to one file (the sandbox's /tmp is on the host's disk)


def package_parts(task: Any, paths: TaskPaths) -> tuple[Path | None, dict[str, Any] | None, dict[str, Any] | None]:
    """(package folder, needle manifest, surface extras) of the task as its source lays it out (Nones: none)."""
    from env0_posttrain.tasks.sources import source_of

    return source_of(task).sandbox_parts(task, paths)


class ConfinedSandbox:
    """The sandbox's `run`, and the forks its process limit refused."""

    def __init__(self, sandbox: Any):
        self.sandbox = sandbox
        self.cgroup = getattr(sandbox, "cgroup", None)

    def run(self, argv: list[str], *, timeout: float, output_cap: int, env: dict[str, str] | None = None,
            cwd: str = "/") -> Any:
        return self.sandbox.run(argv, timeout=timeout, output_cap=output_cap, env=env, cwd=cwd)

    def pids_refused(self) -> int:
        return self.cgroup.refused() if self.cgroup is not None else 0


@contextmanager
def open_task_sandbox(task: Any, ws: Any, limits: ShellSpec, paths: TaskPaths) -> Iterator[ConfinedSandbox]:
    from env0_posttrain.sandbox.box import APT_INSTALL, SandboxLimits, containment_problem, sandbox_mode
    from env0_posttrain.tasks.env0.serve.listeners import env0_sandbox

    if sandbox_mode() != "namespaces":
        raise RuntimeError("the shell surface runs an agent's commands only inside the confined sandbox; unset "
                           "ENV0_SANDBOX=unconfined (or use the tools surface)")
    problem = containment_problem()
    if problem is not None:  # the package sandbox's own message would offer the unconfined mode, refused here
        raise RuntimeError(f"the shell surface runs an agent's commands only inside the confined sandbox, which "
                           f"cannot be made here ({problem}): install bubblewrap (`{APT_INSTALL}`) and allow user "
                           f"namespaces (`env0-posttrain doctor` says what is missing), or use the tools surface")
    package_dir, manifest, extras = package_parts(task, paths)
    box_limits = SandboxLimits(max_processes=limits.max_processes, memory_mb=limits.max_memory_mb, file_cap=FILE_CAP,
                               writable_mb=limits.max_writable_mb, writable_files=limits.max_writable_files)
    with env0_sandbox(ws, package_dir=package_dir, manifest=manifest, extras=extras, limits=box_limits) as sb:
        yield ConfinedSandbox(sb)
