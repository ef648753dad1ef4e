"""What the report decides about its own inputs, from plain values: the budget notes, the SFT-rows note and the
suite its details are about (the comparison_report stage only gathers these inputs: stages/test_suite_reports.py)."""

from __future__ import annotations

from env0_posttrain.evaluate.budget_notes import budget_notes
from env0_posttrain.evaluate.lead_suite import lead_suite
from env0_posttrain.evaluate.report_model import SuiteNumbers
from env0_posttrain.evaluate.row_notes import rows_note
from env0_posttrain_tests.support.agent import notes_task

TASKS = [notes_task(0, ["a"]), notes_task(1, ["a", "b", "c"])]  # the oracle needs 2 and 4 model calls


def test_a_step_limit_below_the_oracles_need_is_noted_per_arm():
    assert budget_notes(TASKS, teacher_limits=(4, 2000), eval_limits=(4, 2000)) == []
    notes = budget_notes(TASKS, teacher_limits=(30, 2000), eval_limits=(3, 2000))
    assert notes == ["base, sft, rl: 3 steps is below the oracle's need on 1 of 2 tasks (up to 4 model calls)"]


def test_a_token_limit_below_the_oracles_longest_call_is_noted():
    [note] = budget_notes(TASKS, teacher_limits=(30, 5), eval_limits=(30, 2000))
    assert note.startswith("teacher_eval: 5 tokens per call is below the oracle's longest call on 2 of 2 tasks")


def test_rows_note_counts_the_suites_training_tasks_by_why():
    train = {"notes-0", "notes-1"}
    assert rows_note(TASKS, set(), {}, 512) is None  # no training task in the suite
    assert rows_note(TASKS, train, None, 512) is None  # sft_rows left no record
    assert rows_note(TASKS, train, {}, 512) == ("SFT rows: none of this suite's 2 training tasks lost its row to "
                                                "length or curation (lora.max_seq_length 512).")
    assert rows_note(TASKS, train, {"notes-1": "too long"}, 512) == (
        "SFT rows of this suite's 2 training tasks not trained on as played: 1 too long (lora.max_seq_length 512).")


def _suite(name: str, seen: str, paired: bool, passes: dict | None = None) -> SuiteNumbers:
    return SuiteNumbers.model_construct(name=name, boundary={"seen": seen}, trials=1, passes=passes or {},
                                        paired=object() if paired else None)


def test_the_details_go_to_the_first_unseen_suite_with_pairs_else_the_first_paired_else_one_with_episodes():
    assert lead_suite([_suite("a", "seen", True), _suite("b", "unseen", False), _suite("c", "unseen", True)])[0] == "c"
    name, why = lead_suite([_suite("a", "unseen", False), _suite("b", "seen", True)])
    assert name == "b" and "no unseen suite has base and adapter episodes" in why
    assert lead_suite([_suite("a", "seen", False), _suite("b", "seen", False, {"base": (1, 2)})])[0] == "b"
