"""`env0-posttrain doctor`: what this machine can run and what is missing, each with the command that fixes it.

A newcomer's first failure should not be a refusal deep inside a run: env0 packages and the shell surface need
bubblewrap, util-linux's unshare, user namespaces and libseccomp; a GPU run needs CUDA and its kernels; a hosted
teacher needs its key variable; the browser tests need Debian's Chromium; the tiny student loads the shipped base, whose files must match their
manifest; every run needs disk and a Dagster home.
Each check reads the machine through `Machine` (PATH, environment, /proc), so tests run it on a made-up one. What a
given spec needs and lacks makes the exit code non-zero; the rest is shown but does not fail.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from env0_posttrain.sandbox.box import APT_INSTALL
from env0_posttrain.sandbox.needs import spec_needs_sandbox
from env0_posttrain.util.paths import Paths

Status = Literal["ok", "missing", "absent", "info"]  # absent: missing, but the spec (or the demo) does not need it
GPU_KERNELS = "pip install -c constraints.txt -e '.[gpu]'"
MIN_FREE_GIB = 2.0  # a demo's data dir: under 1 GiB (models, checkpoints, the store); room for a second run


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""
    needed: bool = False  # the spec asked about (or the demo) needs it


@dataclass
class Machine:
    """What the checks read; defaults are this machine's."""

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    proc: Path = Path("/proc")
    dev: Path = Path("/dev")
    euid: int = field(default_factory=os.geteuid)
    seccomp_problem: Callable[[], str | None] | None = None  # None: the sandbox's own check (compiles the filter)
    containment_problem: Callable[[], str | None] | None = None  # None: the sandbox's own probe (runs a container)
    has_module: Callable[[str], bool] = lambda name: importlib.util.find_spec(name) is not None
    cuda_available: Callable[[], bool] | None = None  # None: torch.cuda.is_available()
    disk_free: Callable[[Path], int] = lambda p: shutil.disk_usage(p).free
    shipped_root: Path | None = None  # None: the package's shipped tiny students

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=self.env.get("PATH", ""))

    def read(self, rel: str) -> str | None:
        try:
            return (self.proc / rel).read_text().strip()
        except OSError:
            return None


@dataclass(frozen=True)
class Needs:
    """What a spec needs of the machine (the demo: none of the optional parts)."""

    sandbox: bool = False  # env0 packages or the shell surface
    cuda: bool = False
    teacher: tuple[str, str | None, str | None] | None = None  # (model, api_base, api_key_env) of a hosted teacher
    tiny: bool = True  # the tiny student (the shipped base is loaded when its recipe matches)
    label: str = "the demo"

    @classmethod
    def of(cls, spec, label: str) -> "Needs":
        t = spec.teacher
        return cls(sandbox=spec_needs_sandbox(spec), cuda=spec.student.device == "cuda",
                   teacher=(t.model, t.api_base, t.api_key_env), tiny=spec.student.model.startswith("tiny-"),
                   label=label)


def _sandbox_checks(m: Machine, needs: Needs, probe: bool) -> list[Check]:
    why = "env0 packages and the shell surface run their commands in it"
    out: list[Check] = []
    bwrap, unshare = m.which("bwrap"), m.which("unshare")
    out.append(Check("bubblewrap", "ok" if bwrap else "missing", bwrap or f"`bwrap` not on PATH: {why}",
                     "" if bwrap else APT_INSTALL, needs.sandbox))
    out.append(Check("unshare", "ok" if unshare else "missing", unshare or "util-linux `unshare` not on PATH: the "
                     "sandbox's keeper starts in its namespaces", "" if unshare else "apt-get install -y util-linux",
                     needs.sandbox))
    problems: list[tuple[str, str]] = []
    if m.read("sys/user/max_user_namespaces") == "0":
        problems.append(("user.max_user_namespaces is 0", "sysctl -w user.max_user_namespaces=15000"))
    if m.euid != 0 and m.read("sys/kernel/unprivileged_userns_clone") == "0":
        problems.append(("kernel.unprivileged_userns_clone is 0", "sysctl -w kernel.unprivileged_userns_clone=1"))
    if m.euid != 0 and m.read("sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        problems.append(("AppArmor restricts unprivileged user namespaces",
                         "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"))
    out.append(Check("user namespaces", "missing" if problems else "ok",
                     "; ".join(p for p, _ in problems) or "allowed", " && ".join(f for _, f in problems), needs.sandbox))
    if m.seccomp_problem is None:
        from env0_posttrain.sandbox.seccomp import seccomp_problem

        m.seccomp_problem = seccomp_problem
    seccomp = m.seccomp_problem()
    out.append(Check("seccomp", "missing" if seccomp else "ok", seccomp or "the sandbox's filter compiles (libseccomp)",
                     "apt-get install -y libseccomp2" if seccomp else "", needs.sandbox))
    if probe and not any(c.status == "missing" for c in out):
        if m.containment_problem is None:
            from env0_posttrain.sandbox.root import containment_problem

            m.containment_problem = containment_problem
        problem = m.containment_problem()
        out.append(Check("sandbox", "missing" if problem else "ok", problem or "a confined container runs here",
                         "see docs/ENV0-PACKAGES.md (or ENV0_SANDBOX=unconfined for env0 packages only)" if problem
                         else "", needs.sandbox))
    return out


def _cuda_check(m: Machine, needs: Needs) -> list[Check]:
    gpu = m.which("nvidia-smi") is not None or (m.dev / "nvidia0").exists()
    if not gpu:
        return [Check("CUDA", "missing" if needs.cuda else "absent", "no NVIDIA GPU: the tiny student and LoRA train on CPU",
                      "a machine with an NVIDIA GPU and its driver" if needs.cuda else "", needs.cuda)]
    if m.cuda_available is None:
        import torch

        m.cuda_available = torch.cuda.is_available
    if not m.cuda_available():
        return [Check("CUDA", "missing", "an NVIDIA GPU is here but this torch build cannot use it",
                      "pip install torch==2.13.0 (the CUDA build, from PyPI)", needs.cuda)]
    lacking = [name for module, name in (("flash_attn", "flash-attn"), ("liger_kernel", "liger-kernel"),
                                         ("fla", "flash-linear-attention")) if not m.has_module(module)]
    return [Check("CUDA", "ok", "torch sees the GPU", "", needs.cuda),
            Check("training kernels", "missing" if lacking else "ok",
                  f"not installed: {', '.join(lacking)} (docs/GPU.md)" if lacking else "flash-attn, liger, fla",
                  GPU_KERNELS if lacking else "", needs.cuda)]


def _teacher_check(m: Machine, needs: Needs) -> list[Check]:
    if needs.teacher is None:
        return []
    model, api_base, key_env = needs.teacher
    from env0_posttrain.agent.llm import ENV0_PROVIDERS, provider_of

    if provider_of(model) in ENV0_PROVIDERS:
        return [Check("teacher key", "ok", f"{model}: offline, no key", "", True)]
    if key_env:
        ok = bool(m.env.get(key_env))
        return [Check("teacher key", "ok" if ok else "missing", f"{model}: ${key_env} {'is set' if ok else 'is not set'}",
                      "" if ok else f"export {key_env}=...", True)]
    from env0_posttrain.agent.model_check import check_model

    issues = check_model(model, api_base, None)  # litellm's default key variables, read from this process's environment
    if not issues:
        return [Check("teacher key", "ok", f"{model}: litellm's default key variable is set", "", True)]
    fix = next(("name the key's variable in teacher.api_key_env and export it" for i in issues
                if i.field == "api_key_env"), "")
    return [Check("teacher key", "missing", f"{model}: " + "; ".join(i.message for i in issues), fix, True)]


def _shipped_check(m: Machine, needs: Needs) -> Check:
    from env0_posttrain.train.tiny_student import shipped

    root = shipped.SHIPPED_ROOT if m.shipped_root is None else m.shipped_root
    fix = "git checkout -- env0_posttrain/train/tiny_student/shipped (or: env0-posttrain base rebuild --write)"
    try:
        entries = shipped.read_manifest(root).students
        for entry in entries:
            shipped.verify(entry, root)
    except shipped.ShippedError as err:
        return Check("shipped base", "missing", str(err).split("; refusing")[0], fix, needs.tiny)
    names = ", ".join(e.name for e in entries) or "none"
    return Check("shipped base", "ok", f"files match the manifest: {names}", "", needs.tiny)


def _chromium_check(m: Machine) -> Check:
    lacking = [name for name in ("chromium", "chromedriver") if m.which(name) is None]
    return Check("Chromium", "absent" if lacking else "ok",
                 f"the browser tests skip: {' and '.join(lacking)} not on PATH" if lacking
                 else "the browser tests run (Selenium + Debian Chromium)",
                 "apt-get install -y chromium chromium-driver" if lacking else "")


def _disk_checks(m: Machine, data_root: Path) -> list[Check]:
    existing = next((p for p in (data_root, *data_root.parents) if p.exists()), Path("/"))
    free = m.disk_free(existing) / 2**30
    disk = Check("free disk", "ok" if free >= MIN_FREE_GIB else "missing",
                 f"{free:.1f} GiB free under {existing} (a demo needs under 1 GiB)",
                 "" if free >= MIN_FREE_GIB else f"free space there, or point ENV0_DATA_DIR at a disk with "
                 f"{MIN_FREE_GIB:.0f} GiB", True)
    home = Paths(data_root).dagster_home
    writable = os.access(existing, os.W_OK)
    dagster = Check("Dagster home", "ok" if writable else "missing",
                    f"{home} ({'exists' if home.exists() else 'made by the first run'}; the CLI sets DAGSTER_HOME "
                    f"to it{', overriding $DAGSTER_HOME' if m.env.get('DAGSTER_HOME') else ''})"
                    if writable else f"{existing} is not writable: the store and Dagster's home go under it",
                    "" if writable else "export ENV0_DATA_DIR=<a writable folder>", True)
    return [disk, dagster]


def diagnose(machine: Machine, needs: Needs, data_root: Path, probe: bool = True) -> list[Check]:
    return [*_sandbox_checks(machine, needs, probe), *_cuda_check(machine, needs), *_teacher_check(machine, needs),
            _shipped_check(machine, needs), _chromium_check(machine), *_disk_checks(machine, data_root)]


def failing(checks: list[Check]) -> list[Check]:
    return [c for c in checks if c.needed and c.status == "missing"]
