"""The repository and the suite's fixtures, for a test at any depth of the folders that mirror the package."""

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures"
REPO = TESTS.parent
