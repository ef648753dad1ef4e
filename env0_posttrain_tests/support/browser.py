"""Headless Debian Chromium through Selenium, for the browser tests (the Dagster UI, the trajectory explorer), and
what they share on a page: open one with Dagster's first-visit dialog dismissed, wait for texts (explicit waits
with generous hang guards, never sleeps), take a screenshot either way. Screenshots go to test-output/
(gitignored)."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from typing import Iterator

import pytest

from env0_posttrain_tests.support.webserver import ROOT

OUT = ROOT / "test-output"
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
SKIP_WITHOUT_CHROMIUM = [
    pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed (apt-get install chromium)"),
    pytest.mark.skipif(CHROMEDRIVER is None, reason="chromedriver is not installed (apt-get install chromium-driver)"),
]


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
