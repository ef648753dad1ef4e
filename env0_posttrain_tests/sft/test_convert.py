"""results.jsonl -> Prime-SFT and TRL rows under the curation policy, with every row accounted for."""

from __future__ import annotations

import json

import pytest

from env0_posttrain.spec.runspec import SFTDataPolicy
from env0_posttrain.sft import (
    ConversionError,
    convert_both,
    PrimeSFTRow,
    TrlRow,
    convert_file,
    convert_rows,
    results_row,
    validate_rows,
    write_results_jsonl,
)
from env0_posttrain.sft.tokens import count_tokens
from env0_posttrain_tests.sft.test_support import STEERING, SYSTEM, TOOLS, make_episode, make_task, tiny_tokenizer


def _rows(specs):
    """specs: list of dicts of make_episode kwargs (with i)."""
    return [results_row(make_episode(**s), make_task(s["i"])) for s in specs]


def _file(tmp_path, specs, name="results.jsonl"):
    path = tmp_path / name
    write_results_jsonl(_rows(specs), path)
    return path


def _accounted(report):
    return report.n_invalid + sum(report.curation.skipped.values()) + report.curation.n_kept_episodes


def test_prime_rows_strip_steering_and_think_and_trace_back_to_the_episode(tmp_path):
    path = _file(tmp_path, [{"i": 0, "steering": True, "reward": 0.5}])
    rows, report = convert_rows(path, SFTDataPolicy())
    assert len(rows) == 1 and isinstance(rows[0], PrimeSFTRow)
    row = rows[0]
    assert row.messages[0] == {"role": "system", "content": SYSTEM}
    assert all(STEERING not in (m.get("content") or "") for m in row.messages)
    assert all("<think>" not in (m.get("content") or "") for m in row.messages)
    assert row.messages[-1]["content"] == "I replied: the report is ready."
    args = row.messages[2]["tool_calls"][0]["function"]["arguments"]
    assert isinstance(args, str) and json.loads(args)["maxResults"] == 1  # OpenAI form kept
    assert (row.task_id, row.task_name, row.model, row.agent, row.reward) == (
        "mail-reply-000", "mail.reply_to_sender", "env0-oracle/oracle", "env0-agent", 0.5)
    assert row.tool_defs == TOOLS
    src = row.source
    assert (src.results_file, src.results_row, src.episode_key) == (str(path), 1, "run-a/teacher/mail-reply-000/0")
    assert report.curation.n_kept_episodes == 1 and report.skipped == {}


def test_policy_can_keep_steering_and_think_when_asked(tmp_path):
    path = _file(tmp_path, [{"i": 0, "steering": True}])
    rows, _ = convert_rows(path, SFTDataPolicy(strip_steering=False, strip_think=False))
    assert STEERING in rows[0].messages[0]["content"]
    assert rows[0].messages[2]["content"] == "<think>Find the email first.</think>"


def test_trl_rows_hold_argument_dicts_and_store_tools_as_json_text(tmp_path):
    rows, _ = convert_rows(_file(tmp_path, [{"i": 1}]), SFTDataPolicy(), fmt="trl")
    row = rows[0]
    assert isinstance(row, TrlRow)
    call = row.messages[2]["tool_calls"][0]
    assert call["function"]["arguments"] == {"q": "from:person1@example.com", "maxResults": 1}
    assert all(v is not None for m in row.messages for v in m.values())
    stored = row.to_jsonl_dict()
    assert isinstance(stored["tools"], str) and json.loads(stored["tools"]) == TOOLS
    assert TrlRow.from_stored(json.loads(json.dumps(stored))) == row


def test_selection_policy_counts_every_skipped_row_with_its_reason(tmp_path):
    specs = [
        {"i": 0, "reward": 1.0}, {"i": 0, "reward": 1.0},                    # same task and trial twice
        {"i": 1, "reward": -0.5},                                            # below min reward
        {"i": 2, "reward": 1.0, "stop": "infra_error"},                      # not training ready
        {"i": 3, "trial": 0, "reward": 0.6}, {"i": 3, "trial": 1, "reward": 0.9},
        {"i": 3, "trial": 2, "reward": 0.7},                                 # capped to the best two
    ]
    policy = SFTDataPolicy(min_reward=0.5, max_rows_per_task=2, canonical_only=True)
    rows, report = convert_rows(_rows(specs), policy)
    assert report.skipped == {"duplicate_episode": 1, "below_min_reward": 1, "not_training_ready": 1,
                              "over_task_cap": 1}
    assert sorted((r.task_id, r.source.trial) for r in rows) == [
        ("mail-reply-000", 0), ("mail-reply-003", 1), ("mail-reply-003", 2)]
    assert _accounted(report) == report.n_input == 7
    skipped = {s.row: s.reason for s in report.curation.skipped_rows}
    assert skipped == {2: "duplicate_episode", 3: "below_min_reward", 4: "not_training_ready", 5: "over_task_cap"}
    assert "stop_condition=infra_error" in str(report)


def test_all_rows_is_the_default_and_one_row_per_task_is_a_cap_of_one():
    specs = [{"i": 0, "trial": t, "reward": r} for t, r in enumerate((-1.0, 0.2, 1.0))]
    rows, report = convert_rows(_rows(specs), SFTDataPolicy())
    assert len(rows) == 3 and report.skipped == {}
    rows, report = convert_rows(_rows(specs), SFTDataPolicy(max_rows_per_task=1))
    assert [r.source.trial for r in rows] == [2] and report.skipped == {"over_task_cap": 2}


def test_steering_left_outside_the_system_message_skips_the_row():
    ep = make_episode(0, steering=True)
    ep.messages[1]["content"] += " " + STEERING
    rows, report = convert_rows([results_row(ep, make_task(0)), results_row(make_episode(1), make_task(1))],
                                SFTDataPolicy())
    assert len(rows) == 1 and report.skipped == {"steering_not_strippable": 1}


def test_unbalanced_think_skips_the_row():
    ep = make_episode(0)
    ep.messages[-1]["content"] = "<think>never closed. Done."
    rows, report = convert_rows([results_row(ep, make_task(0)), results_row(make_episode(1), make_task(1))],
                                SFTDataPolicy())
    assert len(rows) == 1 and report.skipped == {"unbalanced_think": 1}


@pytest.mark.parametrize(("weight", "turns", "cut_roles"), [(12, 1, 3), (3, 2, 5)])
def test_first_turn_upweighting_repeats_the_conversation_cut_after_the_first_turns(weight, turns, cut_roles):
    policy = SFTDataPolicy(first_turn_weight=weight, first_turns=turns)
    rows, report = convert_rows(_rows([{"i": 0}, {"i": 1}]), policy, fmt="trl")
    assert len(rows) == 2 * weight and report.curation.n_upweight_copies == 2 * (weight - 1)
    copies = [r for r in rows if r.source.repeat > 0]
    assert {len(r.messages) for r in copies} == {cut_roles}
    assert all(r.messages[-1]["role"] == "assistant" for r in copies)
    assert sorted(r.source.repeat for r in copies if r.source.task_id == "mail-reply-000") == list(range(1, weight))
    assert validate_rows(rows).ok


def test_per_turn_weights_are_refused_for_chat_rows():
    with pytest.raises(ValueError, match="needs sft.format 'tito'"):  # the spec refuses it ...
        SFTDataPolicy(first_turn_weight=4, upweight_mode="weight")
    policy = SFTDataPolicy(first_turn_weight=4).model_copy(update={"upweight_mode": "weight"})
    with pytest.raises(ValueError, match="upweight_mode='weight' needs TITO rows"):  # ... and so does conversion
        convert_rows(_rows([{"i": 0}]), policy)


def test_overlength_rows_are_dropped_and_counted_with_a_tokenizer():
    tok = tiny_tokenizer()
    rows_in = _rows([{"i": 0}, {"i": 1, "long_text": 60}])
    short = count_tokens(convert_rows(rows_in[:1], SFTDataPolicy(), fmt="trl")[0][0].messages, TOOLS, tok)
    rows, report = convert_rows(rows_in, SFTDataPolicy(overlength="drop"), fmt="trl", tokenizer=tok,
                                max_seq_length=short + 5)
    assert [r.source.task_id for r in rows] == ["mail-reply-000"]
    assert report.skipped == {"overlength": 1} and report.curation.n_overlength == 1
    assert "tokens > max_seq_length" in report.curation.skipped_rows[0].detail
    _, unchecked = convert_rows(rows_in, SFTDataPolicy(), fmt="trl")
    assert not unchecked.curation.length_checked and "length not checked" in unchecked.summary()


def test_overlength_rows_are_windowed_into_valid_rows_that_fit():
    tok = tiny_tokenizer()
    rows_in = _rows([{"i": 1, "long_text": 60}])
    full = convert_rows(rows_in, SFTDataPolicy(), fmt="trl")[0][0]
    n_full = count_tokens(full.messages, TOOLS, tok)
    limit = n_full - 40
    rows, report = convert_rows(rows_in, SFTDataPolicy(overlength="window"), fmt="trl", tokenizer=tok,
                                max_seq_length=limit)
    assert len(rows) >= 2 and report.curation.n_windows == len(rows) and report.curation.n_overlength == 1
    assert [r.source.window for r in rows] == list(range(len(rows)))
    for r in rows:
        assert count_tokens(r.messages, TOOLS, tok) <= limit
        assert [m["role"] for m in r.messages[:2]] == ["system", "user"]
    assert validate_rows(rows).ok
    trained = [m for r in rows for m in r.messages if m["role"] == "assistant"]
    assert trained == [m for m in full.messages if m["role"] == "assistant"]  # every turn trained once


def test_turns_too_long_for_any_window_are_dropped_and_counted():
    rows_in = _rows([{"i": 0}, {"i": 1, "long_text": 200}])  # 1007 and 3806 tokens; the head alone is ~770
    rows, report = convert_rows(rows_in, SFTDataPolicy(overlength="window"), fmt="trl", tokenizer=tiny_tokenizer(),
                                max_seq_length=900)
    assert report.curation.n_overlength == 2 and report.curation.n_turns_dropped_overlength == 1
    long_windows = [r for r in rows if r.source.task_id == "mail-reply-001"]
    assert len(long_windows) == 1 and "the quarterly report" not in json.dumps(long_windows[0].messages)
    with pytest.raises(ConversionError, match="0 rows from 2 input rows") as err:
        convert_rows(rows_in, SFTDataPolicy(overlength="window"), fmt="trl", tokenizer=tiny_tokenizer(),
                     max_seq_length=780)
    assert err.value.report.skipped == {"overlength_unwindowable": 2}


def test_a_file_with_bad_rows_converts_the_good_ones_and_lists_the_bad(tmp_path):
    good = [r.model_dump(mode="json") for r in _rows([{"i": 0}, {"i": 1}, {"i": 2}])]
    bad = json.loads(json.dumps(good[1]))
    bad["completion"][1]["tool_call_id"] = "ghost"
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join([json.dumps(good[0]), json.dumps(bad), "{broken", json.dumps(good[2])]) + "\n")
    out = tmp_path / "sft.jsonl"
    report = convert_file(path, out, SFTDataPolicy(), fmt="prime")
    lines = out.read_text().splitlines()
    assert [json.loads(x)["task_id"] for x in lines] == ["mail-reply-000", "mail-reply-002"]
    assert report.skipped == {"invalid": 2} and report.validation.bad_rows == [2, 3]
    text = str(report)
    assert f"{path}: row 2: completion[1].tool_call_id: answers 'ghost'" in text
    assert f"{path}: row 3: (line): not valid JSON" in text
    assert [json.loads(x)["source"]["results_row"] for x in lines] == [1, 4]


def test_fewer_episodes_than_expected_fails_loudly_and_keeps_the_old_output(tmp_path):
    path = _file(tmp_path, [{"i": 0, "reward": 1.0}, {"i": 1, "reward": 0.0}, {"i": 2, "reward": 0.0}])
    out = tmp_path / "sft.jsonl"
    out.write_text("previous rows\n")
    with pytest.raises(ConversionError, match="kept 1 episodes, expected at least 3") as err:
        convert_file(path, out, SFTDataPolicy(min_reward=1.0), expected_episodes=3)
    assert "below_min_reward=2" in str(err.value)
    failed = _file(tmp_path, [{"i": 0, "reward": 0.0}, {"i": 1, "reward": 0.0}, {"i": 2, "reward": 0.5}], "failed.jsonl")
    with pytest.raises(ConversionError, match="produced 0 rows from 3 input rows"):
        convert_file(failed, out, SFTDataPolicy(min_reward=1.0), fmt="trl")
    assert out.read_text() == "previous rows\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["failed.jsonl", "results.jsonl", "sft.jsonl"]
    report = convert_file(path, out, SFTDataPolicy(), expected_episodes=3)
    assert report.curation.n_kept_episodes == 3 and len(out.read_text().splitlines()) == 3


def test_an_all_bad_or_empty_input_never_writes(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text("{nope\n[1]\n")
    out = tmp_path / "sft.jsonl"
    with pytest.raises(ConversionError, match="0 rows from 2 input rows"):
        convert_file(path, out, SFTDataPolicy())
    path.write_text("")
    with pytest.raises(ConversionError, match="no rows"):
        convert_file(path, out, SFTDataPolicy())
    assert not out.exists()


def test_chat_rows_given_to_the_converter_are_listed_not_converted(tmp_path):
    prime, _ = convert_rows(_rows([{"i": 0}]), SFTDataPolicy())
    rows, report = convert_rows([*_rows([{"i": 1}]), *prime], SFTDataPolicy())
    assert len(rows) == 1 and report.n_invalid == 1
    assert "a prime row, but conversion reads results rows" in str(report)


def test_convert_both_gives_aligned_prime_and_trl_rows_from_one_pass():
    policy = SFTDataPolicy(first_turn_weight=2)
    prime, trl, report = convert_both(_rows([{"i": 0}, {"i": 1}]), policy, tokenizer=tiny_tokenizer(),
                                      max_seq_length=8192)
    assert len(prime) == len(trl) == report.n_output_rows == 4
    assert [p.source for p in prime] == [t.source for t in trl]
    assert [len(p.messages) for p in prime] == [len(t.messages) for t in trl]
    assert report.to_dict()["n_kept_episodes"] == 2 and report.to_dict()["skipped"] == {}
    assert [p.source.results_row for p in prime] == [1, 2, 1, 2]
