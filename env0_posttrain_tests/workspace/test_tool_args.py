"""Tool schemas and argument coercion from the handlers' pydantic models (workspace/tool_args.py).

The golden file pins the exact text of every tool definition: the tiny student is trained and evaluated
with these schemas in its prompt, so a changed character changes the demo's results. It is readable JSON
(not a digest) so a deliberate change shows as a reviewable diff; regenerate it with
`python -m env0_posttrain_tests.workspace.test_tool_args --write`.
"""

from __future__ import annotations

import json
import pickle
import sys
from typing import Any

import pytest

from env0_posttrain.workspace import TOOLS, openai_tools
from env0_posttrain.workspace.errors import ApiError
from env0_posttrain.workspace.tool_args import arg_fields
from env0_posttrain.workspace.tools import coerce_args
from env0_posttrain_tests.support.paths import FIXTURES

GOLDEN = FIXTURES / "openai_tools.json"


def _render() -> str:
    return json.dumps(openai_tools(), indent=1, ensure_ascii=False) + "\n"


def test_openai_tools_text_is_pinned_for_every_tool():
    golden = GOLDEN.read_text()
    assert len(json.loads(golden)) == len(TOOLS) > 200
    assert _render() == golden, f"tool schemas changed; if deliberate: python -m {__name__} --write"
    # the compact form the agent sees: same data, same key order, hence the same bytes
    assert json.dumps(openai_tools()) == json.dumps(json.loads(golden))


def ok(name: str, args: Any) -> dict[str, Any]:
    return coerce_args(TOOLS[name], args)


def err(name: str, args: Any) -> dict[str, Any]:
    with pytest.raises(ApiError) as e:
        coerce_args(TOOLS[name], args)
    return e.value.body


def google(body: dict[str, Any]) -> tuple[str, str, str | None]:
    e = body["error"]["errors"][0]
    return body["error"]["message"], e["reason"], e.get("location")


def slack(body: dict[str, Any]) -> str:
    assert body["ok"] is False and body["error"] == "invalid_arguments"
    return body["response_metadata"]["messages"][0]


@pytest.mark.parametrize("value,want", [
    (["a@x.com", "b@x.com"], "a@x.com, b@x.com"), (5, "5"), (1.5, "1.5"), (True, "true"), (False, "false"),
    ("plain", "plain")])
def test_string_params_join_lists_and_spell_numbers_and_booleans(value, want):
    assert ok("gmail_messages_send", {"to": value}) == {"to": want}


@pytest.mark.parametrize("value", [{"a": 1}, [], ["a", 1]])
def test_string_params_reject_objects_and_mixed_lists_on_google(value):
    assert google(err("gmail_messages_send", {"subject": value})) == (
        f"Invalid value for string parameter subject: {str(value)[:60]!r}", "invalid", "subject")


@pytest.mark.parametrize("value,want", [
    ("true", True), ("TRUE", True), ("1", True), (" yes ", True), (1, True), (True, True),
    ("false", False), ("0", False), ("no", False), ("", False), (0, False), (False, False)])
def test_boolean_wire_words(value, want):
    assert ok("calendar_events_list", {"singleEvents": value}) == {"singleEvents": want}


@pytest.mark.parametrize("value", ["on", "t", "maybe", 2, 1.0, [True], {}])
def test_boolean_rejects_what_pydantic_alone_would_take_or_junk(value):
    assert google(err("calendar_events_list", {"singleEvents": value}))[1:] == ("invalid", "singleEvents")


@pytest.mark.parametrize("value,want", [("10", 10), (" 7 ", 7), ("+5", 5), (10.0, 10), (3, 3)])
def test_integer_from_wire_strings_and_integral_floats(value, want):
    assert ok("gmail_messages_list", {"maxResults": value}) == {"maxResults": want}


@pytest.mark.parametrize("value", [True, False, 1.5, "10.0", "ten", "", [1], {}])
def test_integer_rejects_booleans_fractions_and_decimal_strings(value):
    assert google(err("gmail_messages_list", {"maxResults": value})) == (
        f"Invalid value for integer parameter maxResults: {str(value)[:60]!r}", "invalid", "maxResults")


@pytest.mark.parametrize("value,want", [("INBOX", ["INBOX"]), (["INBOX", "UNREAD"], ["INBOX", "UNREAD"]),
                                        ([7, "x"], ["7", "x"]), ([], [])])
def test_array_params_take_a_single_string_and_stringify_ids(value, want):
    assert ok("gmail_messages_list", {"labelIds": value}) == {"labelIds": want}


@pytest.mark.parametrize("value", [5, {"a": 1}, [1.5], [None], [["a"]]])
def test_array_params_reject_other_shapes(value):
    assert google(err("gmail_messages_list", {"labelIds": value}))[1:] == ("invalid", "labelIds")


def test_object_params_take_only_objects_on_google():
    assert ok("gmail_messages_modify", {"id": "m", "body": {"addLabelIds": ["X"]}})["body"] == {"addLabelIds": ["X"]}
    assert google(err("gmail_messages_modify", {"id": "m", "body": '{"addLabelIds": []}'}))[1:] == ("invalid", "body")


def test_slack_takes_structured_arguments_as_json_strings():
    assert ok("slack_users_profile_set", {"profile": '{"status_text": "away"}'}) == {"profile": {"status_text": "away"}}
    assert ok("slack_users_profile_set", {"profile": {"status_text": "away"}}) == {"profile": {"status_text": "away"}}
    assert slack(err("slack_users_profile_set", {"profile": "not json"})) == (
        "[ERROR] Invalid value for object parameter profile: 'not json'")
    assert slack(err("slack_users_profile_set", {"profile": "[1,2]"})) == (
        "[ERROR] Invalid value for object parameter profile: '[1, 2]'")  # the decoded value, as Slack reports it
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]
    assert ok("slack_chat_postMessage", {"channel": "general", "blocks": blocks})["blocks"] == json.dumps(blocks)
    assert ok("slack_chat_postMessage", {"channel": "general", "text": ["a", "b"]})["text"] == "a, b"


def test_unknown_names_slack_ignores_google_rejects():
    assert ok("slack_chat_postMessage", {"channel": "general", "bogus": 1, 7: "x"}) == {"channel": "general"}
    assert google(err("gmail_messages_list", {"maxResults": 5, "bogus": None})) == (
        'Invalid JSON payload received. Unknown name "bogus": Cannot bind query parameter.', "invalid", "bogus")


def test_none_means_absent():
    assert ok("gmail_messages_list", {"maxResults": None, "q": "x"}) == {"q": "x"}
    assert google(err("gmail_messages_get", {"id": None})) == ("Required parameter: id", "required", "id")
    assert slack(err("slack_chat_postMessage", {"channel": None})) == "[ERROR] missing required field: channel"


def test_first_problem_in_the_order_sent_then_first_missing_in_signature_order():
    assert google(err("gmail_messages_get", {"format": "full", "bogus": 1, "metadataHeaders": 5}))[2] == "bogus"
    assert google(err("gmail_messages_get", {"metadataHeaders": 5, "bogus": 1}))[2] == "metadataHeaders"
    assert slack(err("slack_chat_scheduleMessage", {"text": "x"})) == "[ERROR] missing required field: channel"
    assert slack(err("slack_chat_scheduleMessage", {"unfurl_links": "maybe"})).startswith(
        "[ERROR] Invalid value for boolean parameter unfurl_links")


@pytest.mark.parametrize("args", ["a string", ["id"], None, 3])
def test_arguments_must_be_an_object(args):
    assert google(err("gmail_messages_get", args)) == ("arguments must be a JSON object", "badRequest", None)
    assert slack(err("slack_chat_postMessage", args)) == "[ERROR] arguments must be a JSON object"


def test_kinds_and_required_come_from_the_model_hidden_params_included():
    spec = TOOLS["gmail_messages_get"]
    assert spec.kinds == {n: p["type"] for n, p in spec.args_model.model_json_schema()["properties"].items()}
    assert spec.required == ("id",) and spec.kinds["metadataHeaders"] == "array"
    hidden = set(spec.kinds) - set(spec.parameters["properties"])
    assert hidden and all(ok("gmail_messages_get", {"id": "m", h: "x"}) for h in hidden if spec.kinds[h] == "string")


def test_an_annotation_without_a_wire_rule_fails_at_registration():
    def handler(self, ratio: float) -> None: ...

    with pytest.raises(TypeError, match="no wire rule"):
        arg_fields("gmail", "Fake.handler", handler, {"ratio": ""})


def test_a_spec_pickles_after_its_model_is_built():
    spec = TOOLS["slack_chat_postMessage"]
    assert spec.kinds["channel"] == "string"  # builds the model (a class pickle cannot name)
    copy = pickle.loads(pickle.dumps(spec))
    assert copy == spec and copy.parameters == spec.parameters and copy.args_model is not spec.args_model


if __name__ == "__main__" and "--write" in sys.argv:
    GOLDEN.write_text(_render())
