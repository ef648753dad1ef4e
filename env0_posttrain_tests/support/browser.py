"""Headless Debian Chromium through Selenium, for the browser tests (the Dagster UI, the trajectory explorer), and
what they share: a module's UI on a scratch data dir and its browser (fixtures a test module imports), and on a
page: open one with Dagster's first-visit dialog dismissed, wait for a condition or for texts (explicit waits with
generous hang guards, never sleeps), click what re-renders under the pointer, take a screenshot either way.
Screenshots go to test-output/ (gitignored)."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest

from env0_posttrain_tests.support.webserver import ROOT, env0_ui

OUT = ROOT / "test-output"
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
SKIP_WITHOUT_CHROMIUM = [
    pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed (apt-get install chromium)"),
    pytest.mark.skipif(CHROMEDRIVER is None, reason="chromedriver is not installed (apt-get install chromium-driver)"),
]


PAGE_S = 300  # a page or a one-op job on a loaded machine (only a hang guard)


@contextmanager
def headless_chromium(width: int, height: int) -> Iterator:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def _rerendered() -> tuple[type[Exception], ...]:
    try:
        from selenium.common.exceptions import (ElementClickInterceptedException, NoSuchElementException,
                                                StaleElementReferenceException)
    except ImportError:  # selenium is optional: the browser tests skip without it
        return ()
    return NoSuchElementException, StaleElementReferenceException, ElementClickInterceptedException


# What a page that is still rendering raises at a waiting test: the element was replaced (React re-rendered it), not
# there yet, or covered for a moment. A wait tries again on these, until its hang guard.
RERENDERED = _rerendered()


def body_text(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "body").text


def screenshot(driver, name: str | None) -> None:
    if name:
        OUT.mkdir(exist_ok=True)
        driver.save_screenshot(str(OUT / name))


def open_page(driver, url: str, fresh: bool = False) -> None:
    """Open a Dagster UI page with the first-visit community dialog already dismissed (as a returning user has it);
    `fresh`: with nothing else the UI keeps in the browser (a Launchpad restores the config it was last given)."""
    driver.get(url)
    if fresh:
        driver.execute_script("window.localStorage.clear()")
    driver.execute_script("window.localStorage.setItem('communityNux', '\"1\"')")
    driver.get(url)


def wait_for_text(driver, texts: list[str], what: str, timeout_s: float, shot: str | None = None) -> str:
    """Wait until the page shows every text (`timeout_s` only guards a hang); the page's text, or a failure that says
    which texts are missing and what the page showed."""
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, timeout_s, poll_frequency=0.5, ignored_exceptions=RERENDERED).until(
            lambda d: all(t in body_text(d) for t in texts))
    except Exception:
        pass
    finally:
        screenshot(driver, shot)
    body = body_text(driver)
    missing = [t for t in texts if t not in body]
    assert not missing, f"{what}: missing {missing}; page text: {body[:1500]}"
    return body


@pytest.fixture(scope="module")
def ui(request, tmp_path_factory):
    """`env0-posttrain ui` on a scratch data dir, one per test module: its URL, the artifact server's, the data dir."""
    data = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])
    with env0_ui(data) as (url, artifacts):
        yield url, artifacts, data


@pytest.fixture(scope="module")
def browser():
    with headless_chromium(1600, 1400) as driver:
        yield driver


def _failed_shot() -> str:
    """The failure screenshot's name, after the test that waited (pytest names it in the environment)."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "browser").split(" ")[0].split("::")[-1]
    return f"failed_{test}.png"


def wait(driver, condition: Callable, what: str, timeout_s: float = PAGE_S, shot: str | None = None):
    """Wait for `condition` (tried again while the page re-renders) and return its value; a failure says what, shows
    the page's text and leaves a screenshot named after the test."""
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout_s, poll_frequency=1, ignored_exceptions=RERENDERED).until(condition)
    except Exception as err:
        screenshot(driver, _failed_shot())
        text = body_text(driver)
        raise AssertionError(f"{what} ({type(err).__name__}); page text: {text[:800]} ... {text[-1200:]}") from None
    finally:
        screenshot(driver, shot)


def click(driver, find: Callable, what: str) -> None:
    """Click what `find(driver)` returns once it is there, as often as the page re-renders it under the pointer."""
    def clicked(d) -> bool:
        element = find(d)
        if element is None:
            return False
        element.click()
        return True

    wait(driver, clicked, what)


def click_button(driver, text: str) -> None:
    """Click the enabled button whose text is `text`."""
    from selenium.webdriver.common.by import By

    click(driver, lambda d: next((b for b in d.find_elements(By.TAG_NAME, "button")
                                  if b.text.strip() == text and b.is_enabled()), None), f"an enabled button {text!r}")


def runs(data: Path) -> list:
    """The runs of the UI's instance, read beside it (the test's own instance on the same storage)."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(data / "dagster_home")) as instance:
        return instance.get_runs()
