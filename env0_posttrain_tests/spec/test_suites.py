"""Eval suites: the spec's rules (errors naming the field), each kind's draw and exclusions, the boundary ledger,
per-suite statistics checked against scipy / statsmodels, the headline's rules, the nightly and CLI selection."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from env0_posttrain.agent.records import Episode
from env0_posttrain.evaluate.statistics import newcombe_paired_interval
from env0_posttrain.evaluate.headline import headline
from env0_posttrain.evaluate.render import suites_section
from env0_posttrain.evaluate.report import suite_numbers
from env0_posttrain.evaluate.report_model import SuitesView
from env0_posttrain.spec.runspec import SpecError, TaskSelection, parse_spec
from env0_posttrain.spec.suites import SuiteSpec, eval_suite_names, round_arm, split_round_arm
from env0_posttrain.tasks import make_task_set, starter_template_ids
from env0_posttrain.tasks.registry import _said
from env0_posttrain.tasks.suites import boundary, build_suite
from env0_posttrain_tests.support.paths import FIXTURES

TEMPLATES = starter_template_ids(max_calls=1)


def _spec(**extra):
    return parse_spec({"run_id": "r", **extra})


@pytest.mark.parametrize("suite, field", [
    ({"name": "a", "kind": "packages"}, "suites[0] (a).source"),
    ({"name": "a", "kind": "generated"}, "suites[0] (a).sample"),
    ({"name": "a", "kind": "seen", "source": "x"}, "suites[0] (a).source"),
    ({"name": "a", "kind": "seen", "exclude_train": True}, "suites[0] (a).exclude_train"),
    ({"name": "eval", "kind": "seen"}, "suites[0] (eval).name"),
    ({"name": "a", "kind": "generated", "sample": 2, "families": ["nope"]}, "suites[0] (a).families"),
    ({"name": "a@b", "kind": "seen"}, "suites.0.name"),
    ({"name": "a", "kind": "seen", "trails": 2}, "suites.0.trails"),
])
def test_a_bad_suite_is_refused_naming_its_field(suite, field):
    with pytest.raises(SpecError) as err:
        _spec(suites=[suite])
    assert field in str(err.value)


def test_suite_names_are_unique_and_a_spec_without_suites_keeps_its_one_split():
    with pytest.raises(SpecError, match=r"suites\[1\] \(a\).name: two suites"):
        _spec(suites=[{"name": "a", "kind": "seen"}, {"name": "a", "kind": "seen"}])
    with pytest.raises(SpecError, match="n_eval is 0"):
        _spec(tasks={"n_eval": 0})
    plain = _spec()
    assert plain.suites == [] and eval_suite_names(plain) == ["eval"]
    both = _spec(suites=[{"name": "s", "kind": "seen"}])
    only = _spec(tasks={"n_eval": 0}, suites=[{"name": "s", "kind": "seen"}])
    assert eval_suite_names(both) == ["eval", "s"] and eval_suite_names(only) == ["s"]
    assert round_arm("base", "eval") == "base" and round_arm("sft", "s") == "sft@s"
    assert split_round_arm("sft@s") == ("sft", "s") and split_round_arm("base") == ("base", "eval")


@pytest.fixture(scope="module")
def train():
    return make_task_set(TaskSelection(n_train=8, n_eval=1, seed=3, templates=TEMPLATES)).train


def test_seen_and_generated_suites_draw_deterministically_and_exclude_the_training_set(train):
    seen = build_suite(SuiteSpec(name="s", kind="seen", sample=5, seed=1), train=train, families=[], templates=None,
                       source=None, anchor=None, cache_dir=None)
    again = build_suite(SuiteSpec(name="s", kind="seen", sample=5, seed=1), train=train, families=[], templates=None,
                        source=None, anchor=None, cache_dir=None)
    assert [t.id for t in seen.tasks] == [t.id for t in again.tasks] and {t.id for t in seen.tasks} <= {t.id for t in train}
    assert boundary("seen", train, seen.tasks)["seen"] == "seen"
    fams = sorted({t.family for t in train})
    same_seed = SuiteSpec(name="g", kind="generated", sample=6, seed=3)  # the training seed: the same streams
    gen = build_suite(same_seed, train=train, families=fams, templates=TEMPLATES, source=None, anchor=None,
                      cache_dir=None)
    clean = build_suite(same_seed.model_copy(update={"exclude_train": True}), train=train, families=fams,
                        templates=TEMPLATES, source=None, anchor=None, cache_dir=None)
    assert boundary("generated", train, gen.tasks)["task_id_overlap"] > 0  # measured, not hidden
    edge = boundary("generated", train, clean.tasks)
    assert edge["seen"] == "unseen" and edge["task_id_overlap"] == edge["instruction_overlap"] == 0
    assert not {_said(t) for t in clean.tasks} & {_said(t) for t in train}
    assert edge["shared_families"] and edge["shared_templates"]  # same generator: unseen tasks, seen templates


@pytest.mark.skipif(shutil.which("curl") is None or shutil.which("bash") is None, reason="env0 scripts need bash")
def test_a_package_suite_excludes_training_packages_by_name_and_takes_a_symlinked_package(tmp_path, monkeypatch):
    from env0_posttrain.tasks.env0.seed.start import package_of
    from env0_posttrain.tasks.task_paths import TaskPaths

    env0 = FIXTURES / "env0_root"
    corpus, pool = tmp_path / "mini", tmp_path / "pool"
    corpus.mkdir(), pool.mkdir()
    shutil.copytree(FIXTURES / "env0_invoice", corpus / "invoice-1")
    shutil.copytree(FIXTURES / "env0_invoice", pool / "invoice-1")  # the training package again, under its name
    shutil.copytree(FIXTURES / "env0_archive", tmp_path / "elsewhere")
    (pool / "archive").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    cache = tmp_path / "cache"
    ts = make_task_set(TaskSelection(source=corpus, n_train=1, n_eval=0), import_cache=cache, env0_root=env0)
    suite = SuiteSpec(name="unseen", kind="packages", source=pool, exclude_train=True)
    built = build_suite(suite, train=ts.train, families=[], templates=None, source=pool, anchor=corpus,
                        cache_dir=cache, env0_root=env0)
    assert [t.recipe.items["package"] for t in built.tasks] == ["../pool/archive"]  # stored against the anchor
    assert "invoice-1" in built.dropped
    assert package_of(built.tasks[0], TaskPaths(env0, corpus)).instruction  # the verifier finds it through the anchor
    keep = build_suite(suite.model_copy(update={"exclude_train": False}), train=ts.train, families=[],
                       templates=None, source=pool, anchor=corpus, cache_dir=cache, env0_root=env0)
    edge = boundary("packages", ts.train, keep.tasks)
    assert edge["task_id_overlap"] == edge["package_name_overlap"] == edge["content_overlap"] == 1
    assert edge["seen"] == "partly seen"


def _eps(arm: str, outcomes: dict[str, list[bool]]) -> list[Episode]:
    from env0_posttrain_tests.sft.test_support import make_episode

    out = []
    for task, trials in outcomes.items():
        for k, passed in enumerate(trials):
            ep = make_episode(0, trial=k, reward=float(passed))
            out.append(ep.model_copy(update={"arm": arm, "task_id": task, "passed": passed, "reward": float(passed)}))
    return out


def test_per_suite_statistics_match_scipy_and_statsmodels():
    base = {f"t{i}": [i % 3 == 0, i % 4 == 0] for i in range(12)}
    sft = {f"t{i}": [i % 2 == 0, i % 3 == 0] for i in range(12)}
    s = suite_numbers("x", _eps("base", base) + _eps("sft", sft), {"seen": "unseen"}, 2, n_boot=200)
    xa = [sum(v) / 2 for v in base.values()]
    xb = [sum(v) / 2 for v in sft.values()]
    ref = stats.ttest_rel(xb, xa)
    assert s.paired.p_value == pytest.approx(ref.pvalue)
    # two trials per task: the BCa bootstrap over tasks (in task-id order), seed 0
    d = np.round([sum(sft[t]) / 2 - sum(base[t]) / 2 for t in sorted(base)], 12)
    ci = stats.bootstrap((d,), np.mean, n_resamples=200, method="BCa", rng=np.random.default_rng(0)).confidence_interval
    assert (s.paired.ci_low, s.paired.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert s.passes == {"base": (sum(map(sum, base.values())), 24), "sft": (sum(map(sum, sft.values())), 24)}
    one_a = {f"t{i}": [i < 3] for i in range(20)}
    one_b = {f"t{i}": [i < 11] for i in range(20)}
    m = suite_numbers("y", _eps("base", one_a) + _eps("sft", one_b), {"seen": "unseen"}, 1, n_boot=200)
    table = [[3, 0], [8, 9]]  # base pass & sft pass, base pass & sft fail / base fail & sft pass, both fail
    assert m.paired.p_primary == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert (m.paired.ci_low, m.paired.ci_high) == pytest.approx(newcombe_paired_interval(3, 8, 0, 9))
    md = "\n\n".join(suites_section(SuitesView(numbers=[m])))
    assert "| y, 1 trial | 3/20 (15.00%) | 11/20 (55.00%) | +8 passes, +40.00 pp |" in md.replace("  ", " ").replace(
        "  ", " ")


def test_the_headline_never_calls_a_seen_gain_generalization_and_says_when_suites_disagree():
    up = {f"t{i}": [i < 12] for i in range(20)}
    low = {f"t{i}": [i < 2] for i in range(20)}
    seen = suite_numbers("seen300", _eps("base", low) + _eps("sft", up), {"seen": "seen"}, 1, n_boot=100)
    unseen = suite_numbers("unseen100", _eps("base", low) + _eps("sft", low), {"seen": "unseen"}, 1, n_boot=100)
    text = suites_headline([seen, unseen])
    assert seen.verdict == "significant_improvement"
    assert "not generalization" in text and "no significant gain on any unseen suite" in text
    assert "the suites disagree" in text
    held = suite_numbers("standard60", _eps("base", low) + _eps("sft", up), {"seen": "unseen"}, 1, n_boot=100)
    assert "held-out gain on standard60" in suites_headline([held])
    assert "disagree" not in suites_headline([held])


def suites_headline(suites: list) -> str:
    """The headline over these suites (its verdict is the report's own episodes', not tested here)."""
    return headline(None, None, 0.05, suites=suites)[1]


def test_nightly_plays_only_the_suites_marked_nightly():
    from env0_posttrain.defs.schedules import nightly_config, nightly_suites
    from env0_posttrain.orchestration.launch import suites_config

    plain = _spec(eval={"nightly": True})
    assert nightly_suites(plain) == ["eval"] and nightly_config(plain) == {}  # no suites: the eval split only
    spec = _spec(tasks={"n_eval": 0}, suites=[{"name": "a", "kind": "seen"}, {"name": "b", "kind": "seen",
                                                                              "nightly": True}])
    assert nightly_suites(spec) == ["b"]
    ops = nightly_config(spec)["ops"]
    assert ops and all(v == {"config": {"suites": ["b"]}} for v in ops.values())
    assert set(suites_config(["a"], ["task_set", "sft_eval_trajectories"])) == {"sft_eval_trajectories"}


def test_run_new_checks_the_folders_and_refuses_to_replace_a_built_run(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from env0_posttrain.cli.main import app
    from env0_posttrain.spec.runspec import load_spec
    from env0_posttrain.store import Store

    monkeypatch.delenv("ENV0_ROOT", raising=False)
    data, root = tmp_path / "data", tmp_path / "env0"
    runner = CliRunner()
    out = runner.invoke(app, ["run", "new", "s", "--preset", "seeds-offline", "--data-dir", str(data)])
    assert out.exit_code == 2 and "suites.unseen100.source" in out.output and "env0.root" in out.output
    for sub in ("tasks-train-mini", "tasks-train", "tasks-eval"):
        (root / "env-0-mobile" / sub).mkdir(parents=True)
    args = ["run", "new", "s", "--preset", "seeds-offline", "--data-dir", str(data), "--set", f"env0.root={root}"]
    assert runner.invoke(app, args).exit_code == 0
    spec = load_spec(data / "runs" / "s.yaml")
    assert spec.env0.root == root and [s.name for s in spec.suites] == ["seen300", "unseen100", "standard60"]
    with Store(data / "env0.duckdb").transaction() as con:  # as if task_set had been built
        con.execute("INSERT INTO task_sets VALUES ('s', 'd', '{}', '[]', 0)")
    assert runner.invoke(app, args).exit_code == 0  # the same spec again: nothing to lose
    changed = runner.invoke(app, args + ["--set", "lora.r=4"])
    assert changed.exit_code == 2 and "--force" in changed.output and "a task set" in changed.output
    assert load_spec(data / "runs" / "s.yaml").lora.r == spec.lora.r
    assert runner.invoke(app, args + ["--set", "lora.r=4", "--force"]).exit_code == 0


def test_a_teacher_clone_records_the_skill_its_model_id_plays():
    from env0_posttrain.making.new_run import clone_for_teacher

    clone = clone_for_teacher(_spec(), "env0-oracle/oracle@0.6")
    assert clone.teacher.skill == 0.6
    assert clone_for_teacher(_spec(), "openai/gpt-x").teacher.skill == _spec().teacher.skill
