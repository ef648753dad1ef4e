"""Removing a folder whatever was left in it, without raising: a sandbox's teardown must not be stopped by the tree
a hostile command built (shutil.rmtree recurses once per level and raises RecursionError ~1,000 levels down).

`remove_tree` walks with a stack of open folders, never recursion, and never follows a link; at most MAX_OPEN
folders are open at once (deeper ones are moved up beside the top folder and taken from there), so depth, width
and path length do not matter. Folders without permissions are given them (they are ours: the sandbox's uid is
the runner's), fifos, sockets and devices are unlinked like files, and a filesystem mounted inside the tree (a bind
mount a command made when unconfined) is detached first, never entered: a bind of the host's / there must not be
emptied. What cannot be removed is kept in a list, logged once, and retried by `sweep_leftovers` later.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import stat
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger("env0_posttrain.sandbox")

MAX_OPEN = 64  # folders held open at once, whatever the depth
MNT_DETACH = 2
_LEFT: dict[str, str] = {}  # path -> why it is still there (logged once when first left)
_LEFT_LOCK = threading.Lock()
_OCTAL = re.compile(r"\\([0-7]{3})")


def _mount_points_under(top: str) -> list[str]:
    """Mount points strictly inside `top` (from /proc/self/mountinfo), deepest first."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split(" ")
        if len(fields) > 4:
            point = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[4])  # \040 for a space, as the kernel writes it
            if point.startswith(top.rstrip("/") + "/"):
                found.append(point)
    return sorted(set(found), key=lambda p: -p.count("/"))


def _detach(point: str) -> str | None:
    """Lazily unmount `point`; None when it is gone, else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.umount2(os.fsencode(point), MNT_DETACH) == 0:
        return None
    return f"{point}: a mount point that cannot be detached ({os.strerror(ctypes.get_errno())})"


def _open_dir(name: str, dir_fd: int | None) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:  # a folder made unreadable (chmod 000): ours, so it may be opened up
        os.chmod(name, 0o700, dir_fd=dir_fd)
        fd = os.open(name, flags, dir_fd=dir_fd)
    try:
        os.fchmod(fd, 0o700)  # its entries must be removable (a folder made read-only)
    except OSError:
        pass
    return fd


def _unlink(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except IsADirectoryError:  # it became a folder since it was listed
        os.rmdir(name, dir_fd=dir_fd)


class _Walk:
    """One removal: the top folder's fd, its device, the mount points it holds, what could not be removed."""

    def __init__(self, top: str):
        self.top = top
        self.problems: list[str] = []
        self.moved_up = 0
        self.skip: set[tuple[int, int]] = set()
        for point in _mount_points_under(top):
            why = _detach(point)
            if why is not None:
                self.problems.append(why)
                try:
                    st = os.lstat(point)
                    self.skip.add((st.st_dev, st.st_ino))
                except OSError:
                    pass
        self.top_fd = _open_dir(top, None)
        self.dev = os.fstat(self.top_fd).st_dev

    def empty_top(self) -> None:
        """Empty the top folder; folders moved up beside it are taken in the next pass."""
        while True:
            before = self.moved_up
            self._empty(os.dup(self.top_fd))
            if self.moved_up == before:
                return

    def _list(self, fd: int, name: str) -> Iterator[tuple[str, bool]]:
        """(name, is a folder) of each entry, from the listing's own types: a file costs no stat."""
        try:
            with os.scandir(fd) as it:
                return iter([(e.name, e.is_dir(follow_symlinks=False)) for e in it])
        except OSError as e:
            self.problems.append(f"{name}: cannot list it ({e.strerror or e})")
            return iter(())

    def _empty(self, fd: int) -> None:
        frames: list[tuple[int, str | None, Iterator[tuple[str, bool]]]] = [(fd, None, self._list(fd, self.top))]
        while frames:
            fd, name, names = frames[-1]
            for entry, is_dir in names:
                child = self._entry(fd, entry, is_dir, len(frames))
                if child is not None:
                    frames.append((child, entry, self._list(child, entry)))
                    break
            else:
                frames.pop()
                os.close(fd)
                if frames:
                    self._rmdir(frames[-1][0], name)

    def _entry(self, fd: int, entry: str, is_dir: bool, depth: int) -> int | None:
        """Remove `entry` of folder `fd`, or return the fd of the folder to descend into."""
        try:
            if not is_dir:
                _unlink(entry, fd)
                return None
            st = os.stat(entry, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                _unlink(entry, fd)
                return None
            if (st.st_dev, st.st_ino) in self.skip or st.st_dev != self.dev:
                self.problems.append(f"{entry}: another filesystem mounted there; not entered")
                return None
            try:
                os.rmdir(entry, dir_fd=fd)  # empty already: no need to open it
                return None
            except OSError:
                pass
            if depth >= MAX_OPEN:  # move it up beside the top folder: a later pass starts it at depth 1
                os.rename(entry, f".deep-{uuid.uuid4().hex}", src_dir_fd=fd, dst_dir_fd=self.top_fd)
                self.moved_up += 1
                return None
            return _open_dir(entry, fd)
        except FileNotFoundError:
            return None
        except OSError as e:
            self.problems.append(f"{entry}: {e.strerror or e}")
            return None

    def _rmdir(self, fd: int, name: str | None) -> None:
        try:
            os.rmdir(name, dir_fd=fd)
        except FileNotFoundError:
            pass
        except OSError as e:
            self.problems.append(f"{name}: {e.strerror or e}")


def remove_tree(path: str | Path) -> list[str]:
    """Remove `path` (a folder with anything in it, or a file, link, fifo...). Never raises; returns what could not
    be removed ([] when it is gone). A path left behind is remembered for `sweep_leftovers` and logged once."""
    top = os.path.abspath(os.fspath(path))
    problems = _remove(top)
    if problems:
        with _LEFT_LOCK:
            first = top not in _LEFT
            _LEFT[top] = problems[0]
        if first:
            log.warning("could not remove %s (%d problem(s), first: %s); it is retried later", top, len(problems),
                        problems[0])
    return problems


def _remove(top: str) -> list[str]:
    try:
        st = os.lstat(top)
    except FileNotFoundError:
        return []
    except OSError as e:
        return [f"{top}: {e.strerror or e}"]
    try:
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(top)
            return []
        walk = _Walk(top)
    except FileNotFoundError:
        return []
    except Exception as e:  # noqa: BLE001 - a teardown never raises: what is left is reported and swept later
        return [f"{top}: {type(e).__name__}: {e}"]
    try:
        walk.empty_top()
    except Exception as e:  # noqa: BLE001 - as above
        walk.problems.append(f"{top}: {type(e).__name__}: {e}")
    finally:
        os.close(walk.top_fd)
    try:
        os.rmdir(top)
    except FileNotFoundError:
        pass
    except OSError as e:
        walk.problems.append(f"{top}: {e.strerror or e}")
    return walk.problems


def sweep_leftovers() -> list[str]:
    """Try again to remove what earlier removals left; the paths still there (already logged once)."""
    with _LEFT_LOCK:
        paths = list(_LEFT)
    still = []
    for p in paths:
        if _remove(p):
            still.append(p)
        else:
            with _LEFT_LOCK:
                _LEFT.pop(p, None)
            log.info("removed %s, left by an earlier teardown", p)
    return still


def leftovers() -> dict[str, str]:
    with _LEFT_LOCK:
        return dict(_LEFT)
