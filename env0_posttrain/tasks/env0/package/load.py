"""An env0 task package on disk: its metadata, instruction, declared services and needles module.

Errors name the file and the step (`Env0Error`), so a bad package in a corpus of thousands is found at once. The
package's tree is checked before any file is read (package/files.py): a link out of it is refused, so neither its
instruction nor its scripts can be a host file.
"""

from __future__ import annotations

import contextvars
import ctypes
import importlib.util
import re
import sys
import threading
import tomllib
from pathlib import Path
from types import ModuleType

import yaml
from pydantic import BaseModel, ConfigDict

from ....util.source_lines import toml_line, yaml_line
from ..errors import Env0Error
from .import_paths import import_folders
from .meta import MetaError, PackageMeta, parse_meta
from .files import check_package
from ..services import SERVICE_MAP, SERVICES
from ....workspace.services import registry

_COMPILING = threading.Lock()
NEEDLES_TIMEOUT_S = 60.0  # the most a needles import may take (less where task.toml's build timeout says so)


class Env0Package(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    root: Path
    name: str
    instruction: str
    services: tuple[str, ...]
    agent_timeout_s: float = 600.0
    verifier_timeout_s: float = 120.0
    needles_timeout_s: float = NEEDLES_TIMEOUT_S

    @property
    def needles_path(self) -> Path:
        return self.root / "data" / "needles.py"

    @property
    def solve_sh(self) -> Path:
        return self.root / "solution" / "solve.sh"

    @property
    def test_sh(self) -> Path:
        return self.root / "tests" / "test.sh"

    def load_needles(self) -> ModuleType:
        return load_needles(self.needles_path, self.needles_timeout_s)


def _text(path: Path, step: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:  # a binary or mis-encoded file: named, and the corpus import drops the package
        raise Env0Error(step, path, f"not UTF-8 text ({e.reason} at byte {e.start})") from None


def _read_meta(root: Path) -> tuple[PackageMeta, str | None]:
    """task.toml (env0) or task.md front matter (env-0 / BenchFlow 1.3); the latter may carry the prompt."""
    toml_path, md_path = root / "task.toml", root / "task.md"
    if toml_path.is_file():
        text = _text(toml_path, "read task.toml")
        try:
            return parse_meta(tomllib.loads(text), lambda loc: toml_line(text, loc)), None
        except tomllib.TOMLDecodeError as e:
            raise Env0Error("read task.toml", toml_path, str(e)) from None
        except MetaError as e:
            raise Env0Error("read task.toml", toml_path, str(e)) from None
    if md_path.is_file():
        text = _text(md_path, "read task.md")
        m = re.match(r"^---\n(.*?)\n---\n?(.*)$", text, re.S)
        if not m:
            raise Env0Error("read task.md", md_path, "no YAML front matter between --- lines")
        try:
            meta = parse_meta(yaml.safe_load(m.group(1)) or {}, lambda loc: yaml_line(m.group(1), loc, first_line=2))
        except yaml.YAMLError as e:
            raise Env0Error("read task.md", md_path, str(e)) from None
        except MetaError as e:
            raise Env0Error("read task.md", md_path, str(e)) from None
        prompt = re.split(r"^## prompt\s*$", m.group(2), flags=re.M)
        return meta, (prompt[1].strip() if len(prompt) > 1 else None)
    raise Env0Error("read task.toml", toml_path, "missing (neither task.toml nor task.md)")


def _services(root: Path, meta: PackageMeta) -> list[str]:
    declared = meta.environment.services or []
    out = [SERVICE_MAP[s] for s in declared if s in SERVICE_MAP]
    unknown = [s for s in declared if s not in SERVICE_MAP]
    docker = root / "environment" / "Dockerfile"
    if docker.is_file():  # env-0 packages declare services only through their seed commands
        for m in re.finditer(r"(?:^|[\s&;])(mock-)?([a-z]+) +--db", _text(docker, "read services")):
            (out if m.group(2) in SERVICE_MAP else unknown).append(SERVICE_MAP.get(m.group(2), m.group(2)))
    if unknown:
        raise Env0Error("read services", docker if docker.is_file() else root / "task.toml",
                        f"needs services this runtime does not serve: {', '.join(sorted(set(unknown)))} "
                        f"(served: {', '.join(s.name for s in SERVICES)})")
    return list(dict.fromkeys(out))


def load_package(root: Path | str) -> Env0Package:
    root = Path(root).resolve()
    if not root.is_dir():
        raise Env0Error("read package", root, "not a directory")
    check_package(root)  # no link out of it, no fifo, no endless tree: before any of its files is read
    meta, prompt = _read_meta(root)
    instr = root / "instruction.md"
    instruction = _text(instr, "read instruction").strip() if instr.is_file() else (prompt or "")
    if not instruction:
        raise Env0Error("read instruction", instr, "missing (no instruction.md and no '## prompt' in task.md)")
    for need, step in ((root / "data" / "needles.py", "read needles"), (root / "tests" / "test.sh", "read verifier")):
        if not need.is_file():
            raise Env0Error(step, need, "missing")
    services = _services(root, meta)
    if not services:
        mod = load_needles(root / "data" / "needles.py", _needles_timeout(meta))
        # which needles attributes feed which service (its env0 face's hints), the first service's when none does
        services = [s.name for s in registry.SERVICES if s.env0 and any(getattr(mod, a, None) for a in s.env0.hints)] \
            or [next(s.name for s in registry.SERVICES if s.env0)]
    name = (meta.task.name or root.name).split("/")[-1]
    return Env0Package(root=root, name=name, instruction=instruction, services=tuple(services),
                       agent_timeout_s=meta.agent.timeout_sec or 600.0,
                       verifier_timeout_s=meta.verifier.timeout_sec or 120.0, needles_timeout_s=_needles_timeout(meta))


def _needles_timeout(meta: PackageMeta) -> float:
    return min(meta.environment.build_timeout_sec or NEEDLES_TIMEOUT_S, NEEDLES_TIMEOUT_S)


class _NeedlesTimeout(BaseException):
    """Raised inside a needles import that ran past its time (BaseException: its own `except Exception` won't eat it)."""


def load_needles(path: Path, timeout: float = NEEDLES_TIMEOUT_S) -> ModuleType:
    """Import data/needles.py as its own module (it may import siblings from data/, so that folder is on sys.path).

    It runs in a thread: one that has not returned after `timeout` seconds gets an exception raised inside it (a
    Python loop stops at once; a blocking C call is left behind, idle) and the package fails as "load needles"."""
    if not path.is_file():
        raise Env0Error("load needles", path, "missing")
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["mod"] = _exec_needles(path)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            box["err"] = e

    context = contextvars.copy_context()  # the caller's import folders (env0_imports) reach the worker thread
    worker = threading.Thread(target=context.run, args=(work,), daemon=True, name=f"needles {path.parent.parent.name}")
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident or 0), ctypes.py_object(_NeedlesTimeout))
        worker.join(1.0)
        raise Env0Error("load needles", path, f"did not return within {timeout:g} s")
    if "err" in box:
        err = box["err"]
        assert isinstance(err, BaseException)
        raise err
    return box["mod"]  # type: ignore[return-value]


def _exec_needles(path: Path) -> ModuleType:
    name = f"_env0_needles_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses (and pickling) look the module up while it executes
    try:
        with _COMPILING:  # CPython 3.11 can fail compiling in two threads at once ("AST constructor recursion depth")
            code = compile(path.read_bytes(), str(path), "exec")
        with import_folders([path.parent]):  # its siblings in data/, for this load only (not through sys.path)
            exec(code, mod.__dict__)  # noqa: S102 - the package's own needles module, as env0's seeder imports it
    except Exception as e:  # noqa: BLE001 - any error in a package's own code is reported, not raised raw
        raise Env0Error("load needles", path, f"{type(e).__name__}: {e}") from e
    finally:
        sys.modules.pop(name, None)
    return mod
