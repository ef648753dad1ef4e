"""Write the explorer into a report folder: static page + data files, opened from file:// with no server.

Browsers refuse fetch() of file:// JSON, so every data file is a script that hands its JSON to the page
(JSONP-style): `data/index.js` (the task list, loaded with the page) and `data/t<key>.js` per suite x task,
loaded when that task is opened. The page renders every value as text (never as markup), so model output
cannot inject into it. `data/index.js` is written last: its presence means the set is complete.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from itertools import groupby
from pathlib import Path
from typing import Any

from env0_posttrain.evaluate.explorer.data import index_payload, task_payload
from env0_posttrain.evaluate.trajectories import (
    EVAL_ARMS,
    RoundRef,
    iter_episodes,
    run_identifiers,
    select_rounds,
    task_info,
    task_rows,
)
from env0_posttrain.util.fsutil import atomic_write_text
from env0_posttrain.store import Store
from env0_posttrain.spec.suites import DEFAULT_SUITE

STATIC_FILES = ("index.html", "app.js", "app.css")


@dataclass(frozen=True)
class ExplorerInfo:
    index_html: Path
    tasks: int
    episodes: int
    bytes: int


def _script(callback: str, payload: Any) -> str:
    return f"{callback}({json.dumps(payload, ensure_ascii=False, separators=(',', ':'), default=str)});\n"


def _groups(episodes: Iterator[tuple[RoundRef, dict[str, Any]]]) -> Iterator[tuple[tuple[str, str, str], dict]]:
    """((run_id, suite, task_id), {arm: [episode]}) from the task-ordered stream."""
    for task_id, items in groupby(episodes, key=lambda x: x[1]["task_id"]):
        by_key: dict[tuple[str, str, str], dict[str, list]] = {}
        for r, ep in items:
            by_key.setdefault((r.run_id, r.suite, task_id), {}).setdefault(r.arm, []).append(ep)
        yield from by_key.items()


def write_explorer(store: Store, run_id: str, out_dir: Path | str, *, arms: Sequence[str] = EVAL_ARMS,
                   lineage: Mapping[str, Any] | None = None, tasks: Mapping[str, Mapping[str, Any]] | None = None,
                   ) -> ExplorerInfo:
    """The explorer of a run's eval rounds (the newest finished round per arm and suite) into out_dir.

    `tasks`: task_id -> {instruction, family, template_id, difficulty, split} over what the store holds (its tasks
    table, a named suite's task table); the first user message stands in for a missing instruction."""
    out = Path(out_dir)
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    rounds = select_rounds(store, run_id, arms)
    known = task_rows(store, [run_id])
    rows, n_episodes, size = [], 0, 0
    for key, ((_, suite, task_id), by_arm) in enumerate(_groups(iter_episodes(store, rounds))):
        info = (tasks or {}).get(task_id) or task_info(known, run_id, suite, task_id)
        row, payload = task_payload(key, task_id, suite, info, by_arm)
        text = _script("explorerTask", payload)
        (data / f"t{key:05d}.js").write_text(text, encoding="utf-8")
        size += len(text.encode())
        rows.append(row)
        n_episodes += sum(len(v) for v in by_arm.values())
    for name in STATIC_FILES:
        text = resources.files("env0_posttrain.evaluate.explorer").joinpath("static", name).read_text(encoding="utf-8")
        atomic_write_text(out / name, text)
        size += len(text.encode())
    header = {"run_id": run_id, "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "default_suite": DEFAULT_SUITE, "identifiers": run_identifiers(store, [run_id]).get(run_id, {}),
              "lineage": {k: v for k, v in (lineage or {}).items() if isinstance(v, (str, int, float)) or v is None},
              "rounds": [{"arm": r.arm, "suite": r.suite, "round_id": r.round_id, "model": r.model} for r in rounds]}
    text = _script("explorerIndex", index_payload(rows, header))
    atomic_write_text(data / "index.js", text)
    return ExplorerInfo(index_html=out / "index.html", tasks=len(rows), episodes=n_episodes, bytes=size + len(text.encode()))
