"""The one error a package step raises: it names the step and the file, so a bad package in a corpus of thousands
is found at once (every module of the package pipeline raises it; package/load.py re-exports it)."""

from __future__ import annotations

from pathlib import Path


class Env0Error(RuntimeError):
    """A package could not be run; says which file and which step."""

    def __init__(self, step: str, path: Path | str, message: str):
        self.step, self.path = step, str(path)
        super().__init__(f"{step}: {path}: {message}")
