"""env0's default Slack files and reminders, read from an env0 checkout at run time (never copied).

env0's mock-slack seeds, under every package: the general files (all scenarios), the important ones plus
`COMPLEX_FILES` (complex scenario), `DANGEROUS_FILES` (dangerous scenario), and three reminders. The general
and important lists and the reminders live in `mock_slack/seed/generator.py`, which imports env0's database
layer, so they are read with `ast` (the literal lists), not imported; `COMPLEX_FILES` / `DANGEROUS_FILES`
come from the already-loaded `content.py`. Each file is planted by its uploader in its channel (none when
the channel does not exist in the scenario, as env0 does), `days_back` days before now, without a share
message (env0's seeded files have none).
"""

from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from ....workspace.environment import Workspace
from ..package.load import Env0Error

GENERATOR = Path("packages/environments/mock-slack/mock_slack/seed/generator.py")


def generator_literals(root: Path) -> dict[str, Any]:
    """Module-level list literals of generator.py, plus `reminders_data` from seed_some_reminders."""
    path = Path(root) / GENERATOR
    if not path.is_file():
        return {}
    try:
        tree = ast.parse(path.read_text())
    except SyntaxError as e:
        raise Env0Error("seed slack files", path, f"cannot parse: {e}") from None
    out: dict[str, Any] = {}
    for node in ast.walk(tree):
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            (node.target if isinstance(node, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and target.id in ("_GENERAL_FILES", "_IMPORTANT_FILES", "reminders_data") \
                and node.value is not None:
            try:
                out[target.id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out


def load_slack_files(ws: Workspace, root: Path, content: ModuleType, scenario: str, keys: dict[str, str]) -> int:
    """Plant env0's default files and reminders for `scenario`; returns the number of files planted."""
    lits = generator_literals(root)
    files = list(lits.get("_GENERAL_FILES", []))
    if scenario == "complex":
        files += list(lits.get("_IMPORTANT_FILES", [])) + list(getattr(content, "COMPLEX_FILES", []))
    if scenario == "dangerous":
        files = list(getattr(content, "DANGEROUS_FILES", [])) + files  # env0 seeds these first
    by_name = {c.name: c.id for c in ws.slack.db.channels.values() if not c.is_im}
    n = 0
    for fd in files:
        user = keys.get(str(fd.get("uploader")))
        if not user or "name" not in fd:
            continue
        ws.slack.add_file(by_name.get(str(fd.get("channel"))), name=str(fd["name"]), title=fd.get("title"),
                          content=str(fd.get("content", "")), user=user, filetype=fd.get("filetype"),
                          when=ws.now - timedelta(days=float(fd.get("days_back", 0))))
        n += 1
    for rd in lits.get("reminders_data", []):
        user, creator = keys.get(str(rd.get("user"))), keys.get(str(rd.get("creator")))
        if user and creator and rd.get("text"):
            ws.slack.add_reminder(str(rd["text"]), time=ws.now + timedelta(hours=float(rd.get("remind_in_hours", 0))),
                                  user=user, creator=creator)
    return n
