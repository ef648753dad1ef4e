"""The trajectory explorer's weight: size on disk, write time and time to first paint in headless Chromium.

Episodes are synthetic but shaped like real ones: a tiny real run (the offline oracle on 6 generated tasks, the one
agent loop) gives template episodes, copied under new task ids, trials and arms with drawn pass / fail, straight
into a fresh store. Sizes: the demo's (60 tasks x 3 trials x 3 arms = 540 episodes), ~2,000 episodes
(167 x 3 x 4) and the issue's 2,000 tasks x 3 trials x 4 arms (24,000 episodes).

    PYTHONPATH=$PWD .venv/bin/python bench/explorer_bench.py            # all three sizes
    PYTHONPATH=$PWD .venv/bin/python bench/explorer_bench.py --sizes 60x3x3
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

from env0_posttrain.agent.records import Episode
from env0_posttrain.evaluate.explorer import write_explorer
from env0_posttrain.spec.runspec import RunSpec
from env0_posttrain.store import Store
from env0_posttrain.tasks.model import Task, VerifierResult
from env0_posttrain_tests.support.explorer_run import RUN_ID, write_tiny_run

ARMS = ("base", "sft", "teacher_eval", "rl")
PASS_P = {"base": 0.2, "sft": 0.35, "teacher_eval": 0.8, "rl": 0.4}


def synthetic_store(root: Path, spec: RunSpec, templates: list[Episode], tasks: list[Task], n_tasks: int, trials: int,
                    n_arms: int) -> Store:
    rng = random.Random(0)
    store = Store(root / "env0.duckdb")
    store.upsert_run(spec)
    new_tasks = [tasks[i % len(tasks)].model_copy(update={"id": f"{tasks[i % len(tasks)].id}-{i:05d}"}) for i in range(n_tasks)]
    store.replace_task_set(RUN_ID, "bench", {}, [], [("eval", t) for t in new_tasks])
    by_task = {t.id: [e for e in templates if e.task_id == t.id] for t in tasks}
    for arm in ARMS[:n_arms]:
        rid = store.open_round(RUN_ID, arm, f"bench/{arm}", n_tasks * trials)
        batch = []
        for t in new_tasks:
            pool = by_task[t.id.rsplit("-", 1)[0]]
            for k in range(trials):
                ep = rng.choice(pool)
                reward = 1.0 if rng.random() < PASS_P[arm] else rng.choice([0.0, 0.5])
                verifier = (ep.verifier or VerifierResult(reward=0.0)).model_copy(update={"reward": reward})
                batch.append(ep.model_copy(update={"task_id": t.id, "trial": k, "arm": arm, "verifier": verifier}))
        store.write_episodes(rid, batch)
        store.finish_round(rid, {})
    return store


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def paint(index_html: Path, task_id: str) -> dict[str, float]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1600,1200"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=opts)
    try:
        driver.get(index_html.resolve().as_uri())
        WebDriverWait(driver, 120).until(lambda d: d.execute_script(
            "return performance.getEntriesByName('explorer:list').length"
            " && performance.getEntriesByName('first-contentful-paint').length"))
        fcp, listed = driver.execute_script(
            "return [performance.getEntriesByName('first-contentful-paint')[0].startTime,"
            " performance.getEntriesByName('explorer:list')[0].startTime]")
        driver.execute_script("location.hash = arguments[0]", f"#task={task_id}")
        WebDriverWait(driver, 120).until(lambda d: d.execute_script(
            "return performance.getEntriesByName('explorer:task').length"))
        task_ms = driver.execute_script("return performance.getEntriesByName('explorer:task')[0].duration")
        return {"fcp_ms": fcp, "list_ms": listed, "task_ms": task_ms}
    finally:
        driver.quit()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="+", default=["60x3x3", "167x3x4", "2000x3x4"], help="tasks x trials x arms")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="explorer-bench-"))
    try:
        tiny = write_tiny_run(tmp / "tiny")
        templates = [e for arm in ("base", "sft", "teacher_eval")
                     for e in tiny.load_episodes(tiny.latest_round(RUN_ID, arm))]
        tasks = [Task.model_validate_json(j) for _, j in tiny.load_tasks(RUN_ID, "eval")]
        print("| tasks x trials x arms | episodes | store MB | write s | explorer MB | index.js KB | largest task file KB "
              "| first contentful paint ms | task list drawn ms | task view ms |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for size in args.sizes:
            n, k, a = map(int, size.split("x"))
            root = tmp / size
            store = synthetic_store(root, tiny.get_run(RUN_ID), templates, tasks, n, k, a)
            t0 = time.perf_counter()
            info = write_explorer(store, RUN_ID, root / "report" / "explorer")
            write_s = time.perf_counter() - t0
            data = root / "report" / "explorer" / "data"
            largest = max(p.stat().st_size for p in data.glob("t*.js"))
            first = store.query("SELECT min(task_id) FROM episodes")[0][0]
            p = paint(info.index_html, first)
            print(f"| {size} | {info.episodes} | {(root / 'env0.duckdb').stat().st_size / 1e6:.1f} | {write_s:.1f} "
                  f"| {du(root / 'report' / 'explorer') / 1e6:.2f} | {(data / 'index.js').stat().st_size / 1e3:.0f} "
                  f"| {largest / 1e3:.0f} | {p['fcp_ms']:.0f} | {p['list_ms']:.0f} | {p['task_ms']:.0f} |", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
