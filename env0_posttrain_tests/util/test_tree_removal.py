"""The teardown's removal (util/tree_removal.py): whatever a tree holds (depth past Python's recursion limit and past
PATH_MAX, width, folders without permissions, fifos, sockets, links out of it, a bind mount of a host folder), it is
removed without raising, nothing outside it is touched, and what cannot be removed is logged once and swept later."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from env0_posttrain.util import tree_removal
from env0_posttrain.util.tree_removal import leftovers, remove_tree, sweep_leftovers


def _deep(top: Path, levels: int, name: str = "d") -> None:
    fd = os.open(top, os.O_RDONLY)
    for _ in range(levels):  # by fd: the path grows past PATH_MAX
        os.mkdir(name, dir_fd=fd)
        nxt = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)


def test_a_tree_deeper_than_the_recursion_limit_and_path_max_is_removed(tmp_path):
    top = tmp_path / "deep"
    top.mkdir()
    _deep(top, 3 * sys.getrecursionlimit(), name="x" * 40)  # 3,000 levels, ~123,000 characters of path
    try:
        with pytest.raises(RecursionError):
            shutil.rmtree(top)  # what the sandbox's close used to do
        assert remove_tree(top) == [] and not top.exists()
    finally:  # never left for pytest's own clean-up (shutil.rmtree) to meet in a later session
        subprocess.run(["rm", "-rf", str(top)])


def test_wide_trees_strange_files_and_locked_folders_go_and_nothing_outside_is_touched(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("host")
    top = tmp_path / "tree"
    wide = top / "wide"
    wide.mkdir(parents=True)
    for i in range(5000):
        (wide / f"f{i}").touch()
    (top / "out").symlink_to(outside)
    (top / "out-file").symlink_to(outside / "keep")
    (top / "loop").symlink_to("loop")
    (top / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(top / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(top / "sock"))
    locked = top / "locked" / "inner"
    locked.mkdir(parents=True)
    (locked / "f").write_text("x")
    locked.chmod(0)
    (top / "locked").chmod(0o500)
    (top / "ro-file").write_text("x")
    (top / "ro-file").chmod(0)
    try:
        assert remove_tree(top) == []
    finally:
        sock.close()
    assert not top.exists()
    assert (outside / "keep").read_text() == "host"


def test_a_file_link_or_missing_path_is_removed_or_ignored(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    link = tmp_path / "l"
    link.symlink_to(f)
    assert remove_tree(link) == [] and f.exists() and not link.is_symlink()
    assert remove_tree(f) == [] and not f.exists()
    assert remove_tree(tmp_path / "never-there") == []


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="bind mounts need root")
def test_a_bind_mount_inside_is_detached_never_emptied(tmp_path):
    host = tmp_path / "host-folder"
    host.mkdir()
    (host / "precious").write_text("host data")
    top = tmp_path / "tree"
    (top / "a" / "b").mkdir(parents=True)
    assert subprocess.run(["mount", "--bind", str(host), str(top / "a" / "b")]).returncode == 0
    try:
        assert remove_tree(top) == []
    finally:
        subprocess.run(["umount", "-l", str(top / "a" / "b")], capture_output=True)
    assert not top.exists() and (host / "precious").read_text() == "host data"


def test_what_cannot_be_removed_is_logged_once_and_swept_later(tmp_path, monkeypatch, caplog):
    top = tmp_path / "stuck"
    (top / "sub").mkdir(parents=True)
    (top / "sub" / "held").write_text("x")
    real_unlink = os.unlink

    def refuse(path, *a, **kw):
        if os.fspath(path) == "held":
            raise PermissionError(1, "Operation not permitted")
        return real_unlink(path, *a, **kw)

    monkeypatch.setattr(tree_removal.os, "unlink", refuse)
    with caplog.at_level(logging.WARNING, logger="env0_posttrain.sandbox"):
        first = remove_tree(top)
        second = remove_tree(top)
    assert first and second and "held" in first[0]
    assert len([r for r in caplog.records if r.name == "env0_posttrain.sandbox"]) == 1  # logged once, not twice
    assert str(top) in leftovers()
    monkeypatch.setattr(tree_removal.os, "unlink", real_unlink)
    assert sweep_leftovers() == [] and not top.exists() and str(top) not in leftovers()
