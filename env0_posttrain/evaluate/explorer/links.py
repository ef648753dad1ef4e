"""Links into the explorer from elsewhere in the report folder."""

from __future__ import annotations

from urllib.parse import quote

PAGE = "explorer/index.html"  # the explorer's page, relative to the report folder


def task_href(task_id: str, suite: str | None = None, page: str = PAGE) -> str:
    """A deep link to one task's view (suite: where one task id is in several suites; else the first)."""
    return f"{page}#task={quote(task_id, safe='')}" + (f"&suite={quote(suite, safe='')}" if suite else "")
