"""Operating the project from the Dagster UI in headless Chromium, against `env0-posttrain ui` on a scratch data dir
(webserver, daemon, artifact server), for the journeys that need no training: the Launchpad refusing bad input at
Launch, before a run exists, and opening on the offline demo preset; a backfill's nightly flag refused when it
cannot act; the spec of a new run opening inline from the artifact server; a broken spec failing a check on the
asset graph; a partition without a spec deleted by its job; a previewed nightly tick tagging its run with today's
date beside the tick's. One UI and one browser for the module; every wait is explicit, its timeout only a hang
guard for a loaded machine."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from env0_posttrain_tests.support.browser import (PAGE_S, RERENDERED, SKIP_WITHOUT_CHROMIUM, body_text, click_button,
                                                  open_page, runs, screenshot, wait, wait_for_text)

pytestmark = [pytest.mark.slow, *SKIP_WITHOUT_CHROMIUM]
selenium = pytest.importorskip("selenium", reason="selenium is not installed")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SMALL = ["tasks.n_train=3", "tasks.n_eval=1", "tasks.families=[calendar]"]


def _playground(driver, url: str, job: str) -> str:
    """A job's Launchpad, fresh; the config its editor opens with."""
    open_page(driver, f"{url}/locations/env0_posttrain/jobs/{job}/playground", fresh=True)
    wait(driver, lambda d: d.execute_script("return document.querySelector('.CodeMirror') !== null"), "the editor")
    return driver.execute_script("return document.querySelector('.CodeMirror').CodeMirror.getValue()")


def _launch(driver, url: str, job: str, op: str, config: dict) -> None:
    import yaml

    _playground(driver, url, job)
    text = yaml.safe_dump({"ops": {op: {"config": config}}}, sort_keys=False)
    driver.execute_script("document.querySelector('.CodeMirror').CodeMirror.setValue(arguments[0])", text)
    click_button(driver, "Launch Run")


def _refused_at_launch(driver, url: str, data: Path, job: str, op: str, config: dict, words: list[str],
                       shot: str) -> str:
    """Launch Run with `config`: the project's own line is on the page, the Launchpad stays open, no run exists."""
    before = len(runs(data))
    _launch(driver, url, job, op, config)
    body = wait_for_text(driver, words, f"{job} refused at launch", PAGE_S, shot)
    assert "/runs/" not in driver.current_url and len(runs(data)) == before
    return body


def _refused_in_editor(driver, url: str, data: Path, job: str, op: str, config: dict, words: list[str],
                      shot: str) -> None:
    """A value the config schema itself refuses (an enum): the editor shows the error and Launch Run stays disabled."""
    import yaml

    before = len(runs(data))
    _playground(driver, url, job)
    text = yaml.safe_dump({"ops": {op: {"config": config}}}, sort_keys=False)
    driver.execute_script("document.querySelector('.CodeMirror').CodeMirror.setValue(arguments[0])", text)

    def refused(d) -> bool:
        launch = [b for b in d.find_elements(By.TAG_NAME, "button") if b.text.strip() == "Launch Run"]
        return bool(launch) and not any(b.is_enabled() for b in launch) and all(w in body_text(d) for w in words)

    wait(driver, refused, f"{job}: Launch Run disabled and {words} shown", PAGE_S, shot)
    assert len(runs(data)) == before


def test_the_launchpad_opens_on_the_demo_and_refuses_bad_input_before_a_run_exists(ui, browser):
    url, _, data = ui
    scaffold = _playground(browser, url, "new_run")
    screenshot(browser, "ui_new_run_launchpad.png")
    assert "preset: default" not in scaffold
    click_button(browser, "Scaffold missing config")  # the one field without a default: the run id
    click_button(browser, "Confirm")
    filled = wait(browser, lambda d: (v := d.execute_script(
        "return document.querySelector('.CodeMirror').CodeMirror.getValue()")) and "run_id" in v and v, "a scaffold")
    assert "preset: default" not in filled, filled
    _launch(browser, url, "new_run", "write_run_spec", {"run_id": "r0"})  # every other field at its default
    wait(browser, lambda d: "/runs/" in d.current_url, "the run page")
    wait_for_text(browser, ["RUN_SUCCESS", "run 'r0': spec written"], "the run with the defaults", PAGE_S)
    from env0_posttrain.making.presets import preset_data
    from env0_posttrain.spec.runspec import load_spec

    written, demo = load_spec(data / "runs" / "r0.yaml"), preset_data("demo", "r0")
    assert written.description == demo["description"], written.description  # the offline demo, not `default`
    _refused_in_editor(browser, url, data, "new_run", "write_run_spec", {"run_id": "r1", "preset": "demoo"},
                       ["not in enum type", "demoo"], "ui_refused_preset.png")
    for config, words, shot in [
        ({"run_id": "r1", "overrides": ["tasks.n_trian=5"]},
         ["run 'r1': invalid run spec: tasks.n_trian: unknown field", "did you mean `tasks.n_train`?"],
         "ui_refused_override.png"),
        ({"run_id": "r1", "teacher": "env0-orcale/oracle"},
         ["run 'r1': teacher.model: litellm cannot route 'env0-orcale/oracle'"], "ui_refused_teacher.png"),
        ({"run_id": "bad id"}, ["run id 'bad id'"], "ui_refused_run_id.png"),
    ]:
        _refused_at_launch(browser, url, data, "new_run", "write_run_spec", config, words, shot)
    assert not (data / "runs" / "r1.yaml").exists()


def test_a_nightly_backfill_that_cannot_act_is_refused_saying_why(ui, browser):
    url, _, data = ui
    from env0_posttrain.spec.runspec import parse_spec, write_spec

    write_spec(parse_spec({"run_id": "noeval", "tasks": {"n_eval": 0}, "suites": [{"name": "seen", "kind": "seen"}]},
                          "noeval"), data / "runs")
    _refused_at_launch(browser, url, data, "teacher_backfill", "launch_teacher_backfill",
                       {"source_run": "noeval", "teachers": ["env0-oracle/oracle@0.5"], "nightly": True},
                       ["nightly: run 'noeval' has no eval split (tasks.n_eval: 0) and no suite marked nightly"],
                       "ui_refused_nightly.png")
    assert not list((data / "runs").glob("noeval--*.yaml"))


def test_a_new_runs_spec_opens_inline_from_the_artifact_server(ui, browser):
    url, artifacts, data = ui
    _launch(browser, url, "new_run", "write_run_spec", {"run_id": "inline", "overrides": SMALL})
    wait(browser, lambda d: "/runs/" in d.current_url, "the run page")
    wait_for_text(browser, ["RUN_SUCCESS", "run 'inline': spec written"], "the new run", PAGE_S)
    open_page(browser, f"{artifacts}/runs/inline.yaml")
    body = wait_for_text(browser, ["run_id: inline", "n_train: 3"], "the spec as text", PAGE_S, "ui_spec_inline.png")
    assert "preset" not in body or "demo" in body


def test_a_broken_spec_fails_its_check_on_the_asset_graph(ui, browser):
    url, _, data = ui
    (data / "runs").mkdir(exist_ok=True)
    bad = data / "runs" / "broken.yaml"
    bad.write_text("run_id: broken\nlora: {lerning_rate: 0.1}\n")
    line = f"{bad}: invalid run spec: lora.lerning_rate (line 2): unknown field"

    def shown(d) -> bool:  # the daemon's sensor ticks every ~15 s; the page is read again until it shows
        open_page(d, f"{url}/assets/task_set?view=checks")
        try:
            WebDriverWait(d, 20, poll_frequency=1, ignored_exceptions=RERENDERED).until(
                lambda x: "spec_files_valid" in body_text(x) and "cannot run" in body_text(x))
            return True
        except Exception:
            return False

    wait(browser, shown, "the failed spec check on task_set", PAGE_S, "ui_spec_check_failed.png")
    body = body_text(browser)
    assert "spec_files_valid" in body and "Failed" in body, body[:2000]
    assert line.split(": invalid")[0] in body or "lerning_rate" in body
    bad.unlink()


def test_a_partition_without_a_spec_is_deleted_by_its_job(ui, browser):
    url, _, data = ui
    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        instance.add_dynamic_partitions("run_id", ["added-by-hand"])  # as the Materialize dialog's "Add a partition"
    _playground(browser, url, "delete_orphan_partitions")
    click_button(browser, "Launch Run")
    wait(browser, lambda d: "/runs/" in d.current_url, "the run page")
    wait_for_text(browser, ["RUN_SUCCESS", "deleted 1 partition(s) without a spec: ['added-by-hand']"],
                  "the orphan deleted", PAGE_S, "ui_orphan_deleted.png")
    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        assert "added-by-hand" not in instance.get_dynamic_partitions("run_id")


def test_a_previewed_nightly_tick_is_tagged_with_today_and_the_ticks_date(ui, browser):
    url, _, data = ui
    from datetime import datetime, timezone

    from env0_posttrain.spec.runspec import parse_spec, write_spec

    write_spec(parse_spec({"run_id": "nightly", "eval": {"nightly": True}}, "nightly"), data / "runs")
    open_page(browser, f"{url}/locations/env0_posttrain/schedules/nightly_eval_schedule")
    click_button(browser, "Preview tick result")
    click_button(browser, "Continue")
    wait_for_text(browser, ["Requested runs (1)", "nightly_eval"], "the previewed run request", PAGE_S,
                  "ui_tick_preview.png")
    before = {r.run_id for r in runs(data)}
    click_button(browser, "Launch all & commit tick result")
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")

    def launched(_) -> dict | None:
        new = [r for r in runs(data) if r.run_id not in before and r.tags.get("env0/nightly")]
        return new[0].tags if new else None

    tags = wait(browser, launched, "the tick's run", PAGE_S, "ui_tick_launched.png")
    assert tags["env0/nightly"] == today, tags  # the date it ran, not the simulated tick's
    assert tags.get("env0/nightly_tick"), tags  # beside the tick's own date
