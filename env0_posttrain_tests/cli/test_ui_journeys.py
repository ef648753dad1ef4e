"""A user's journeys through the Dagster UI, clicked in headless Chromium against `env0-posttrain ui` (webserver,
daemon and the artifact server) on a scratch data dir: make a run in the Launchpad (a misspelt teacher refused
naming the field, then the right one), launch it, watch its progress in the run's event log, and open its report
and explorer from the asset's metadata links in one click; and a spec file dropped into data/runs/ that cannot run
failing the spec sensor's tick on the Automation page. The run is shrunk to minutes (8 training tasks, 30 + 12
training steps); every wait is explicit, its timeout only a hang guard for a loaded machine."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from env0_posttrain_tests.support.browser import (PAGE_S, SKIP_WITHOUT_CHROMIUM, body_text, click, click_button,
                                                  open_page, wait, wait_for_text)

pytestmark = [pytest.mark.slow, *SKIP_WITHOUT_CHROMIUM]
selenium = pytest.importorskip("selenium", reason="selenium is not installed")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

RUN_ID = "ui-journey"
RUN_S = 1800  # the whole shrunk run under load (about 5 minutes at load 6 on 2 cores)
OVERRIDES = [
    "tasks.n_train=8", "tasks.n_eval=2", "tasks.seed=3", "tasks.families=[calendar]",
    "student.pretrain_steps=30",
    "student.corpus={short_repeats: 0, copy_drills: 0, repeat_drills: 0, directory_repeats: 0, practice_calls: 0}",
    "lora={r: 8, alpha: 16, learning_rate: 3.0e-2, max_seq_length: 1024, per_device_batch_size: 4, "
    "grad_accumulation: 1, max_steps: 12, logging_steps: 1, save_steps: 6, eval_fraction: 0.0}",
    "eval={trials: 1, max_steps: 2, max_tokens: 16, concurrency: 8}",
]


def _new_run_config(teacher: str) -> str:
    lines = "".join(f"        - {o!r}\n" for o in OVERRIDES)
    return (f"ops:\n  write_run_spec:\n    config:\n      run_id: {RUN_ID}\n      preset: default\n"
            f"      teacher: {teacher}\n      overrides:\n{lines}")


def _launch_new_run(driver, url: str, teacher: str, wait_for_run: bool = True) -> str | None:
    """The new_run job's Launchpad: the config typed into its editor, then Launch Run; the run page's URL. A fresh
    Launchpad's scaffold lacks run_id, so Launch Run is enabled only once the typed config is the one checked."""
    open_page(driver, f"{url}/locations/env0_posttrain/jobs/new_run/playground", fresh=True)
    wait(driver, lambda d: d.execute_script("return document.querySelector('.CodeMirror') !== null"), "the editor")
    driver.execute_script("document.querySelector('.CodeMirror').CodeMirror.setValue(arguments[0])",
                          _new_run_config(teacher))
    click_button(driver, "Launch Run")
    if not wait_for_run:
        return None
    return wait(driver, lambda d: d.current_url if "/runs/" in d.current_url else None, "the run page")


def _ended(driver) -> bool:
    return "RUN_SUCCESS" in body_text(driver) or "RUN_FAILURE" in body_text(driver)


def test_make_launch_watch_and_read_a_run_in_the_ui(ui, browser):
    url, artifacts, data = ui
    # 1. A misspelt teacher is refused at Launch, before a run exists, in one line naming the field.
    _launch_new_run(browser, url, "env0-orcale/oracle", wait_for_run=False)
    wait_for_text(browser, ["teacher.model: litellm cannot route 'env0-orcale/oracle'", "did you mean 'env0-oracle'?"],
                  "the refused spec", PAGE_S, "ui_new_run_refused.png")
    assert "/runs/" not in browser.current_url and not (data / "runs" / f"{RUN_ID}.yaml").exists()
    # 2. The right one: the spec is written and the partition registered.
    _launch_new_run(browser, url, "env0-oracle/oracle@0.9")
    wait_for_text(browser, ["RUN_SUCCESS", f"run '{RUN_ID}': spec written"], "the new run", PAGE_S, "ui_new_run.png")
    assert (data / "runs" / f"{RUN_ID}.yaml").is_file()

    # 3. Launch it: the full_run job's Launchpad, the run's partition picked, Launch Run.
    open_page(browser, f"{url}/locations/env0_posttrain/jobs/full_run/playground", fresh=True)
    picker = "input[placeholder='Partition']"

    def pick(d) -> bool:  # type the run id, take the suggestion; retried if the picker re-renders meanwhile
        field = d.find_element(By.CSS_SELECTOR, picker)
        if field.get_attribute("value") != RUN_ID:
            field.click()
            field.clear()
            field.send_keys(RUN_ID)
        if RUN_ID not in body_text(d):
            return False
        d.find_element(By.CSS_SELECTOR, picker).send_keys(Keys.ENTER)
        return f"partition: {RUN_ID}" in body_text(d)  # the Launchpad's tags show the chosen partition

    wait(browser, pick, "the partition picked")
    click_button(browser, "Launch Run")
    run_url = wait(browser, lambda d: d.current_url.split("?")[0] if "/runs/" in d.current_url else None, "the run")

    # 4. Watch it: the base model's and the adapter's training progress land in the run's event log as they go.
    open_page(browser, f"{run_url}?logs={quote('pre-training:')}")
    wait_for_text(browser, ["base student (qwen3) pre-training: 1/30 steps (3%)"], "base-model progress", RUN_S,
                  "ui_progress_base_model.png")
    open_page(browser, f"{run_url}?logs={quote('LoRA training:')}")
    body = wait_for_text(browser, ["LoRA training: 12/12 steps (100%), loss "], "LoRA progress", RUN_S,
                         "ui_progress_lora.png")
    assert "LoRA training: 1/12 steps (8%)" in body
    open_page(browser, run_url)
    wait(browser, _ended, "the run ended", RUN_S, "ui_run_ended.png")
    assert "RUN_SUCCESS" in body_text(browser), body_text(browser)[-2000:]

    # 5. Read it: the report asset's metadata links open the report and its explorer in one click.
    open_page(browser, f"{url}/assets/comparison_report?partition={RUN_ID}")
    main = browser.current_window_handle
    click(browser, lambda d: next((a for a in d.find_elements(By.TAG_NAME, "a") if a.text.startswith(artifacts)
                                   and a.text.endswith("/report.html")), None), "the report link")
    wait(browser, lambda d: len(d.window_handles) == 2, "the report's tab")
    browser.switch_to.window(next(w for w in browser.window_handles if w != main))
    try:
        wait_for_text(browser, [f"Comparison report: {RUN_ID}", "Verdict"], "the report", PAGE_S, "ui_report.png")
        assert browser.current_url.startswith(f"{artifacts}/artifacts/{RUN_ID}/report/")
        click(browser, lambda d: d.find_element(By.LINK_TEXT, "Open every episode in the trajectory explorer"),
              "the explorer link")
        rows = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "tr.task-row"), "the explorer's tasks")
        assert len(rows) == 2  # the two eval tasks
    finally:
        browser.close()
        browser.switch_to.window(main)


def test_a_spec_file_that_cannot_run_fails_the_sensor_tick_on_the_automation_page(ui, browser):
    url, _, data = ui
    (data / "runs").mkdir(exist_ok=True)
    bad = data / "runs" / "dropped.yaml"
    bad.write_text("run_id: dropped\ntasks:\n  n_trian: 5\n")
    open_page(browser, f"{url}/locations/env0_posttrain/sensors/run_spec_sensor")  # the page polls its ticks
    wait(browser, lambda d: "Failure" in body_text(d), "a failed tick (the daemon ticks every ~15 s)", PAGE_S)
    click(browser, lambda d: next(iter(d.find_elements(By.XPATH, "//*[text()='View']")), None), "the tick's View")
    wait_for_text(browser, [f"{bad}: invalid run spec: tasks.n_trian (line 3): unknown field; did you mean "
                            "`tasks.n_train`?"], "the tick's error", PAGE_S, "ui_sensor_tick_failed.png")
    bad.unlink()
