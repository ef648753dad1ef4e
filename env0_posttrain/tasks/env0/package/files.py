"""An env0 package's files as the runner reads and copies them: walked without recursion and without following any
link, so a package carries nothing of the host and no tree it holds can stop the runner.

A package may hold regular files, folders and links that stay inside it (a link is checked by resolving it whole:
one that leaves the package, dangles or loops is refused); anything else (a fifo would block a read forever, a
device or socket) is refused too, as is a tree deeper than MAX_DEPTH or larger than MAX_ENTRIES. Each refusal is
an Env0Error naming the entry, one line. Copies (solution/ and tests/ into the sandbox) recreate links as links,
never their targets' content.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path
from typing import Literal, NamedTuple

from ..errors import Env0Error

MAX_DEPTH = 32  # folder levels below the package (env0's own packages have 3)
MAX_ENTRIES = 20_000  # files, folders and links in one package
SKIPPED = ("__pycache__",)  # caches Python writes beside data/needles.py: never part of a package

Kind = Literal["file", "dir", "link"]


class Entry(NamedTuple):
    rel: str  # the path below the walked folder, '/'-separated
    kind: Kind


def _refuse(path: Path, why: str) -> Env0Error:
    return Env0Error("read package", path, why)


def _check_link(path: Path, inside: Path) -> None:
    try:
        target = Path(os.path.realpath(path, strict=True))
    except OSError as e:  # a loop (ELOOP) or a dangling link
        raise _refuse(path, f"a link that cannot be followed ({e.strerror or e}: -> {os.readlink(path)})") from None
    if target != inside and not target.is_relative_to(inside):
        raise _refuse(path, f"a link that leaves the package (-> {os.readlink(path)}); a package is read without "
                      "following links out of it")


def walk(top: Path, package_root: Path | None = None) -> list[Entry]:
    """Every entry below `top` (a package or one of its folders), sorted as the package hash reads them, links not
    followed; links must stay inside `package_root` (default `top`). Raises Env0Error."""
    top = Path(top)
    inside = Path(os.path.realpath(package_root if package_root is not None else top))
    out: list[Entry] = []
    stack: list[tuple[Path, tuple[str, ...]]] = [(top, ())]
    while stack:
        folder, parts = stack.pop()
        if len(parts) > MAX_DEPTH:
            raise _refuse(folder, f"folders nested more than {MAX_DEPTH} deep")
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            raise _refuse(folder, f"cannot list it ({e.strerror or e})") from None
        for e in entries:
            if e.name in SKIPPED:
                continue
            rel = (*parts, e.name)
            path = folder / e.name
            if len(out) >= MAX_ENTRIES:
                raise _refuse(top, f"more than {MAX_ENTRIES} files and folders")
            mode = e.stat(follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                _check_link(path, inside)
                out.append(Entry("/".join(rel), "link"))
            elif stat.S_ISDIR(mode):
                out.append(Entry("/".join(rel), "dir"))
                stack.append((path, rel))
            elif stat.S_ISREG(mode):
                out.append(Entry("/".join(rel), "file"))
            else:
                raise _refuse(path, "neither a file, a folder nor a link (a fifo, socket or device)")
    return sorted(out, key=lambda x: x.rel.split("/"))


def check_package(root: Path) -> None:
    """Refuse a package whose tree or links the runner will not read (see the module's docstring)."""
    walk(root)


def package_sha256(root: Path) -> str:
    """Hash of every file of the package (paths and bytes; a link to a file counts as that file, as before links
    were checked), caches aside: the task's content includes it. Raises Env0Error for a package `walk` refuses."""
    root = Path(root)
    h = hashlib.sha256()
    for e in walk(root):
        path = root / e.rel
        if e.kind == "file" or (e.kind == "link" and path.is_file()):
            h.update(e.rel.encode() + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()


def copy_folder(src: Path, dest: Path, package_root: Path) -> None:
    """Copy a package folder's contents into `dest` (an existing, empty folder): files and folders as they are,
    links recreated as links (never followed); what `walk` refuses raises."""
    for e in walk(src, package_root):
        s, d = src / e.rel, dest / e.rel
        if e.kind == "dir":
            d.mkdir()
        elif e.kind == "link":
            os.symlink(os.readlink(s), d)
        else:
            shutil.copyfile(s, d, follow_symlinks=False)
            shutil.copymode(s, d, follow_symlinks=False)
