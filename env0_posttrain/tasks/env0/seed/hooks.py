"""The per-package seed hooks env0 runs after its seeders (`RUN python3 /tasks/<name>/data/<hook>.py <db>` in
the Dockerfile). They write env0's SQLite models directly, so they cannot run here; each known hook is read for
what it plants and planted the same way:

- seed_sessions.py (auth): one live token per SESSION_TOKENS entry: seed/auth.py does it from the needles.
- seed_gcal_extra.py (gcal): one extra calendar owned by the user, named by the hook's CAL_ID / CAL_SUMMARY /
  CAL_DESCRIPTION constants.
- seed_personal_account.py (gmail): a second mailbox, env0's generator's personal account `user_101` (an
  AUTH_USERS entry): planted empty (the generator's messages for it are not in the checkout); that user's tokens
  then act in it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ....workspace.environment import Workspace
from ..package.load import Env0Error

HANDLED = {"seed_sessions.py", "seed_gcal_extra.py", "seed_personal_account.py"}
PERSONAL_ACCOUNT_ID = "user_101"  # env_0_gmail.seed.generator.PERSONAL_ACCOUNT_ID, as the hook's docstring names it


def hooks(root: Path) -> list[Path]:
    docker = root / "environment" / "Dockerfile"
    text = docker.read_text(encoding="utf-8") if docker.is_file() else ""
    return [root / "data" / m.group(1) for m in re.finditer(r"^RUN\s+python3?\s+/tasks/[^/\s]+/data/(\S+\.py)", text, re.M)]


def _constants(path: Path) -> dict[str, str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for t in node.targets if isinstance(t, ast.Name)}


def run_hooks(ws: Workspace, root: Path) -> None:
    """Plant what the package's known hooks plant; an unknown or unserved hook is an Env0Error naming it."""
    for hook in hooks(root):
        if hook.name == "seed_gcal_extra.py" and hook.is_file():
            c = _constants(hook)
            if "CAL_ID" in c and c["CAL_ID"] not in ws.calendar.db.calendars:
                ws.calendar.add_calendar(summary=c.get("CAL_SUMMARY", c["CAL_ID"]), description=c.get("CAL_DESCRIPTION"),
                                         calendar_id=c["CAL_ID"], time_zone="America/Los_Angeles")
        elif hook.name == "seed_personal_account.py":
            if PERSONAL_ACCOUNT_ID not in ws.auth.db.users:
                raise Env0Error("seed hooks", hook, f"the personal account {PERSONAL_ACCOUNT_ID} is not an AUTH_USERS entry")
            ws.auth.db.extra_mailboxes = (*ws.auth.db.extra_mailboxes, PERSONAL_ACCOUNT_ID)
        elif hook.name not in HANDLED:
            raise Env0Error("seed hooks", hook, "an env0 seed hook this runtime does not know (it writes env0's "
                            "SQLite models)")
