"""What reaches a person is inert: hostile text from an episode (its error, messages, tool results, a task id) is
text in report.md, report.html and the Dagster metadata, the report embeds only the figures it wrote, control
characters are escaped on the console, and a service logs a failing request once per distinct error."""

from __future__ import annotations

import asyncio
import base64
import errno
import logging
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from env0_posttrain.evaluate import ReportInputs, build_report, report_metadata
from env0_posttrain.util.console import EscapeControls, TqdmHandler, printable
from env0_posttrain.util.markdown_table import md_table, md_text
from env0_posttrain.workspace.request_errors import RequestErrors, contained
from env0_posttrain_tests.support.evaluate import arm_from_counts, make_episode, make_task

ESC_BEL = "\x1b]0;owned\x07\x1b[2J\x1b[1;31mred\r\x9b\u202eevil"


def hostile(secret_png: Path) -> str:
    """Markdown and HTML an agent's output (echoed by a verifier) or a package could carry."""
    return (f"![leak]({secret_png}) ![gone](/no/such/dir/x.png) <img src=\"file:///etc/passwd\"> "
            f"[click](javascript:alert(1)) [host](file:///etc/passwd) <script>alert(1)</script> `code` *em* "
            f"http://evil.example/x www.evil.example &amp; | pipe\nsecond line {ESC_BEL}")


def _html(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


_md_chars = st.text(alphabet=st.sampled_from(list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\nabxyz019é→\u2028\x1b\x07\r\x00")),
                    max_size=40)


@settings(max_examples=300, deadline=None)
@given(_md_chars)
def test_md_text_renders_as_exactly_its_text(text):
    """In a paragraph after a label and in a table cell, the rendered HTML is the text itself, escaped: no tag, link,
    image, emphasis or entity comes out of it."""
    expected = printable(" ".join(re.split(r"[\r\n\u2028\u2029]+", text)))
    para = _html("label: " + md_text(text))
    assert para == "<p>" + _escaped(("label: " + expected).rstrip(" \t")) + "</p>\n"
    cell = _html(md_table(["h"], [[text]]))
    assert re.findall(r"<td[^>]*>(.*?)</td>", cell, re.S) == [_escaped(expected.strip(" \t"))]


def test_the_report_embeds_only_its_own_figures_whatever_an_episode_says(tmp_path):
    """An episode's error (unscored row), an error kind and a task id carry Markdown images of a host file and of a
    missing path, raw HTML and links: the report builds, report.html inlines exactly its own figures, the host file
    is read by nobody, and the text is shown as written in report.md, report.html and the Dagster metadata."""
    secret = tmp_path / "host-secret.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\nHOST-SECRET-BYTES-7f3a")
    payload = hostile(secret)
    tasks = [make_task(i) for i in range(6)]
    evil = tasks[0].model_copy(update={"id": "evil ![t](" + str(secret) + ") <b>id</b>"})
    tasks[0] = evil
    eps = arm_from_counts("base", tasks, 2, 3, shuffle_seed=1) + arm_from_counts("sft", tasks, 2, 8, shuffle_seed=2)
    broken = make_episode("sft", evil, 0, False, stop="verifier_error", scored=False)
    eps[next(i for i, e in enumerate(eps) if e.arm == "sft" and e.task_id == evil.id and e.trial == 0)] = \
        broken.model_copy(update={"error": payload, "error_counts": {"![k](" + str(secret) + ")": 1}})
    out = tmp_path / "report"
    report = build_report(ReportInputs(episodes=eps, tasks=tasks, n_boot=200, explorer="explorer/index.html"), out)

    html = (out / "report.html").read_text()
    srcs = re.findall(r'<img src="([^"]*)"', html)
    assert len(srcs) == len(report.plot_paths) and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert {base64.b64decode(s.split(",", 1)[1]) for s in srcs} == {Path(p).read_bytes() for p in report.plot_paths.values()}
    assert "HOST-SECRET" not in html and base64.b64encode(secret.read_bytes()).decode()[:40] not in html
    assert "<script" not in html and "<b>" not in html and 'href="javascript' not in html and 'href="file' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "[click](javascript:alert(1))" in html
    links = re.findall(r'<a href="([^"]*)"', html)
    assert links and all(h.startswith("explorer/index.html") for h in links)  # only the project's own links
    md = (out / "report.md").read_text()
    assert "\\!" not in md and "!\\[leak\\](" in md and "\\<script>" in md
    assert "\x1b" not in md and "\\\\x1b\\]0;owned" in md  # report.md is read in terminals too
    meta = report_metadata(report)
    inline = _html(meta["markdown_inline"])
    assert len(re.findall(r"<img ", inline)) == len(report.plot_paths) and "HOST-SECRET" not in inline
    assert "&lt;img src=&quot;file:///etc/passwd&quot;&gt;" in inline


def test_a_missing_or_foreign_image_in_the_markdown_is_text_not_a_read(tmp_path):
    from env0_posttrain.evaluate.render import render_html

    own = tmp_path / "plots" / "a.png"
    own.parent.mkdir()
    own.write_bytes(b"\x89PNG own")
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"SECRET")
    markdown = f"![a](plots/a.png)\n\n![s]({secret})\n\n![m](/no/such.png)\n\n![r](secret.png)\n"
    html = render_html(markdown, tmp_path, "t", {"a": str(own)})
    assert html.count("<img") == 1 and base64.b64encode(b"\x89PNG own").decode() in html
    assert base64.b64encode(b"SECRET").decode() not in html and f"![s]({secret})" in html and "![m](/no/such.png)" in html


def test_printable_escapes_every_control_but_tab_and_newline():
    out = printable("a\tb\nc" + ESC_BEL + "\x00\x7f")
    assert out == "a\tb\nc\\x1b]0;owned\\x07\\x1b[2J\\x1b[1;31mred\\x0d\\x9b\\u202eevil\\x00\\x7f"
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", out)


def test_console_lines_show_control_characters_escaped(capsys):
    """The CLI's log handler, the compact Dagster console and the --verbose one."""
    record = logging.LogRecord("env0_posttrain.x", logging.WARNING, __file__, 1, "script said %s", (ESC_BEL,), None)
    handler = TqdmHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.emit(record)
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b]0;owned\\x07" in err
    try:
        raise RuntimeError("boom " + ESC_BEL)
    except RuntimeError:
        import sys

        exc_record = logging.LogRecord("x", logging.ERROR, __file__, 1, "%s", ("m\x1bm",), sys.exc_info())
    assert EscapeControls().filter(exc_record) and exc_record.getMessage() == "m\\x1bm"
    assert "\x1b" not in exc_record.exc_text and "boom \\x1b]0;owned" in exc_record.exc_text


def test_a_failed_steps_error_line_shows_control_characters_escaped():
    import dagster as dg

    from env0_posttrain.orchestration.failures import step_failures

    @dg.asset
    def hostile_step() -> None:
        raise ValueError("exit 1: " + ESC_BEL)

    result = dg.materialize([hostile_step], raise_on_error=False)
    (failure,) = step_failures(result)
    text = "\n".join(failure.lines)
    assert "\x1b" not in text and "\x07" not in text and "\\x1b]0;owned\\x07" in text


def test_an_operating_error_line_shows_control_characters_escaped(capsys):
    import typer

    from env0_posttrain.cli.errors import OperatingErrors

    app = typer.Typer(cls=OperatingErrors)

    @app.command()
    def full() -> None:
        raise OSError(errno.ENOSPC, "No space left on device " + ESC_BEL)

    @app.command()
    def other() -> None:
        pass

    with pytest.raises(SystemExit) as exit_:
        app(["full"], standalone_mode=True)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "the disk is full" in err and "\x1b" not in err and "\\x1b" in err


def _call(app, n: int = 1) -> list[int]:
    async def one() -> int:
        sent: list[dict] = []

        async def receive() -> dict:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict) -> None:
            sent.append(message)

        await app({"type": "http", "method": "GET", "path": "/", "headers": []}, receive, send)
        return next(m["status"] for m in sent if m["type"] == "http.response.start")

    async def many() -> list[int]:
        return [await one() for _ in range(n)]

    return asyncio.run(many())


def test_a_failing_request_is_one_line_per_distinct_error_and_the_lines_are_capped(caplog):
    errors = RequestErrors(cap=3)
    kinds = [KeyError, ValueError, TypeError, ZeroDivisionError, LookupError]
    state = {"k": 0}

    async def broken(scope, receive, send):
        raise kinds[state["k"]]("bad request \x1b[2J" + "x" * 500)

    app = contained(broken, "gmail", errors)
    with caplog.at_level(logging.WARNING):
        for k in range(len(kinds)):
            state["k"] = k
            assert _call(app, 40) == [500] * 40
    lines = [r.getMessage() for r in caplog.records]
    assert errors.failed == 200 and sum(errors.counts.values()) == 120 and errors.unlisted == 80
    assert len(lines) == 4 and not [r for r in caplog.records if r.exc_info]  # 3 kinds, then one "counted" line
    assert all("\x1b" not in x and len(x) < 400 for x in lines) and "counted, not logged" in lines[-1]
    assert lines[0].startswith("gmail: a request failed (answered 500): KeyError") and "test_inert_text.py:" in lines[0]


def test_a_request_that_breaks_after_answering_is_counted_not_answered_twice():
    errors = RequestErrors()

    async def late(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
        raise RuntimeError("after the answer")

    assert _call(contained(late, "slack", errors)) == [200] and errors.failed == 1


def test_the_verbose_console_prints_control_characters_escaped(capfd):
    """`--verbose`'s console: Dagster's colored logger with the escaping filter."""
    import dagster as dg

    from env0_posttrain.defs.console_logger import verbose_console_logger

    @dg.asset
    def talks(context) -> None:
        context.log.info("script said " + ESC_BEL)

    job = dg.Definitions(assets=[talks], loggers={"console": verbose_console_logger}).resolve_implicit_global_asset_job_def()
    assert job.execute_in_process(run_config={"loggers": {"console": {"config": {"log_level": "DEBUG"}}}}).success
    err = capfd.readouterr().err
    assert "script said \\x1b]0;owned\\x07" in err and "\x1b]0;owned" not in err and "\x07" not in err
