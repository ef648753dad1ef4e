"""Helpers shared by tests in several folders (no tests here): builders, live servers, a headless browser."""
