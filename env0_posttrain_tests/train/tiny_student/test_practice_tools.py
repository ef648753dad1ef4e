"""Practice tools teach function calling in general and can never be mistaken for a workspace tool."""

from __future__ import annotations

from env0_posttrain.tasks import company
from env0_posttrain.tasks.vocabulary import entity_classes
from env0_posttrain.train.tiny_student.practice_tools import PRACTICE_TOOLS, practice_chats, practice_schemas
from env0_posttrain.train.tiny_student.corpus import people_emails
from env0_posttrain.workspace import TOOLS


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    else:
        yield value


def test_practice_tools_are_disjoint_from_the_workspace_and_well_formed():
    names = [s["function"]["name"] for s in practice_schemas()]
    assert len(set(names)) == len(PRACTICE_TOOLS) and not set(names) & set(TOOLS)
    for tool in PRACTICE_TOOLS:
        for request in tool.requests:  # every phrasing names every slot
            assert all("{" + slot + "}" in request for slot in tool.slots)


def test_practice_chats_copy_the_request_into_the_call():
    ws = company()
    people = people_emails(ws)
    chats = practice_chats(entity_classes(ws), people, "SYSTEM", 40, seed=3)
    assert len(chats) == 40 and {c["messages"][2]["tool_calls"][0]["function"]["name"] for c in chats} == {
        t.name for t in PRACTICE_TOOLS}
    for chat in chats:
        system, user, call, result, final = chat["messages"]
        fn = call["tool_calls"][0]["function"]
        assert system == {"role": "system", "content": "SYSTEM"} and final == {"role": "assistant", "content": "Done."}
        assert fn["name"] in {t["function"]["name"] for t in chat["tools"]} and len(chat["tools"]) == 3
        assert result["tool_call_id"] == call["tool_calls"][0]["id"]
        for value in _leaves(fn["arguments"]):
            # each argument is in the request verbatim, or is the address of a person the request names
            assert value in user["content"] or any(people[n] == value and n in user["content"] for n in people), (value, user)
    assert practice_chats(entity_classes(ws), people, "S", 5, seed=3) == practice_chats(entity_classes(ws), people, "S", 5, seed=3)
