"""Hostile text and request floods through both doors (a package's scripts, an agent's shell commands): what comes
back reaches a person as text (console lines escaped, the report embedding nothing it did not write) and a flood
of malformed requests is one log line per distinct error, never a traceback per request; the runner goes on."""

from __future__ import annotations

import json
import logging
import re

import pytest

from env0_posttrain.workspace import request_errors
from env0_posttrain_tests.sandbox.test_attacks import (  # noqa: F401 - pytestmark: skipped where nothing is confined
    DOORS,
    _cli,
    _package,
    _runner_still_scores,
    attack,
    pytestmark,
)

HOSTILE = r"![leak](/etc/hostname) <img src=x onerror=alert(1)> \033]0;owned\007\033[2J\033[31mred\r\302\233done"

@pytest.fixture(scope="module")
def task():
    from env0_posttrain.tasks import generate_tasks

    return generate_tasks(0, per_template=1)[0]


FLOOD = """python3 - <<'PY'
import http.client, json
gws = lambda params: json.dumps({"service": "gmail", "method_id": "gmail.users.messages.list", "params": params})
kinds = [("POST", "/_gws", gws("not-a-dict")), ("POST", "/_gws", gws([1])), ("POST", "/_gws", gws([[1, 2, 3]])),
         ("POST", "/_gws", "{not json"), ("POST", "/_gws", "[]"), ("GET", "/gmail/v1/users/%ff/messages?maxResults=x", ""),
         ("PATCH", "/gmail/v1/users/me/labels/%00", "\\x00\\xff"), ("POST", "/gmail/v1/users/me/messages/send", "{}")]
codes = {}
for i in range(300):
    method, path, body = kinds[i % len(kinds)]
    c = http.client.HTTPConnection("127.0.0.1", 9001, timeout=30)
    c.request(method, path, body.encode("utf-8", "surrogateescape"), {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    c.close()
    codes[r.status] = codes.get(r.status, 0) + 1
print("codes", json.dumps(codes, sort_keys=True))
PY"""


@pytest.mark.parametrize("door", DOORS)
def test_a_flood_of_malformed_requests_is_one_line_per_distinct_error(door, tmp_path, task, caplog, monkeypatch):
    errors = request_errors.RequestErrors()
    monkeypatch.setattr(request_errors, "REQUEST_ERRORS", errors)
    with caplog.at_level(logging.DEBUG):
        out, then = attack(door, FLOOD, tmp_path, task, after="curl -s localhost:9001/health")
    codes = {int(k): v for k, v in json.loads(out.split("codes ", 1)[1].splitlines()[0]).items()}
    assert sum(codes.values()) == 300 and '"status":"ok"' in then  # every request answered; the next one too
    assert codes.get(500, 0) == errors.failed  # each failure is counted ...
    lines = [r.getMessage() for r in caplog.records if "a request failed" in r.getMessage()]
    assert len(lines) == len(errors.counts) <= 8  # ... and logged once per distinct error
    assert not [r for r in caplog.records if r.exc_info or r.name.startswith("uvicorn")]  # no traceback per request
    assert sum(len(r.getMessage()) for r in caplog.records) < 8000


def test_a_scripts_control_characters_reach_the_cli_escaped(tmp_path, capsys):
    """solve.sh fails with ESC/BEL/CSI and Markdown on its stderr: the CLI's error line shows them escaped, the reward
    file says so as JSON, and the runner then scores a clean package."""
    pkg = _package(tmp_path, f"printf '{HOSTILE}\\n' >&2\nexit 3", capture=False)
    rc, reward = _cli(pkg, tmp_path / "reward.json")
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("error: "))
    assert rc == 2 and reward["reward"] is None and "exit 3" in reward["verifier_error"]
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", err)
    assert "\\x1b]0;owned\\x07\\x1b[2J" in line and "\\x9b" in line and "![leak](/etc/hostname)" in line
    _runner_still_scores(tmp_path)


@pytest.mark.parametrize("door", DOORS)
def test_what_a_command_prints_is_text_in_the_report(door, tmp_path, task):
    """What a command printed (the shell door: a tool result; the package door: the verifier's error, as an eval
    episode's error) goes into a report: it embeds only its own figures and shows the text escaped."""
    from env0_posttrain.evaluate import ReportInputs, build_report, report_metadata
    from env0_posttrain_tests.support.evaluate import arm_from_counts, make_episode, make_task

    if door == "shell":
        text, _ = attack(door, f"printf '{HOSTILE}\\n'", tmp_path, task)
    else:
        rc, reward = _cli(_package(tmp_path, f"printf '{HOSTILE}\\n' >&2\nexit 3", capture=False), tmp_path / "r.json")
        text = reward["verifier_error"]
    assert "\x1b]0;owned\x07" in text  # the raw bytes came back through the door
    tasks = [make_task(i) for i in range(4)]
    eps = arm_from_counts("base", tasks, 1, 1) + arm_from_counts("sft", tasks, 1, 2)
    hurt = make_episode("sft", tasks[3], 0, False, stop="verifier_error", scored=False,
                        extra_calls=[("terminal", {"command": "x"}, {"output": text})], final_answer=text)
    eps[-1] = hurt.model_copy(update={"error": text})
    out = tmp_path / "report"
    report = build_report(ReportInputs(episodes=eps, tasks=tasks, n_boot=200), out)
    html = (out / "report.html").read_text()
    assert html.count("<img") == len(report.plot_paths) and all(
        s.startswith("data:image/png;base64,") for s in re.findall(r'<img src="([^"]*)"', html))
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    for shown in (html, (out / "report.md").read_text(), report_metadata(report)["markdown_inline"]):
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    _runner_still_scores(tmp_path)
