"""Task sets: deterministic splits, digests, provenance, the ledger, and the contamination check."""

from __future__ import annotations

import json
import re

import pytest

from env0_posttrain.spec.runspec import TaskSelection
from env0_posttrain.tasks import (
    GENERATOR_VERSION, TEMPLATES, TaskSet, code_version, fresh_train_tasks, ledger_markdown, make_task_set,
    split_overlap, starter_templates,
)
from env0_posttrain.tasks.taskset import said

SMALL = dict(families=["mail", "drive", "auth"], n_train=24, n_eval=8, seed=7)


@pytest.fixture(scope="module")
def task_set() -> TaskSet:
    return make_task_set(TaskSelection(**SMALL))


def test_sizes_labels_digests_and_provenance(task_set: TaskSet) -> None:
    assert len(task_set.train) == 24 and len(task_set.eval) == 8 and task_set.heldout == []
    assert {t.family for t in task_set.tasks} == {"mail", "drive", "auth"}
    assert all(task_set.digests[t.id] == t.content_digest() for t in task_set.tasks)
    assert task_set.provenance.seed == 7
    assert task_set.provenance.generator_version == GENERATOR_VERSION
    assert task_set.provenance.code_version == code_version()
    assert all(t.oracle_reward == 1.0 and not t.noop_pass for t in task_set.tasks)
    assert split_overlap(task_set) == []


def test_same_seed_same_set_other_seed_other_set(task_set: TaskSet) -> None:
    again = make_task_set(TaskSelection(**SMALL))
    assert again.model_dump_json() == task_set.model_dump_json()
    other = make_task_set(TaskSelection(**{**SMALL, "seed": 8}))
    assert {t.id for t in other.eval} != {t.id for t in task_set.eval}


def test_ledger_counts_every_drawn_task(task_set: TaskSet) -> None:
    rows = {r.family: r for r in task_set.ledger}
    assert set(rows) == {"mail", "drive", "auth"}
    assert sum(r.tasks for r in rows.values()) >= len(task_set.tasks)
    assert all(r.oracle_pass_rate == 1.0 and r.noop_pass_rate == 0.0 for r in rows.values())
    table = ledger_markdown(task_set.ledger)
    assert "| mail |" in re.sub(r" +", " ", table) and "oracle pass" in table


def test_ledger_says_drawn_used_and_dropped_per_family() -> None:
    from collections import Counter

    task_set = make_task_set(TaskSelection(families=["auth", "mail"], n_train=40, n_eval=8, seed=7))  # repeats
    rows = {r.family: r for r in task_set.ledger}
    assert {f: r.used for f, r in rows.items()} == Counter(t.family for t in task_set.tasks)  # the splits' tasks
    assert sum(r.dropped for r in rows.values()) == len(task_set.dropped) > 0
    assert all(sum(r.dropped_reasons.values()) == r.dropped for r in rows.values())
    why = Counter(task_set.dropped.values())
    assert sum((Counter(r.dropped_reasons) for r in rows.values()), Counter()) == why  # the generator's reasons carry no path
    # drawn = scored: what was used plus what was dropped after scoring (a repeated draw is dropped unscored)
    repeats = why["same content or instruction as a task already taken"]
    assert sum(r.tasks for r in rows.values()) == len(task_set.tasks) + len(task_set.dropped) - repeats
    table = re.sub(r" +", " ", ledger_markdown(task_set.ledger))
    assert "| drawn (scored) | used | dropped |" in table and "why dropped" in table


def test_a_ledger_stored_before_used_and_dropped_were_counted_still_loads() -> None:
    from env0_posttrain.evaluate.render import _ledger_section
    from env0_posttrain.evaluate.report_model import parse_ledger
    from env0_posttrain.tasks import LedgerRow

    old = {"family": "mail", "tasks": 12, "oracle_pass": 12, "noop_pass": 0, "mean_oracle_reward": 1.0,
           "mean_noop_reward": 0.0, "oracle_pass_rate": 1.0, "noop_pass_rate": 0.0}  # as stages/task_set.py stored it
    row = LedgerRow.model_validate({k: v for k, v in old.items() if not k.endswith("_rate")})
    assert (row.used, row.dropped, row.dropped_reasons) == (None, 0, {})
    [entry] = parse_ledger([old])
    assert (entry.n, entry.used, entry.dropped) == (12, None, 0)
    text = re.sub(r" +", " ", "\n".join(_ledger_section([entry])))
    assert "| mail | 12 | ? | 0 | 100% | 0% | — |" in text and "used: in the task set's splits (?)" in text


def test_split_by_template_and_heldout_templates_are_disjoint() -> None:
    ts = make_task_set(TaskSelection(families=["calendar", "docs"], n_train=20, n_eval=6, n_heldout=6, seed=1,
                                     split_by_template=True))
    train, evalt, held = ({t.template_id for t in ts.split(s)} for s in ("train", "eval", "heldout"))
    assert train and evalt and held
    assert not (train & evalt) and not (train & held)
    assert split_overlap(ts) == []


def test_starter_selection_makes_eval_from_unseen_combinations() -> None:
    ids = [t.id for t in starter_templates()]
    ts = make_task_set(TaskSelection(templates=ids, n_train=60, n_eval=20, seed=0))
    assert {t.template_id for t in ts.eval} <= {t.template_id for t in ts.train}, "same kinds of task"
    assert not ({t.id for t in ts.eval} & {t.id for t in ts.train}), "never the same task"
    assert split_overlap(ts) == []


def _relabel(ts: TaskSet, **changes: object) -> TaskSet:
    return TaskSet.model_validate({**ts.model_dump(), **changes})


def test_overlap_check_catches_shared_ids_digests_instructions_and_templates(task_set: TaskSet) -> None:
    leaked = task_set.train[0]
    copy = leaked.model_copy(update={"id": leaked.id + "-copy"})
    bad = _relabel(task_set, tasks=[t.model_dump() for t in task_set.tasks] + [copy.model_dump()],
                   splits={**task_set.splits, copy.id: "eval"}, digests={**task_set.digests, copy.id: copy.content_digest()})
    problems = split_overlap(bad)
    assert any("share content digest" in p for p in problems), problems
    assert any("share instruction" in p for p in problems), problems

    dup = _relabel(task_set, tasks=[t.model_dump() for t in task_set.tasks] + [leaked.model_dump()])
    assert any("appears 2 times" in p for p in split_overlap(dup))

    strict = _relabel(task_set, selection={**task_set.selection.model_dump(), "split_by_template": True})
    shared = {t.template_id for t in task_set.train} & {t.template_id for t in task_set.eval}
    assert shared and any("share template" in p for p in split_overlap(strict))

    tampered = _relabel(task_set, digests={**task_set.digests, leaked.id: "0" * 16})
    assert any("does not match its content" in p for p in split_overlap(tampered))


def test_fresh_tasks_continue_the_draw_and_never_return_a_task_of_the_run() -> None:
    sel = TaskSelection(families=["calendar", "docs", "auth"], n_train=20, n_eval=6, n_heldout=6, seed=1,
                        split_by_template=True)
    ts = make_task_set(sel)
    fresh = fresh_train_tasks(sel, 30, ts.tasks)
    assert len(fresh) == 30 and len({t.id for t in fresh}) == 30
    assert not {t.content_digest() for t in fresh} & set(ts.digests.values())
    assert not {said(t) for t in fresh} & {said(t) for t in ts.tasks}
    # the training templates only: never an eval or held-out one (split_by_template keeps them apart)
    assert not {t.template_id for t in fresh} & {t.template_id for t in [*ts.eval, *ts.heldout]}
    assert [t.id for t in fresh_train_tasks(sel, 30, ts.tasks)] == [t.id for t in fresh]  # seeded
    assert fresh_train_tasks(sel, 0, ts.tasks) == []
    # the selection's train tasks come first in its own stream: with them taken, the rest are new
    shared = TaskSelection(families=["mail", "drive"], n_train=12, n_eval=4, seed=2)
    base = make_task_set(shared)
    more = fresh_train_tasks(shared, 10, base.tasks)
    assert not {t.id for t in more} & {t.id for t in base.tasks} and len(more) == 10


def test_fresh_tasks_refuse_a_corpus_and_more_than_the_templates_hold() -> None:
    small = TaskSelection(templates=["drive_create_folder"], n_train=5, n_eval=3)
    ts = make_task_set(small)
    with pytest.raises(ValueError, match=r"500 fresh tasks asked for beyond the run's 8: .*give only"):
        fresh_train_tasks(small, 500, ts.tasks)
    corpus = TaskSelection(source="/nowhere", n_train=2, n_eval=1)
    with pytest.raises(ValueError, match="tasks.source imports a fixed list"):
        fresh_train_tasks(corpus, 3, [])


def test_unknown_template_and_exhausted_templates_are_refused() -> None:
    with pytest.raises(KeyError, match="unknown template ids"):
        make_task_set(TaskSelection(templates=["no_such_template"], n_train=1, n_eval=1))
    small = "drive_create_folder"
    assert small in TEMPLATES
    with pytest.raises(ValueError, match="give only"):
        make_task_set(TaskSelection(templates=[small], n_train=40, n_eval=40))


def test_tasks_jsonl_round_trip_and_bad_rows(tmp_path, task_set: TaskSet) -> None:
    from env0_posttrain.tasks import read_tasks_jsonl, write_tasks_jsonl

    path = write_tasks_jsonl(task_set, tmp_path / "tasks.jsonl")
    rows = read_tasks_jsonl(path)
    assert [(s, t.id) for s, t in rows] == [(task_set.splits[t.id], t.id) for t in task_set.tasks]
    lines = path.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["task"]["difficulty"] = 0
    path.write_text("\n".join([lines[0], json.dumps(bad)]) + "\n")
    with pytest.raises(ValueError, match=r"tasks.jsonl: row 2: task.difficulty"):
        read_tasks_jsonl(path)
