"""Each env0 port serves its own service on every path, and its own reads answer only reads. `/api/<anything>` on a
port that is not Slack's is that container's 404 (not Slack's `unknown_method`), as is any path in another service's
API; PUT, DELETE, PATCH and POST on `/_admin/state`, `/_admin/diff`, `/_admin/action_log` and `/health` are 405 with
an Allow header, and move nothing. Tried in process on every port, then through both doors: a hostile package's
solve.sh and an agent's command on the shell surface, after which the runner goes on."""

from __future__ import annotations

import json
import shutil
import uuid

import pytest

from env0_posttrain.spec.runspec import ShellSpec
from env0_posttrain.tasks.env0.serve.server import Env0Surface
from env0_posttrain.tasks.env0.services import PREFIXES, SERVICES, WORKSPACE
from env0_posttrain.workspace.environment import Workspace
from env0_posttrain_tests.support.paths import FIXTURES

READS = ("/_admin/state", "/_admin/diff", "/_admin/action_log", "/health")
WRITES = ("PUT", "DELETE", "PATCH", "POST")
NOT_SLACK = [p for p, s in PREFIXES.items() if s != "slack"]
FOREIGN = {"/api/chat.postMessage": "slack", "/api/no.such.method": "slack", "/gmail/v1/users/me/no-such-thing": "gmail",
           "/calendar/v3/no/such/thing": "calendar", "/drive/v3/no/such/thing": "drive"}


def _send(surface: Env0Surface, prefix: str, verb: str, path: str, body: bytes = b"") -> tuple[int, dict, bytes]:
    status, headers, payload = surface.respond(prefix, verb, path, b"", [(b"content-type", b"application/json")], body)
    return status, {k.decode(): v.decode() for k, v in headers}, payload


def test_a_port_answers_another_services_paths_with_its_404_and_audits_them():
    ws = Workspace.seeded(0)
    surface = Env0Surface(ws)
    mark = f"port-attack-{uuid.uuid4().hex[:8]}"
    body = json.dumps({"channel": "general", "text": mark}).encode()
    refused = 0
    for prefix, svc in PREFIXES.items():
        for path, owner in FOREIGN.items():
            if owner == svc:
                continue  # its own API answers (its own 404, unknown_method, or the method)
            status, _, payload = _send(surface, prefix, "POST", path, body)
            assert (status, json.loads(payload)) == (404, {"detail": "Not Found"}), (prefix, path, payload)
            refused += 1
    # Slack's port keeps Slack's answer; the whole workspace's listener serves every API
    assert json.loads(_send(surface, "slack", "POST", "/api/no.such.method")[2])["error"] == "unknown_method"
    assert json.loads(_send(surface, WORKSPACE.prefix, "POST", "/api/no.such.method")[2])["error"] == "unknown_method"
    events = [e for e in ws.auth.db.audit.values() if e.event_type == "cross_service_request"]
    assert len(events) == refused and {e.details["port"] for e in events} == set(PREFIXES)
    assert mark not in json.dumps(ws.state("slack"))  # nothing was posted through another port


@pytest.mark.parametrize("prefix", [*PREFIXES, WORKSPACE.prefix])
def test_a_write_method_on_a_read_is_405_with_allow_and_moves_nothing(prefix):
    ws = Workspace.seeded(0)
    surface = Env0Surface(ws)
    before = ws.state_hash()
    for path in READS if prefix != WORKSPACE.prefix else ("/health",):
        for verb in WRITES:
            status, headers, payload = _send(surface, prefix, verb, path, b'{"users": {}}')
            assert (status, headers.get("allow"), json.loads(payload)) == (405, "GET, HEAD", {
                "detail": "Method Not Allowed"}), (prefix, path, verb)
        assert _send(surface, prefix, "GET", path)[0] == 200
    assert ws.state_hash() == before


def _containment() -> str | None:
    from env0_posttrain.sandbox.box import containment_problem

    return containment_problem()


def _confined() -> pytest.MarkDecorator:
    problem = _containment() or (None if shutil.which("curl") else "no curl")
    return pytest.mark.skipif(problem is not None, reason=f"no confined sandbox with curl here: {problem}")


OTHER = [s.env[0] for s in SERVICES if s.ours != "slack"]
ALL = [s.env[0] for s in SERVICES]


def attack_script(mark: str) -> str:
    post = json.dumps({"channel": "general", "text": mark})
    return f"""
for v in {' '.join(OTHER)}; do
  base="${{!v}}"
  echo "post $v $(curl -s -o /dev/null -w '%{{http_code}}' -X POST -H 'content-type: application/json' -d '{post}' "$base/api/chat.postMessage")"
  echo "unknown $v $(curl -s -w ' %{{http_code}}' "$base/api/no.such.method" | tr -d ' ')"
done
for v in {' '.join(ALL)}; do
  base="${{!v}}"
  for m in {' '.join(WRITES)}; do
    echo "admin $v $m $(curl -s -o /dev/null -w '%{{http_code}}:%header{{allow}}' -X $m -d '{{}}' "$base/_admin/state" | tr -d ' ')"
  done
done
"""


def _expect(printed: str) -> None:
    lines = [line.split() for line in printed.splitlines() if line.split()[:1] in (["post"], ["unknown"], ["admin"])]
    assert len(lines) == 2 * len(OTHER) + len(WRITES) * len(ALL), printed
    for words in lines:
        if words[0] == "post":
            assert words[2] == "404", words
        elif words[0] == "unknown":
            assert words[2] == '{"detail":"NotFound"}404', words
        else:
            assert words[3] == "405:GET,HEAD", words


LIMITS = ShellSpec(timeout_s=30, max_timeout_s=60, output_cap=20000, max_processes=48, max_memory_mb=256)
TEST_SH = """#!/usr/bin/env bash
curl -s "$MOCK_SLACK_URL/_admin/state" > /tmp/slack.json
python3 - <<'PY'
import json, pathlib
obs = pathlib.Path("/logs/agent/obs")
json.dump({"reward": 1.0, "obs": obs.read_text() if obs.exists() else "", "slack": open("/tmp/slack.json").read()},
          open("/logs/verifier/reward.json", "w"))
PY
"""


@_confined()
def test_a_hostile_package_reaches_no_other_service_and_writes_no_admin_read(tmp_path):
    from env0_posttrain.tasks.__main__ import main

    mark = f"port-attack-{uuid.uuid4().hex[:10]}"
    pkg = tmp_path / "hostile"
    shutil.copytree(FIXTURES / "env0_invoice", pkg)
    (pkg / "solution" / "solve.sh").write_text("#!/usr/bin/env bash\nexec > /logs/agent/obs 2>&1\n"
                                               + attack_script(mark) + "\nexit 0\n")
    (pkg / "tests" / "test.sh").write_text(TEST_SH)
    rc = main(["env0", str(pkg), "--oracle", "--reward-file", str(tmp_path / "reward.json")])
    out = json.loads((tmp_path / "reward.json").read_text())
    assert rc == 0 and out["reward"] == 1.0, out  # test.sh, the next command of the same sandbox, ran
    _expect(out["obs"])
    assert mark not in out["slack"]
    clean = tmp_path / "clean.json"
    assert main(["env0", str(FIXTURES / "env0_invoice"), "--oracle", "--reward-file", str(clean)]) == 0
    assert json.loads(clean.read_text())["reward"] == 1.0  # the runner goes on


@_confined()
def test_an_agents_command_reaches_no_other_service_and_writes_no_admin_read(tmp_path):
    from env0_posttrain.agent.shell.session import ShellSession
    from env0_posttrain.tasks import build_workspace
    from env0_posttrain.tasks.env0.corpus.importer import import_package
    from env0_posttrain.tasks.task_paths import TaskPaths

    src = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "env0_invoice", src / "env0_invoice")
    paths = TaskPaths(FIXTURES / "env0_root", src)
    task = import_package(src / "env0_invoice", src, env0_root=paths.env0_root)
    ws = build_workspace(task, paths)
    before = ws.state_hash("slack")
    mark = f"port-attack-{uuid.uuid4().hex[:10]}"
    session = ShellSession(task, ws, LIMITS, paths=paths)
    try:
        printed = session.run(attack_script(mark), 60).text
        assert session.run("echo alive", 10).text.startswith("alive")  # the session goes on
    finally:
        session.close()
    _expect(printed)
    assert mark not in json.dumps(ws.state("slack"))
    events = [e for e in ws.auth.db.audit.values() if e.event_type == "cross_service_request"]
    assert len(events) == 2 * len(OTHER), [e.details for e in events]
    assert ws.state_hash("slack") == before  # no Slack write went through, whatever the port
