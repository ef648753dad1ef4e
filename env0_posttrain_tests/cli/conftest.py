"""The browser journeys' fixtures (a module's `env0-posttrain ui` and its headless Chromium), shared from
support/browser.py; a fixture is only set up for a test that names it."""

from env0_posttrain_tests.support.browser import browser, ui  # noqa: F401 - fixtures, found by pytest by name
