"""Slack Web API methods env0's mock-slack serves vs the ones our workspace serves (a tool per method id).

    .venv/bin/python bench/slack_route_parity.py [--env0 /work/.mirror/benchflow-ai+env0/repo] [--rev HEAD]

Reads the route decorators (`@router.get("/conversations.list")`) of env0's `mock_slack/api/*.py` from a git
checkout (bare mirror or work tree) and prints one row per method: served by both, env0 only (missing here),
or ours only. Exits 1 when something env0 serves is missing here.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env0_posttrain.workspace import TOOLS  # noqa: E402

API_DIR = "packages/environments/mock-slack/mock_slack/api/"
ROUTE = re.compile(r"""@router\.(?:get|post|api_route)\(\s*["']/([A-Za-z.]+)["']""")


def env0_methods(repo: Path, rev: str) -> set[str]:
    git = ["git", "-C", str(repo)]
    names = subprocess.run(git + ["ls-tree", "-r", "--name-only", rev, API_DIR], check=True, capture_output=True,
                           text=True).stdout.split()
    out: set[str] = set()
    for name in names:
        if name.endswith(".py"):
            src = subprocess.run(git + ["show", f"{rev}:{name}"], check=True, capture_output=True, text=True).stdout
            out.update(ROUTE.findall(src))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--env0", type=Path, default=Path("/work/.mirror/benchflow-ai+env0/repo"))
    ap.add_argument("--rev", default="HEAD")
    args = ap.parse_args()
    theirs = env0_methods(args.env0, args.rev)
    ours = {s.method_id for s in TOOLS.values() if s.service == "slack"}
    print(f"{'method':42} {'env0':5} {'ours':5}")
    for m in sorted(theirs | ours):
        print(f"{m:42} {'yes' if m in theirs else '-':5} {'yes' if m in ours else '-':5}")
    missing = sorted(theirs - ours)
    print(f"\nenv0 serves {len(theirs)}, we serve {len(ours)}, both {len(theirs & ours)}; "
          f"missing here: {len(missing)} {' '.join(missing)}")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
