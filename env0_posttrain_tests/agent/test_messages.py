"""A tool call's arguments that hold too much to parse are the model's malformed call, refused from the text before
any object is built; ordinary arguments parse as before."""

from __future__ import annotations

from env0_posttrain.agent.messages import parse_arguments


def _call(arguments: str) -> dict:
    return {"id": "c1", "function": {"name": "slack_chat_postMessage", "arguments": arguments}}


def test_arguments_with_too_many_values_or_too_deep_are_a_malformed_call():
    offered = {"slack_chat_postMessage"}
    wide = '{"channel": "C1", "blocks": [' + "{}," * 200_000 + "{}]}"
    deep = '{"channel": "C1", "blocks": ' + "[" * 500 + "]" * 500 + "}"
    for raw, why in ((wide, "more than 100000 values"), (deep, "nested deeper than 100")):
        args, kind, message = parse_arguments(_call(raw), offered)
        assert args is None and kind == "malformed_call" and why in message, message
    args, kind, _ = parse_arguments(_call('{"channel": "C1", "text": "[{,]} in text is text"}'), offered)
    assert kind is None and args == {"channel": "C1", "text": "[{,]} in text is text"}
