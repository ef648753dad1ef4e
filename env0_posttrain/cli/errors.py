"""Operating errors the command line states in one line instead of a traceback: a full disk, a data dir this user
may not write. They arrive from anywhere (a checkpoint save, DuckDB, Dagster's sqlite event log, which says
only "disk I/O error" once the disk is full), so they are recognised by errno and by the drivers' messages
along the exception's cause chain."""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

from typing import Any

import typer
from typer.core import TyperGroup

from env0_posttrain.util.console import printable

_FULL = ("no space left on device", "database or disk is full", "disk i/o error", "disk is full")
_READ_ONLY = ("read-only file system", "readonly database", "permission denied", "operation not permitted",
              "unable to open database file")


def _chain(err: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    while err is not None and err not in out:
        out.append(err)
        err = err.__cause__ or err.__context__  # type: ignore[assignment]
    return out


def operating_error(err: BaseException) -> str | None:
    """One line saying what the operator must do, or None for an error that is not about the machine."""
    for e in _chain(err):
        text = str(e).lower()
        where = f" ({e.filename})" if isinstance(e, OSError) and e.filename and str(e.filename) not in str(e) else ""
        if (isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)) or any(s in text for s in _FULL):
            return (f"the disk is full{where}: {str(e).strip().splitlines()[0]}. Free space and run the same command "
                    "again; finished steps and stored episodes are kept")
        if (isinstance(e, OSError) and e.errno in (errno.EROFS, errno.EACCES, errno.EPERM)) \
                or any(s in text for s in _READ_ONLY):
            return (f"cannot write the data dir{where}: {str(e).strip().splitlines()[0]}. This command needs write "
                    "access (reads such as `run list` do not); use a writable --data-dir / ENV0_DATA_DIR")
    return None


class OperatingErrors(TyperGroup):
    """The top-level command group: every command's operating errors become one red line and exit status 2."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort):
            raise
        except Exception as err:  # noqa: BLE001 - anything else is re-raised unchanged
            message = None if type(err).__module__.startswith("typer") else operating_error(err)
            if message is None:
                raise
            typer.secho(printable(message), fg=typer.colors.RED, err=True)
            raise typer.Exit(2) from None


def ensure_writable(root: Path) -> None:
    """Fail before any work starts (with the PermissionError the group above turns into one line) where the data
    dir cannot be written: a run would otherwise fail in its first step, after the instance was touched."""
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=root):
        pass
