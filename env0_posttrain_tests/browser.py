"""Headless Debian Chromium through Selenium, for the browser tests (the Dagster UI, the trajectory explorer).
Screenshots go to test-output/ (gitignored)."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from typing import Iterator

import pytest

from env0_posttrain_tests.webserver import ROOT

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
