"""Which fields of a run spec put commands in the sandbox, and the one-line refusal for a machine that lacks its tools.

Said when a spec is written or a run starts (making/new_run.spec_problems), before any stage: a fresh machine without
bubblewrap learns the apt command there, not from the first package's verifier error minutes into a run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from typing import Any

from .box import APT_INSTALL, MODE_ENV

SHELL_SURFACES = ("shell", "both")


def shell_fields(spec: Any) -> list[str]:
    return [f"{name}.surface" for name, section in (("teacher", spec.teacher), ("eval", spec.eval))
            if section.surface in SHELL_SURFACES]


def package_fields(spec: Any) -> list[str]:
    named = [("tasks.source", spec.tasks.source)] + [(f"suites.{s.name}.source", s.source) for s in spec.suites]
    return [field for field, source in named if source is not None]


def spec_needs_sandbox(spec: Any) -> bool:
    return bool(shell_fields(spec) or package_fields(spec))


def sandbox_refusals(spec: Any, which: Callable[[str], str | None] = shutil.which,
                     env: Mapping[str, str] | None = None) -> list[str]:
    """One line per field of `spec` that needs the confined sandbox where bubblewrap or unshare is not on PATH (a
    cheap check: `env0-posttrain doctor` runs the full one), naming the apt command."""
    env = os.environ if env is None else env
    lacking = [name for name in ("bwrap", "unshare") if which(name) is None]
    if not lacking:
        return []
    what = f"{' and '.join(lacking)} not installed here: `{APT_INSTALL}` (`env0-posttrain doctor` checks the rest)"
    lines = [f"{f}: the shell surface runs the agent's commands in the bubblewrap sandbox, {what}"
             for f in shell_fields(spec)]
    if env.get(MODE_ENV, "namespaces") == "namespaces":  # unconfined: the user chose the weaker mode
        lines += [f"{f}: env0 packages run their scripts in the bubblewrap sandbox, {what} (or set {MODE_ENV}="
                  "unconfined)" for f in package_fields(spec)]
    return lines
