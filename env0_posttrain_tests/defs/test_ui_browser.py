"""The Dagster web UI in a real browser: the webserver on 127.0.0.1 with a scratch DAGSTER_HOME (the
repo's dagster.yaml, one registered run partition, a teacher backfill sent to its GraphQL API), headless
Debian Chromium driven by Selenium.
Screenshots go to test-output/ (gitignored)."""

import shutil

import pytest

from env0_posttrain_tests.support.browser import OUT, SKIP_WITHOUT_CHROMIUM, headless_chromium, open_page, wait_for_text

from env0_posttrain_tests.support.webserver import ROOT, dagster_webserver

RUN_ID = "ui-browser-run"
NEW_TEACHER = "openai/gpt-4o-mini"
WAIT_S = 60

pytestmark = [
    pytest.mark.slow,
    *SKIP_WITHOUT_CHROMIUM,
]
selenium = pytest.importorskip("selenium", reason="selenium is not installed")

from env0_posttrain.defs.assets import RUN_ASSETS  # noqa: E402
from env0_posttrain.spec.optional_stages import optional_assets  # noqa: E402

ASSETS = [a.key.to_user_string() for a in RUN_ASSETS]  # every node of the graph, however many it has

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import dagster as dg

    from env0_posttrain.orchestration.backfill import backfill_teachers
    from env0_posttrain.defs.partitions import run_partitions
    from env0_posttrain.util.paths import Paths
    from env0_posttrain.spec.runspec import RunSpec, write_spec

    tmp = tmp_path_factory.mktemp("ui")
    data = tmp / "data"
    home = data / "dagster_home"  # the data dir's own instance: backfill checks the webserver serves it
    home.mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    write_spec(RunSpec(run_id=RUN_ID), data / "runs")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions(run_partitions.name, [RUN_ID])

    with dagster_webserver(home, env={"ENV0_DATA_DIR": str(data)}) as url:
        backfill = backfill_teachers(Paths.from_env(data), RUN_ID, [NEW_TEACHER], url=url)  # as the CLI sends it
        yield url, backfill


@pytest.fixture(scope="module")
def browser():
    with headless_chromium(3800, 3000) as driver:
        yield driver


def _wait_for_text(driver, texts: list[str], what: str, shot: str | None = None) -> str:
    return wait_for_text(driver, texts, what, WAIT_S, shot)


def test_asset_graph_shows_every_asset(server, browser):
    url, _ = server
    open_page(browser, f"{url}/asset-groups")
    _wait_for_text(browser, ["data", "training", "evaluation"], "asset groups")
    # The global lineage starts with its three groups collapsed: expand all (the UI's Alt+E shortcut).
    ActionChains(browser).key_down(Keys.ALT).send_keys("e").key_up(Keys.ALT).perform()
    body = _wait_for_text(browser, ASSETS, "global asset lineage", "ui_asset_graph.png")
    assert body.count("2 partitions") == len(ASSETS)  # every node counts the run and its teacher clone
    assert (OUT / "ui_asset_graph.png").stat().st_size > 10_000


def test_asset_partitions_show_the_run_partitions(server, browser):
    url, backfill = server
    open_page(browser, f"{url}/assets/task_set?view=partitions")
    body = _wait_for_text(browser, [RUN_ID, *backfill.run_ids], "task_set partitions", "ui_task_set_partitions.png")
    assert "Missing (2)" in body


def test_teacher_backfill_is_listed(server, browser):
    url, backfill = server
    open_page(browser, f"{url}/runs/b/{backfill.backfill_id}")
    # the backfill holds the run's own assets: the optional stages its spec lacks (rl, onpolicy) are left out
    run_assets = [a for a in ASSETS if a not in optional_assets()]
    texts = [backfill.backfill_id, *backfill.run_ids, "In progress", *run_assets]
    body = _wait_for_text(browser, texts, "backfill page", "ui_teacher_backfill.png")
    assert not any(a in body for a in optional_assets())
    assert "backfill daemon is not running" in body  # this test starts only the webserver
