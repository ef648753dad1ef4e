"""Attacks on the verdict through both doors a package's verifier has: the CLI (`python -m env0_posttrain.tasks env0 PKG
--oracle --reward-file F`, in this process) and an episode of a round, judged by the imported task's test.sh. The
verifier writes NaN (an empty check list's `0/0`), inf, "1", true, 2.0, a huge number, a word, null or nothing, or it
crashes or times out. Each is a verifier error naming the value, never a clamped 1.0; the episode is stored as
unscored, fails, and is worth -1 (a tripped safety gate's reward) to GRPO, while the SFT reward floor never admits it;
the round's counts add up (stored + failed = played) and a clean package still scores 1.0 after each attack."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from types import SimpleNamespace
from collections import defaultdict

import pytest

from env0_posttrain_tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "env0_invoice"
ENV0_ROOT = FIXTURES / "env0_root"
pytestmark = pytest.mark.skipif(shutil.which("curl") is None or shutil.which("bash") is None,
                                reason="env0 packages' scripts need bash and curl")

# what the hostile verifier leaves in reward.json (None: nothing) -> what the verifier error must say
WRITES = {
    "nan": ('{"reward": NaN}', "nan is not a finite number"),
    "infinity": ('{"reward": -Infinity}', "-inf is not a finite number"),
    "the string inf": ('{"reward": "inf"}', "'inf' is not a number (str)"),
    "the string 1": ('{"reward": "1"}', "'1' is not a number (str)"),
    "true": ('{"reward": true}', "True is not a number (bool)"),
    "2.0": ('{"reward": 2.0}', "2.0 is outside [-1, 1]"),
    "huge": ('{"reward": 1e308}', "1e+308 is outside [-1, 1]"),
    "huge int": ('{"reward": 1' + "0" * 400 + "}", "is not a finite number"),
    "a word": ('{"reward": "passed"}', "'passed' is not a number (str)"),
    "null": ('{"reward": null}', "None is not a number"),
    "nothing": (None, "wrote no reward"),
}
BREAKS = {"crash": ("echo verifier exploded >&2\nexit 3", "exit 3: verifier exploded"),
          "timeout": ("sleep 30", "timed out after 1 s")}


def _hostile(dst: Path, case: str) -> Path:
    """The clean fixture whose tests/test.sh does the attack `case` (after reading the services as a verifier does)."""
    shutil.copytree(FIXTURE, dst)
    head = "#!/usr/bin/env bash\ncurl -sf \"${MOCK_GMAIL_URL:-http://localhost:9001}/_admin/state\" > /dev/null\n"
    if case in BREAKS:
        body = BREAKS[case][0] + "\n"
        if case == "timeout":
            toml = dst / "task.toml"
            toml.write_text(toml.read_text().replace("[verifier]\ntimeout_sec = 60", "[verifier]\ntimeout_sec = 1"))
    else:
        text = WRITES[case][0]
        body = "mkdir -p /logs/verifier\n" + (f"printf '%s' '{text}' > /logs/verifier/reward.json\n" if text else "")
    (dst / "tests" / "test.sh").write_text(head + body + "exit 0\n" if case not in BREAKS else head + body)
    return dst


def _expected(case: str) -> tuple[str, str]:
    """(the step, the words) the verifier error must name."""
    if case in BREAKS:
        return "run tests/test.sh", BREAKS[case][1]
    return "read reward", WRITES[case][1]


def _cli(pkg: Path, out: Path, *oracle: str) -> tuple[int, dict]:
    from env0_posttrain.tasks.__main__ import main

    rc = main(["env0", str(pkg), *oracle, "--reward-file", str(out)])
    return rc, json.loads(out.read_text())


@pytest.mark.parametrize("case", [*sorted(WRITES), *sorted(BREAKS)])
def test_the_cli_door_writes_a_verifier_error_naming_the_value_never_a_reward(case, tmp_path, capsys):
    # the agent does nothing (no --oracle): a verifier averaging over nothing is the attack
    rc, body = _cli(_hostile(tmp_path / "hostile", case), tmp_path / "reward.json")
    step, words = _expected(case)
    assert rc == 2 and body["reward"] is None, body  # the reward file says "no verdict", never a clamped 1.0
    assert body["verifier_error"].startswith(step + ":") and words in body["verifier_error"], body
    assert json.loads(capsys.readouterr().out)["reward"] is None
    if case in BREAKS:  # the runner goes on after a verifier it had to stop (the other cases end as every run does)
        rc, clean = _cli(FIXTURE, tmp_path / "clean.json", "--oracle")
        assert (rc, clean["reward"]) == (0, 1.0), clean


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from env0_posttrain.tasks.env0.corpus.importer import import_package

    src = tmp_path_factory.mktemp("corpus")
    shutil.copytree(FIXTURE, src / "env0_invoice")
    return src, import_package(src / "env0_invoice", src, env0_root=ENV0_ROOT)


def test_import_refuses_a_package_whose_verifier_writes_nan(corpus):
    from env0_posttrain.tasks.env0.corpus.importer import import_package
    from env0_posttrain.tasks.env0.package.load import Env0Error

    src, _ = corpus
    pkg = _hostile(src / f"nan-{uuid.uuid4().hex[:6]}", "nan")
    with pytest.raises(Env0Error, match="nan is not a finite number") as err:
        import_package(pkg, src, env0_root=ENV0_ROOT)  # its oracle would have been judged 1.0 by the clamp
    assert err.value.step == "read reward"


def _as_task(clean, src: Path, pkg: Path):
    """The imported clean task, pointing at `pkg` (its verifier turned hostile after import): what an episode meets when
    a verifier misbehaves on an end state the import's oracle and no-op runs did not reach."""
    from env0_posttrain.tasks.env0.package.files import package_sha256

    items = {**clean.recipe.items, "package": pkg.name, "sha256": package_sha256(pkg)}
    return clean.model_copy(update={"id": f"env0-{pkg.name}", "recipe": clean.recipe.model_copy(update={"items": items})})


ROUND = ("nan", "nothing", "crash", "timeout")  # every value goes through the CLI door above


def test_a_round_stores_each_bad_verdict_as_unscored_worth_the_minimum_to_grpo_and_to_the_sft_floor(corpus, monkeypatch):
    from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync
    from env0_posttrain.agent.environment import WorkspaceEnv
    from env0_posttrain.evaluate.metrics import arm_metrics
    from env0_posttrain.sft.curation import CurationReport, select_rows
    from env0_posttrain.sft.results import results_row
    from env0_posttrain.spec.runspec import EvalSpec, RLSpec, SFTDataPolicy
    from env0_posttrain.tasks.reward import optimiser_reward
    from env0_posttrain.tasks.task_paths import TaskPaths
    from env0_posttrain.train.grpo import TASK_KEY, HarnessRollouts, verifier_reward

    src, clean = corpus
    hostile = {case: _as_task(clean, src, _hostile(src / f"{case.replace(' ', '-')}-{uuid.uuid4().hex[:6]}", case))
               for case in ROUND}
    tasks = {t.id: t for t in [clean, *hostile.values()]}
    eps: list = []
    summary = run_rollouts_sync(list(tasks.values()), "teacher", 1, oracle_endpoint(skill=1.0),
                                AgentSettings(max_steps=40, concurrency=2), "attack", set(), eps.append, progress=False,
                                env=WorkspaceEnv(TaskPaths(ENV0_ROOT, src)))
    # the round goes on: every episode played is stored, once, and counted
    assert summary.played == len(tasks) == summary.completed == len(eps) == len({e.key for e in eps}), summary
    assert summary.completed + summary.counted_failed == summary.played and summary.counted_failed == 0
    by_task = {e.task_id: e for e in eps}
    assert by_task[clean.id].passed and by_task[clean.id].reward == 1.0
    for case, task in hostile.items():
        ep = by_task[task.id]
        step, words = _expected(case)
        assert ep.stop_condition == "verifier_error" and ep.verifier is None, (case, ep.stop_condition, ep.error)
        assert step in ep.error and words in ep.error, (case, ep.error)
        assert not ep.passed and ep.reward == -1.0 and optimiser_reward(ep, task) == -1.0
    # every pass rate fails them, and the counts name them as unscored
    m = arm_metrics("teacher", eps)
    assert m.pass_rate.successes == 1 and m.n_unscored == len(hostile) and m.mean_reward < 0
    assert summary.passed == 1 and summary.unscored == len(hostile)

    # GRPO: the reward rollout_func hands TRL, and the reward function TRL calls
    rollouts = HarnessRollouts(tasks, RLSpec(), EvalSpec(), SimpleNamespace(eos_token_id=0), "attack")
    monkeypatch.setattr(rollouts, "play", lambda model, task_ids: [by_task[t] for t in task_ids])
    trainer = SimpleNamespace(model=None, accelerator=SimpleNamespace(unwrap_model=lambda m: m),
                              _metrics={"train": defaultdict(list)})
    order = list(tasks)
    out = rollouts([[{"role": "user", "content": "x", TASK_KEY: t}] for t in order], trainer)
    assert out["env0_reward"] == [1.0 if t == clean.id else -1.0 for t in order]
    assert verifier_reward([], [], env0_reward=out["env0_reward"]) == out["env0_reward"]
    with pytest.raises(ValueError, match=r"env0_reward\[1\]: nan is not a finite number"):
        verifier_reward([], [], env0_reward=[1.0, float("nan")])

    # SFT: even the lowest reward floor admits no unscored episode
    rows = [(i, results_row(ep, tasks[ep.task_id])) for i, ep in enumerate(eps, start=1)]
    report = CurationReport()
    kept = select_rows(rows, SFTDataPolicy(min_reward=-1.0), report)
    assert [row.info.task_id for _, row in kept] == [clean.id]
    assert sum(report.skipped.values()) == len(hostile)
