"""Generate and verify tasks from every template; print the per-family ledger and the time it took.

    .venv/bin/python bench/tasks_generate.py [per_template]
"""

from __future__ import annotations

import sys
import time

from env0_posttrain.tasks import TEMPLATES, build_ledger, generate_tasks, ledger_markdown


def main() -> None:
    per_template = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    t0 = time.perf_counter()
    tasks = generate_tasks(seed=0, per_template=per_template)
    dt = time.perf_counter() - t0
    levels: dict[int, int] = {}
    for t in tasks:
        levels[t.difficulty] = levels.get(t.difficulty, 0) + 1
    print(f"templates: {len(TEMPLATES)}  tasks: {len(tasks)}  distinct ids: {len({t.id for t in tasks})}  "
          f"distinct digests: {len({t.content_digest() for t in tasks})}")
    print(f"generated + verified (oracle and no-op) in {dt:.1f} s = {1000 * dt / len(tasks):.1f} ms/task")
    print("difficulty (tool calls) histogram:", dict(sorted(levels.items())))
    print(ledger_markdown(build_ledger(tasks)))


if __name__ == "__main__":
    main()
