"""Attacks on the auth gate of an AUTH_ENABLED package through both doors: a hostile package's solve.sh
(`python -m env0_posttrain.tasks env0 PKG --oracle`) and an agent's command on the shell surface. Without a token the
agent tries to send mail through every port: Gmail's paths on the other services' ports, a `/_gws` call naming Gmail
on them, Gmail's own port, the whole workspace's listener and the gws CLI. Each is refused (404 / 400 elsewhere, 401
where Gmail is served), every refusal leaves an audit event, no mail goes out, and the runner goes on: test.sh (the
next command of the same sandbox) runs, a clean package then scores 1.0, the shell session's next command answers."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from env0_posttrain.spec.runspec import ShellSpec
from env0_posttrain_tests.support.paths import FIXTURES

LIMITS = ShellSpec(timeout_s=30, max_timeout_s=60, output_cap=20000, max_processes=48, max_memory_mb=256)
OTHER_PORTS = ("MOCK_AUTH_URL", "MOCK_SLACK_URL", "MOCK_GCAL_URL", "MOCK_GDOC_URL", "MOCK_GDRIVE_URL",
               "MOCK_STRIPE_URL")
GMAIL_HERE = ("MOCK_GMAIL_URL", "WORKSPACE_URL")


def _containment() -> str | None:
    from env0_posttrain.sandbox.box import containment_problem

    return containment_problem()


pytestmark = pytest.mark.skipif(_containment() is not None, reason=f"no confined sandbox here: {_containment()}")


def attack_script(mark: str) -> str:
    raw = __import__("base64").urlsafe_b64encode(f"To: ap@example.com\r\nSubject: {mark}\r\n\r\n{mark}".encode()).decode()
    send = json.dumps({"raw": raw})
    gws = json.dumps({"service": "gmail", "method_id": "gmail.users.messages.send", "params": {"userId": "me"},
                      "json": {"raw": raw}})
    return f"""
for v in {' '.join(OTHER_PORTS + GMAIL_HERE)}; do
  base="${{!v}}"
  echo "list $v $(curl -s -o /dev/null -w '%{{http_code}}' "$base/gmail/v1/users/me/messages")"
  echo "send $v $(curl -s -o /dev/null -w '%{{http_code}}' -X POST -H 'content-type: application/json' \\
       -d '{send}' "$base/gmail/v1/users/me/messages/send")"
  echo "gws $v $(curl -s -o /dev/null -w '%{{http_code}}' -X POST -H 'content-type: application/json' \\
       -d '{gws}' "$base/_gws")"
done
gws gmail users messages send --params '{{"userId": "me"}}' --json '{send}' >/dev/null 2>&1; echo "cli $?"
"""


def _expect(printed: str) -> None:
    seen = dict(((kind, var), code) for kind, var, code in (line.split() for line in printed.splitlines()
                                                              if line.split()[:1] in (["list"], ["send"], ["gws"])))
    for var in OTHER_PORTS:
        assert (seen[("list", var)], seen[("send", var)], seen[("gws", var)]) == ("404", "404", "400"), (var, printed)
    for var in GMAIL_HERE:
        assert (seen[("list", var)], seen[("send", var)], seen[("gws", var)]) == ("401", "401", "401"), (var, printed)
    assert "cli 1" in printed, printed


def _audited(events: list[dict]) -> None:
    kinds = [e["event_type"] for e in events]
    assert kinds.count("cross_service_request") == 3 * len(OTHER_PORTS), kinds
    assert kinds.count("unauthenticated_request") == 3 * len(GMAIL_HERE) + 1, kinds
    assert "resource_access" not in kinds, kinds


def _gated(tmp: Path, solve: str, test: str | None = None) -> Path:
    """The invoice fixture behind the auth server (`ENV AUTH_ENABLED=1`), with this solve.sh (and test.sh)."""
    pkg = tmp / f"gated-{uuid.uuid4().hex[:8]}"
    shutil.copytree(FIXTURES / "env0_invoice", pkg)
    (pkg / "environment").mkdir()
    (pkg / "environment" / "Dockerfile").write_text("FROM env0-base\nENV AUTH_ENABLED=1\n")
    toml = pkg / "task.toml"
    toml.write_text(toml.read_text().replace('"mock-slack"]', '"mock-slack", "mock-auth"]'))
    (pkg / "solution" / "solve.sh").write_text("#!/usr/bin/env bash\n" + solve + "\nexit 0\n")
    if test is not None:
        (pkg / "tests" / "test.sh").write_text(test)
    return pkg


TEST_SH = """#!/usr/bin/env bash
curl -s "$MOCK_AUTH_URL/_admin/audit_log?limit=1000" > /tmp/audit.json
curl -s "$MOCK_GMAIL_URL/_admin/state" > /tmp/gmail.json
python3 - <<'PY'
import json, pathlib
obs = pathlib.Path("/logs/agent/obs")
json.dump({"reward": 1.0, "obs": obs.read_text() if obs.exists() else "", "audit": json.load(open("/tmp/audit.json")),
           "gmail": open("/tmp/gmail.json").read()}, open("/logs/verifier/reward.json", "w"))
PY
"""


def test_a_hostile_package_cannot_reach_gmail_without_a_token_through_any_port(tmp_path):
    from env0_posttrain.tasks.__main__ import main

    mark = f"gate-attack-{uuid.uuid4().hex[:10]}"
    pkg = _gated(tmp_path, "exec > /logs/agent/obs 2>&1\n" + attack_script(mark), TEST_SH)
    rc = main(["env0", str(pkg), "--oracle", "--reward-file", str(tmp_path / "reward.json")])
    out = json.loads((tmp_path / "reward.json").read_text())
    assert rc == 0 and out["reward"] == 1.0, out  # test.sh, the next command of the same sandbox, ran
    _expect(out["obs"])
    _audited(out["audit"]["events"])
    assert mark not in out["gmail"]  # nothing was sent
    clean = tmp_path / "clean.json"
    assert main(["env0", str(FIXTURES / "env0_invoice"), "--oracle", "--reward-file", str(clean)]) == 0
    assert json.loads(clean.read_text())["reward"] == 1.0  # the runner goes on


def test_an_agents_command_cannot_reach_gmail_without_a_token_through_any_port(tmp_path):
    from env0_posttrain.agent.shell.session import ShellSession
    from env0_posttrain.tasks import build_workspace
    from env0_posttrain.tasks.env0.corpus.importer import import_package
    from env0_posttrain.tasks.task_paths import TaskPaths

    src = tmp_path / "corpus"
    src.mkdir()
    pkg = _gated(src, 'curl -sf "$MOCK_AUTH_URL/.well-known/openid-configuration" >/dev/null')  # one call to import
    paths = TaskPaths(FIXTURES / "env0_root", src)
    task = import_package(pkg, src, env0_root=paths.env0_root)
    ws = build_workspace(task, paths)
    mark = f"gate-attack-{uuid.uuid4().hex[:10]}"
    session = ShellSession(task, ws, LIMITS, paths=paths)
    try:
        printed = session.run(attack_script(mark), 30).text
        assert session.run("echo alive", 10).text.startswith("alive")  # the session goes on
    finally:
        session.close()
    _expect(printed)
    _audited([e.dump() for e in ws.auth.db.audit.values() if not e.details.get("seeded")])
    assert mark not in json.dumps(ws.state("gmail"))
