"""One shrunk run without an rl: section, launched in headless Chromium with "Materialize all" on the asset graph of
`env0-posttrain ui`, its training process killed by SIGKILL once it has written a checkpoint: the RL and on-policy
steps are left out (Skipped, never materialized); the killed training says its signal, moves its partial adapter
aside and is retried to success; the TITO drift check, which does not apply to chat rows, shows Skipped, not
Passed; the teacher table opens inline from the artifact server with its interval's bounds or the reason there are
none. Every wait is explicit; its timeout only a hang guard for a loaded machine."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from urllib.parse import quote

import dagster as dg
import pytest

from env0_posttrain_tests.support.browser import (PAGE_S, SKIP_WITHOUT_CHROMIUM, body_text, click_button, open_page,
                                                  runs, wait, wait_for_text)

pytestmark = [pytest.mark.slow, *SKIP_WITHOUT_CHROMIUM]
selenium = pytest.importorskip("selenium", reason="selenium is not installed")

from selenium.webdriver.common.by import By  # noqa: E402

RUN_ID = "plain"
RUN_S = 840  # the shrunk run, its training once and a bit, under load (a hang guard below the 900 s test timeout)
OVERRIDES = [
    "tasks.n_train=8", "tasks.n_eval=2", "tasks.seed=3", "tasks.families=[calendar]",
    "student.pretrain_steps=30",  # fewer leave a base (and adapter) that repeats one token: adapter_learned fails
    "student.corpus={short_repeats: 0, copy_drills: 0, repeat_drills: 0, directory_repeats: 0, practice_calls: 0}",
    "lora={r: 8, alpha: 16, learning_rate: 3.0e-2, max_seq_length: 1024, per_device_batch_size: 4, "
    "grad_accumulation: 1, max_steps: 12, logging_steps: 1, save_steps: 2, eval_fraction: 0.0}",
    "eval={trials: 1, max_steps: 2, max_tokens: 16, concurrency: 8}",
]
WORKER = "env0_posttrain.stages.pipes_worker"


def _workers(data: Path) -> list[int]:
    """The pids of Pipes training workers of this test's UI: their environment names its data dir."""
    mark = f"ENV0_DATA_DIR={data.resolve()}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if WORKER in cmd and mark in env:
            pids.append(int(entry.name))
    return pids


def _kill_training_after_a_checkpoint(data: Path, timeout_s: float) -> Path:
    """SIGKILL the training worker once it has saved a checkpoint; the adapter folder it was writing."""
    adapter = data / "artifacts" / RUN_ID / "adapter"
    deadline = time.time() + timeout_s
    while time.time() < deadline:  # polled: the worker is another process; the deadline only guards a hang
        written = [d for d in adapter.glob("*/checkpoints/checkpoint-*") if d.is_dir()] if adapter.is_dir() else []
        pids = _workers(data)
        if written and pids:
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            return written[0].parents[1]  # adapter/<train_id>/checkpoints/checkpoint-N
        time.sleep(0.2)
    raise AssertionError(f"no training checkpoint under {adapter} within {timeout_s} s")


def _pick_all_partitions(driver) -> None:
    """The dialog's "All" partitions (the run's is the only one), then its launch button, whatever it is named."""
    click_button(driver, "All")
    wait(driver, lambda d: "1 partition" in body_text(d), "one partition selected", shot="ui_partition_chosen.png")

    def launch(d) -> bool:
        button = next((b for b in d.find_elements(By.TAG_NAME, "button")
                       if b.text.strip().startswith("Launch") and b.is_enabled()), None)
        if button is None:
            return False
        button.click()
        return True

    wait(driver, launch, "an enabled launch button")


def test_materialize_all_on_a_run_without_rl_with_its_training_killed_once(ui, browser):
    url, artifacts, data = ui
    from env0_posttrain.making.new_run import build_spec
    from env0_posttrain.spec.runspec import write_spec

    spec, _ = build_spec(RUN_ID, "demo", "env0-oracle/oracle@0.9", None, OVERRIDES)
    write_spec(spec, data / "runs")
    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        instance.add_dynamic_partitions("run_id", [RUN_ID])

    # 1. "Materialize all" on the asset graph, the run's partition picked in the dialog.
    open_page(browser, f"{url}/asset-groups", fresh=True)
    click_button(browser, "Materialize all…")  # partitioned assets: it opens the partition dialog
    wait(browser, lambda d: "Launch" in body_text(d), "the materialize dialog", shot="ui_materialize_all_dialog.png")
    _pick_all_partitions(browser)

    def started(_) -> str | None:  # one run for the partition, launched directly or by a one-partition backfill
        mine = [r for r in runs(data) if r.tags.get("dagster/partition") == RUN_ID]
        return f"{url}/runs/{mine[0].run_id}" if mine else None

    run_url = wait(browser, started, "the run", PAGE_S, "ui_materialize_all_launched.png")

    # 2. The optional stages are left out before any step starts.
    open_page(browser, f"{run_url}?logs={quote('left out of this run')}")
    said = f" left out of this run: the spec of run '{RUN_ID}' has no onpolicy or rl section"
    body = wait_for_text(browser, [said], "the left-out line", PAGE_S, "ui_left_out.png")
    line = next(x for x in body.splitlines() if said in x)
    assert set(line.split(said)[0].split(", ")) == {"rl_adapter", "rl_eval_trajectories", "onpolicy_adapter",
                                                    "onpolicy_eval_trajectories"}, line
    browser.get("about:blank")  # a live run's log page re-renders each event: it would take CPU from the training

    # 3. The training killed once: its partial adapter moved aside, the signal said, a retry.
    killed = _kill_training_after_a_checkpoint(data, RUN_S)
    open_page(browser, f"{run_url}?logs={quote('killed by signal')}")
    wait_for_text(browser, ["lora_adapter: the training process was killed by signal 9 (SIGKILL",
                            "retry 1 of 2"], "the killed training's line", PAGE_S, "ui_killed_training.png")
    assert not killed.exists() and (killed.parent / ".partial" / killed.name).is_dir()
    browser.get("about:blank")

    run_id = run_url.rsplit("/", 1)[-1]
    wait(browser, lambda _: next(r for r in runs(data) if r.run_id == run_id).is_finished, "the run ended", RUN_S)
    open_page(browser, run_url)
    wait(browser, lambda d: "RUN_SUCCESS" in body_text(d) or "RUN_FAILURE" in body_text(d), "the run's end shown",
         PAGE_S, "ui_operating_run_ended.png")
    assert "RUN_SUCCESS" in body_text(browser), body_text(browser)[-2000:]
    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        for key in ("rl_adapter", "rl_eval_trajectories", "onpolicy_adapter", "onpolicy_eval_trajectories"):
            assert RUN_ID not in instance.get_materialized_partitions(dg.AssetKey(key)), key
        for key in ("lora_adapter", "comparison_report", "teacher_table"):
            assert RUN_ID in instance.get_materialized_partitions(dg.AssetKey(key)), key

    # 4. A check that does not apply is Skipped, not Passed.
    open_page(browser, f"{url}/assets/sft_rows?view=checks&partition={RUN_ID}")
    wait_for_text(browser, ["tito_drift\nSkipped", "rows_valid\nSucceeded"], "the skipped TITO check", PAGE_S,
                  "ui_tito_skipped.png")  # each check's line in the list: its name, then its state

    # 5. The teacher table, inline as text, with its interval's bounds or why there are none.
    open_page(browser, f"{artifacts}/artifacts/{RUN_ID}/teacher_table/teacher_table.md")
    body = wait_for_text(browser, ["env0-oracle/oracle@0.9"], "the teacher table as text", PAGE_S,
                         "ui_teacher_table.png")
    assert "n/a to n/a" not in body and (" to " in body or "none:" in body), body
