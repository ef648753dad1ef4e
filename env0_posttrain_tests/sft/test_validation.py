"""A corpus of malformed rows and files: each gets a clear error naming the file, the row and the field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from env0_posttrain.sft import results_row, validate_file, validate_rows
from env0_posttrain.sft.message_rules import BANNED_KEYS
from env0_posttrain_tests.sft.test_support import make_episode, make_task

# completion: [0] assistant+call_0_1, [1] tool, [2] assistant+call_0_2, [3] tool, [4] assistant final
CALL = ("completion", 0, "tool_calls", 0)


def _base() -> dict[str, Any]:
    return results_row(make_episode(0), make_task(0)).model_dump(mode="json")


def _at(row: dict[str, Any], path: tuple) -> Any:
    for key in path:
        row = row[key]
    return row


def _set(path: tuple, value: Any) -> Callable[[dict], None]:
    def mutate(row: dict) -> None:
        _at(row, path[:-1])[path[-1]] = value
    return mutate


def _delete(path: tuple) -> Callable[[dict], None]:
    def mutate(row: dict) -> None:
        del _at(row, path[:-1])[path[-1]]
    return mutate


def _do(fn: Callable[[dict], Any]) -> Callable[[dict], None]:
    def mutate(row: dict) -> None:
        fn(row)
    return mutate


ROW_CASES: dict[str, tuple[Callable[[dict], None], str, str]] = {
    "unknown role": (_set(("completion", 0, "role"), "robot"), "completion[0].role", "is not one of"),
    "second system message": (_do(lambda r: r["completion"].append({"role": "system", "content": "again"})),
                              "completion[5].role", "a system message may only come first"),
    "empty user message": (_set(("prompt", 1, "content"), "  "), "prompt[1].content", "user message has no content"),
    "empty system message": (_set(("prompt", 0, "content"), None), "prompt[0].content",
                             "system message has no content"),
    "assistant with nothing": (_set(("completion", 4, "content"), None), "completion[4].content",
                               "neither content nor tool calls"),
    "user carries tool calls": (_set(("prompt", 1, "tool_calls"), [{"id": "x", "type": "function"}]),
                                "prompt[1].tool_calls", "only assistant messages may carry tool calls"),
    "tool answers unknown id": (_set(("completion", 1, "tool_call_id"), "nope"), "completion[1].tool_call_id",
                                "'nope', which is not a pending call id"),
    "tool without call id": (_delete(("completion", 1, "tool_call_id")), "completion[1].tool_call_id",
                             "tool message without a tool_call_id"),
    "tool answers twice": (_do(lambda r: r["completion"].insert(2, copy.deepcopy(r["completion"][1]))),
                           "completion[2].tool_call_id", "not a pending call id"),
    "tool message without content": (_set(("completion", 1, "content"), None), "completion[1].content",
                                     "tool message has no content"),
    "call never answered": (_do(lambda r: r["completion"].pop(1)), "completion[1]",
                            "got no tool response before this assistant message"),
    "empty call id": (_set((*CALL, "id"), ""), "completion[0].tool_calls[0].id", "call id missing or empty"),
    "duplicate pending call id": (_do(lambda r: r["completion"][0]["tool_calls"].append(
        copy.deepcopy(r["completion"][0]["tool_calls"][0]))), "completion[0].tool_calls[1].id", "already pending"),
    "call type not function": (_set((*CALL, "type"), "code"), "completion[0].tool_calls[0].type",
                               "must be 'function'"),
    "arguments not JSON": (_set((*CALL, "function", "arguments"), "{q: 1"),
                           "completion[0].tool_calls[0].function.arguments", "is not valid JSON"),
    "arguments a JSON list": (_set((*CALL, "function", "arguments"), "[1, 2]"),
                              "completion[0].tool_calls[0].function.arguments", "must be a JSON object, got JSON list"),
    "arguments a number": (_set((*CALL, "function", "arguments"), 3),
                           "completion[0].tool_calls[0].function.arguments", "got int"),
    "arguments missing": (_delete((*CALL, "function", "arguments")),
                          "completion[0].tool_calls[0].function.arguments", "missing"),
    "tool not offered": (_set((*CALL, "function", "name"), "drive_files_delete"),
                         "completion[0].tool_calls[0].function.name", "'drive_files_delete' is not in tool_defs"),
    "tool name missing": (_delete((*CALL, "function", "name")), "completion[0].tool_calls[0].function.name",
                          "missing or empty"),
    "call function not an object": (_set((*CALL, "function"), "gmail_messages_list"),
                                    "completion[0].tool_calls[0].function", "missing or not an object"),
    "tool_calls not a list": (_set(("completion", 0, "tool_calls"), {"id": "x"}), "completion[0].tool_calls",
                              "must be a list"),
    "no assistant message": (_set(("completion",), []), "messages", "no assistant message"),
    "no user message": (_set(("prompt", 1, "role"), "system"), "messages", "no user message"),
    "message not an object": (_set(("completion", 4), "done"), "completion[4]", "message must be an object"),
    "content not a string": (_set(("prompt", 1, "content"), [{"type": "text", "text": "hi"}]), "prompt[1].content",
                             "must be a string or null, got list"),
    "banned gold key": (_set(("info", "gold"), "x"), "info.gold", "banned key 'gold'"),
    "banned initial_db key": (_set(("initial_db",), {}), "initial_db", "banned key 'initial_db'"),
    "banned oracle in a message": (_set(("prompt", 1, "oracle"), [{"name": "x"}]), "prompt[1].oracle",
                                   "banned key 'oracle'"),
    "banned key in tool arguments": (_set((*CALL, "function", "arguments"), json.dumps({"expected_answer": 1})),
                                     "completion[0].tool_calls[0].function.arguments.expected_answer", "banned key"),
    "tool def not a function": (_set(("tool_defs", 0, "type"), "retrieval"), "tool_defs[0].type",
                                "must be 'function'"),
    "duplicate tool defs": (_do(lambda r: r["tool_defs"].append(copy.deepcopy(r["tool_defs"][0]))),
                            "tool_defs[3].function.name", "duplicate tool name 'gmail_messages_list'"),
    "tool def without name": (_delete(("tool_defs", 1, "function", "name")), "tool_defs[1].function.name",
                              "missing or empty"),
    "tool_defs not a list": (_set(("tool_defs",), {"gmail": 1}), "tool_defs", "must be a list"),
    "reward out of range": (_set(("reward",), 3.5), "reward", "3.5 is outside [-1, 1]"),
    "reward not a number": (_set(("reward",), "high"), "reward", "'high' is not a number (str)"),
    "unknown stop condition": (_set(("stop_condition",), "gave_up"), "stop_condition", "Input should be"),
    "info without task_id": (_delete(("info", "task_id")), "info.task_id", "Field required"),
    "unknown top-level field": (_set(("verdict",), 1), "verdict", "Extra inputs are not permitted"),
    "negative tool call count": (_set(("total_tool_calls",), -1), "total_tool_calls", "greater than or equal to 0"),
    "bad exchange": (_set(("trajectory", 0, "request_len"), "two"), "trajectory[0].request_len", "valid integer"),
    "ready despite an infra error": (_set(("stop_condition",), "infra_error"), "info.training_ready",
                                     "true, but stop_condition is 'infra_error'"),
    "empty prompt": (_set(("prompt",), []), "prompt", "at least 1 item"),
}


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_corpus_is_large_enough_and_the_base_row_is_valid(tmp_path):
    assert len(ROW_CASES) + len(FILE_CASES) >= 30
    assert validate_rows([_base()]).ok
    assert {"gold", "initial_db", "oracle"} <= BANNED_KEYS


@pytest.mark.parametrize("case", sorted(ROW_CASES))
def test_malformed_row_is_reported_with_file_row_and_field(case, tmp_path):
    mutate, field, message = ROW_CASES[case]
    bad = _base()
    mutate(bad)
    path = _write(tmp_path / "results.jsonl", [_base(), bad, _base()])
    report = validate_file(path)
    assert not report.ok
    assert report.bad_rows == [2], str(report)
    hits = [p for p in report.problems if p.field == field and message in p.message]
    assert hits, f"expected {field}: ...{message}... in\n{report}"
    assert all(p.file == str(path) for p in report.problems)
    assert str(hits[0]).startswith(f"{path}: row 2: {field}: ")


def _raw(text: bytes) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        path = tmp / "results.jsonl"
        path.write_bytes(text)
        return path
    return make


def _good_line() -> bytes:
    return (json.dumps(_base()) + "\n").encode()


FILE_CASES: dict[str, tuple[Callable[[Path], Path], int, str, str]] = {
    "missing file": (lambda tmp: tmp / "absent.jsonl", 0, "(file)", "file not found"),
    "a directory": (lambda tmp: tmp, 0, "(file)", "is a directory"),
    "empty file": (_raw(b""), 0, "(file)", "no rows"),
    "blank lines only": (_raw(b"\n\n  \n"), 0, "(file)", "no rows"),
    "invalid JSON line": (lambda tmp: _raw(_good_line() + b"{not json}\n")(tmp), 2, "(line)", "not valid JSON"),
    "half-written last line": (lambda tmp: _raw(_good_line() + _good_line()[:40])(tmp), 2, "(line)",
                               "not valid JSON"),
    "not UTF-8": (lambda tmp: _raw(_good_line() + b'{"a": "\xff\xfe"}\n')(tmp), 2, "(line)", "not UTF-8"),
    "row is a list": (_raw(b"[1, 2, 3]\n"), 1, "(row)", "must be a JSON object, got list"),
    "row is a string": (_raw(b'"hello"\n'), 1, "(row)", "got str"),
    "row of unknown shape": (_raw(b'{"foo": 1}\n'), 1, "(row)", "not a results row"),
    "trl row with tools not JSON": (_raw(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                                  {"role": "assistant", "content": "ok"}],
                                                     "tools": "{oops", "source": "{}"}).encode()),
                                    1, "tools", "is a string but not JSON"),
    "prime row without source": (_raw(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                               {"role": "assistant", "content": "ok"}],
                                                  "tool_defs": [], "reward": 1.0, "task_id": "t", "task_name": "n",
                                                  "model": "m", "agent": "a"}).encode()),
                                 1, "source", "Field required"),
    "tito row without output": (_raw(b'{"input_ids": [1, 2], "output_ids": [], "turn": 0, "origin": "native", '
                                     b'"source": {}}\n'), 1, "output_ids", "at least 1 item"),
    "tito row with negative id": (_raw(json.dumps({"input_ids": [1, -5], "output_ids": [3], "turn": 0,
                                                   "origin": "native", "source": {
                                                       "run_id": "r", "arm": "teacher", "task_id": "t", "trial": 0,
                                                       "example_id": "t", "episode_key": "k"}}).encode()),
                                  1, "(row)", "token ids must be non-negative"),
}


@pytest.mark.parametrize("case", sorted(FILE_CASES))
def test_malformed_file_is_reported_with_file_row_and_field(case, tmp_path):
    make, row, field, message = FILE_CASES[case]
    path = make(tmp_path)
    report = validate_file(path)
    assert not report.ok
    hits = [p for p in report.problems if p.row == row and p.field == field and message in p.message]
    assert hits, f"expected row {row} {field}: ...{message}... in\n{report}"
    assert hits[0].file == str(path)


def test_a_row_recorded_as_not_ready_may_hold_the_agents_mistakes_but_not_banned_keys():
    row = _base()
    row["completion"][0]["tool_calls"][0]["function"]["name"] = "notes_explode"
    for step in row["trajectory"]:  # the steps' message lists are cut from the edited conversation again
        del step["prompt"], step["completion"]
    row["info"].update(training_ready=False, training_ready_reason="invalid ...: tool 'notes_explode' ...")
    assert validate_rows([row]).ok
    row["info"]["oracle"] = []
    assert [p.field for p in validate_rows([row]).problems] == ["info.oracle", "info.oracle"]


def test_every_problem_of_a_row_is_listed_not_only_the_first(tmp_path):
    bad = _base()
    bad["completion"][0]["tool_calls"][0]["id"] = ""
    bad["completion"][2]["tool_calls"][0]["function"]["name"] = "nope"
    bad["info"]["gold"] = 1
    report = validate_rows([bad])
    fields = {p.field for p in report.problems}
    assert {"completion[0].tool_calls[0].id", "completion[2].tool_calls[0].function.name", "info.gold"} <= fields
    assert report.source == "<rows>" and report.bad_rows == [1]


def test_report_text_lists_every_problem_and_a_summary(tmp_path):
    good, bad = _base(), _base()
    bad["reward"] = 9
    path = _write(tmp_path / "r.jsonl", [good, bad])
    report = validate_file(path)
    text = str(report)
    assert text.splitlines()[0] == f"{path}: 2 rows (results=2), 1 valid, 1 invalid, 1 problems"
    assert f"{path}: row 2: reward: Value error, reward: 9 is outside [-1, 1]" in text, text
    with pytest.raises(ValueError, match="row 2: reward"):
        report.raise_for_problems()


def test_converted_rows_validate_as_their_own_kinds(tmp_path):
    from env0_posttrain.spec.runspec import SFTDataPolicy
    from env0_posttrain.sft import convert_rows

    prime, _ = convert_rows([_base()], SFTDataPolicy())
    trl, _ = convert_rows([_base()], SFTDataPolicy(), fmt="trl")
    report = validate_rows([*prime, *trl])
    assert report.ok, str(report)
    assert dict(report.kinds) == {"prime": 1, "trl": 1}


def _json_values():
    leaves = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=6) | st.sampled_from(
        ["assistant", "tool", "system", "user", "function", "call_0_1", "{}", "[]", "gmail_messages_list"])
    return st.recursive(leaves, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
        st.sampled_from(["role", "content", "id", "type", "function", "name", "arguments", "tool_calls",
                         "tool_call_id"]), kids, max_size=3), max_leaves=8)


def _paths(row: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(row, dict):
        for k, v in row.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(row, list):
        for i, v in enumerate(row):
            out += _paths(v, (*prefix, i))
    return out


_MESSAGE_PATHS = [p for p in _paths(_base()) if p and p[0] in ("prompt", "completion", "tool_defs")]


def test_fuzzed_rows_never_crash_validation_and_never_convert_into_invalid_rows():
    from hypothesis import HealthCheck, given, settings

    from env0_posttrain.spec.runspec import SFTDataPolicy
    from env0_posttrain.sft import ConversionError, convert_rows

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(_MESSAGE_PATHS), _json_values())
    def check(path, value):
        row = _base()
        _set(path, value)(row)
        report = validate_rows([row])
        assert all(p.row == 1 and p.field and p.message for p in report.problems)
        try:
            out, _ = convert_rows([row], SFTDataPolicy(), fmt="trl")
        except ConversionError:
            assert not report.ok or not row["info"]["training_ready"]
            return
        assert validate_rows(out).ok

    check()
