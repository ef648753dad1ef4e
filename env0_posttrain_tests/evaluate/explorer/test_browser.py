"""The trajectory explorer in a real browser: a tiny real run's report (comparison_report stage) opened from
file:// in headless Debian Chromium via Selenium, from report.html to a base -> adapter flip, both arms' tool
calls and verifier metrics. Screenshots go to test-output/ (gitignored)."""

import logging

import pytest

from env0_posttrain_tests.support.browser import OUT, SKIP_WITHOUT_CHROMIUM, headless_chromium


WAIT_S = 30

pytestmark = [
    *SKIP_WITHOUT_CHROMIUM,
]
selenium = pytest.importorskip("selenium", reason="selenium is not installed")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from env0_posttrain.util.paths import Paths
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.stages.comparison_report import write_report
    from env0_posttrain_tests.support.explorer_run import RUN_ID, write_tiny_run

    root = tmp_path_factory.mktemp("explorer_browser")
    store = write_tiny_run(root)
    res = write_report(StageContext(RUN_ID, store.get_run(RUN_ID), store, Paths(root), logging.getLogger("t")))
    return res


@pytest.fixture(scope="module")
def browser():
    with headless_chromium(1800, 1400) as driver:
        yield driver


def _wait(driver, cond, what: str, shot: str | None = None):
    try:
        return WebDriverWait(driver, WAIT_S, poll_frequency=0.2).until(cond)
    except Exception:
        raise AssertionError(f"{what}; page text: {driver.find_element(By.TAG_NAME, 'body').text[:1500]}") from None
    finally:
        if shot:
            OUT.mkdir(exist_ok=True)
            driver.save_screenshot(str(OUT / shot))


def test_from_the_report_to_a_flipped_task_with_both_arms(report, browser):
    browser.get(report.metadata["report_html"].resolve().as_uri())
    browser.find_element(By.LINK_TEXT, "Open every episode in the trajectory explorer").click()
    rows = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "tr.task-row"), "the task list shows rows")
    total = len(rows)
    assert total == report.metadata["explorer_tasks"] == 6
    Select(browser.find_element(By.ID, "filter-base-adapter")).select_by_value("fail→pass")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.task-row")
    assert 0 < len(rows) < total and report.metadata["flips.fail_to_pass"] == len(rows)
    assert all(r.find_element(By.CSS_SELECTOR, "td.flip").text == "fail→pass" for r in rows)
    OUT.mkdir(exist_ok=True)
    browser.save_screenshot(str(OUT / "explorer_task_list.png"))
    task_id = rows[0].find_element(By.TAG_NAME, "a").text
    rows[0].find_element(By.TAG_NAME, "a").click()
    cols = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "section.arm"), "the task view shows arm columns")
    arms = {c.get_attribute("data-arm"): c for c in cols}
    assert set(arms) == {"base", "sft", "teacher_eval"} and browser.find_element(By.TAG_NAME, "h2").text == task_id
    for arm in ("base", "sft"):
        col = arms[arm]
        calls = [c.text for c in col.find_elements(By.CSS_SELECTOR, ".callname")]
        assert calls and all(c.startswith("→ ") for c in calls), arm
        assert col.find_elements(By.CSS_SELECTOR, "pre.args")  # arguments as JSON
        assert "Verifier: reward" in col.find_element(By.CSS_SELECTOR, ".verifier").text
        assert col.find_elements(By.CSS_SELECTOR, "table.checks td")  # the verifier's per-check metrics
    OUT.mkdir(exist_ok=True)
    browser.save_screenshot(str(OUT / "explorer_task_view.png"))
    # trials are selectable: the adapter's second trial replaces the first in its column
    buttons = arms["sft"].find_elements(By.CSS_SELECTOR, "button.trial")
    assert len(buttons) == 2
    buttons[1].click()
    sft = browser.find_element(By.CSS_SELECTOR, "section.arm[data-arm=sft]")
    assert "on" in sft.find_elements(By.CSS_SELECTOR, "button.trial")[1].get_attribute("class")


def test_a_flip_table_row_opens_its_task(report, browser):
    """Each flip row of report.html deep-links to its task's view."""
    browser.get(report.metadata["report_html"].resolve().as_uri())
    links = [a for a in browser.find_elements(By.CSS_SELECTOR, "table a") if "#task=" in a.get_attribute("href")]
    assert len(links) == report.metadata["flips.fail_to_pass"] + report.metadata["flips.pass_to_fail"]
    task_id = links[-1].text
    links[-1].click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "section.arm"), "the deep link opens the task")
    assert browser.find_element(By.TAG_NAME, "h2").text == task_id


def test_search_and_first_paint(report, browser):
    browser.get(report.metadata["explorer"].resolve().as_uri())
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "tr.task-row"), "the task list shows rows")
    box = browser.find_element(By.ID, "q")
    box.send_keys("mail_send")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.task-row")
    assert rows and all("mail_send" in r.text for r in rows)
    paint = browser.execute_script(
        "return performance.getEntriesByType('paint').map(function (e) { return e.name; })")
    assert "first-contentful-paint" in paint


def test_model_output_is_shown_as_text_never_as_markup(report, browser, tmp_path):
    """HTML in an assistant reply, a tool result, the final answer, the episode's error and an error kind is displayed
    literally: nothing it names becomes an element of the page."""
    from env0_posttrain.evaluate.explorer import write_explorer
    from env0_posttrain.store import Store
    from env0_posttrain_tests.support.explorer_run import RUN_ID

    store = Store(report.metadata["report_html"].parents[4] / "env0.duckdb")
    rid = store.latest_round(RUN_ID, "sft")
    ep = store.load_episodes(rid)[0]
    payload = '<img id="injected" src="x" onerror="document.title=\'pwned\'"><b id="bold">hi</b>'
    messages = [*ep.messages, {"role": "assistant", "content": payload + " (reply)"},
                {"role": "tool", "tool_call_id": "c9", "name": "terminal", "content": payload + " (tool)"}]
    data = ep.model_copy(update={"final_answer": payload, "error": payload + " (error)", "messages": messages,
                                 "error_counts": {payload: 1}})
    copy = Store(tmp_path / "env0.duckdb")
    copy.upsert_run(store.get_run(RUN_ID))
    copy_rid = copy.open_round(RUN_ID, "sft", "m", 1)
    copy.write_episodes(copy_rid, [data])
    copy.finish_round(copy_rid, {})
    info = write_explorer(copy, RUN_ID, tmp_path / "explorer")
    browser.get(info.index_html.resolve().as_uri() + "#task=" + ep.task_id)
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "section.arm"), "the task view opens")
    body = browser.find_element(By.TAG_NAME, "body").text
    assert all(payload + tail in body for tail in ("", " (reply)", " (error)"))
    for fold in browser.find_elements(By.CSS_SELECTOR, "details"):  # tool results are folded
        browser.execute_script("arguments[0].open = true", fold)
    assert payload + " (tool)" in browser.find_element(By.TAG_NAME, "body").text
    assert browser.find_elements(By.ID, "injected") == [] and browser.find_elements(By.ID, "bold") == []
    assert browser.title != "pwned"
