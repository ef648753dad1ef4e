"""A run's settings exported to the process environment for the worker processes a stage starts, and taken back.

A long-lived process (the daemon's code server, a test session, `run materialize` of several runs) runs stages of
several runs: one run's setting (its torch thread count) must not carry into the next. What was there before the first export (the
user's own setting) comes back when a run has none; a value someone else set since is left alone.
"""

from __future__ import annotations

import os

_EXPORTED: dict[str, tuple[str | None, str]] = {}  # name -> (the value before our export, the value we exported)


def _put(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def export(name: str, value: str | None) -> None:
    """Set `name` for this process and its children; None restores what was there before our own exports."""
    current = os.environ.get(name)
    ours = name in _EXPORTED and current == _EXPORTED[name][1]
    before = _EXPORTED[name][0] if ours else current
    if value is None:
        _EXPORTED.pop(name, None)
        _put(name, before)
    else:
        _EXPORTED[name] = (before, value)
        _put(name, value)
