"""Import folders that only the code loading a needles module sees, never `sys.path`.

A needles module may import siblings from its data/ folder and env0's service packages from the checkout.
Putting those folders on `sys.path` (and removing them after) changed a list that every other thread walks when
it imports or looks up package metadata: mid-rollout, a verifier thread seeding a package made litellm's lazy
`import httpx2` miss site-packages ("No package metadata was found for httpx2"), which stopped the seeds'
300-task teacher round at its first call. The folders live in a context variable instead; two finders, installed
once, serve them to that context only: the folders just before `PathFinder` (where `sys.path[0]` was), the
`env_0_<svc>` aliases after every other finder.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

Alias = Callable[[str], importlib.machinery.ModuleSpec | None]

_FOLDERS: ContextVar[tuple[str, ...]] = ContextVar("env0_import_folders", default=())
_ALIASES: ContextVar[tuple[Alias, ...]] = ContextVar("env0_import_aliases", default=())
_INSTALL = threading.Lock()


class _ContextFolders(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        folders = _FOLDERS.get()
        if path is not None or not folders:  # submodules resolve through their package's __path__
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, list(folders))


class _ContextAliases(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if path is not None:
            return None
        for alias in _ALIASES.get():
            if (spec := alias(fullname)) is not None:
                return spec
        return None


_FOLDER_FINDER, _ALIAS_FINDER = _ContextFolders(), _ContextAliases()


def _install() -> None:
    with _INSTALL:
        if _FOLDER_FINDER in sys.meta_path:
            return
        at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
        sys.meta_path.insert(at, _FOLDER_FINDER)
        sys.meta_path.append(_ALIAS_FINDER)


@contextmanager
def import_folders(folders: Sequence[Path | str] = (), alias: Alias | None = None) -> Iterator[None]:
    """Within this context (and contexts copied from it) `import name` also looks in `folders`, first, and asks
    `alias` for names nothing else resolves; other threads see neither."""
    _install()
    f_token = _FOLDERS.set((*map(str, folders), *_FOLDERS.get()))
    a_token = _ALIASES.set((*_ALIASES.get(), alias) if alias is not None else _ALIASES.get())
    try:
        yield
    finally:
        _ALIASES.reset(a_token)
        _FOLDERS.reset(f_token)
