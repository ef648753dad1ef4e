"""Playing a template's task by hand: the first task of a template for a seed, and a list of tool calls run on
a fresh workspace and scored by the task's verifier (shared by the per-template tests)."""

from __future__ import annotations

from env0_posttrain.tasks import TEMPLATES, build_workspace, verify
from env0_posttrain.tasks.generator import template_stream
from env0_posttrain.workspace import call_tool


def first_task(tid: str, seed: int = 4):
    return next(template_stream(TEMPLATES[tid], seed))


def run_calls(task, calls):
    """Every call must succeed; the verdict compares the untouched start with the end state."""
    start, end = build_workspace(task), build_workspace(task)
    for name, args in calls:
        assert call_tool(end, name, args)["ok"], (name, args)
    return verify(task, start, end, None)
