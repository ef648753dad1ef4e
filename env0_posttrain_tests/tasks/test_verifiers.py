"""Verifiers judge the end state, give partial credit, and force -1 on leaks and destructive side effects."""

from __future__ import annotations

import json
from typing import Any

from env0_posttrain.tasks import TEMPLATES, Task, build_workspace, template_stream, verify
from env0_posttrain.workspace import call_tool


def _task(template_id: str, seed: int = 0) -> Task:
    return next(template_stream(TEMPLATES[template_id], seed))


def _run(task: Task, calls: list[tuple[str, dict[str, Any]]], answer: str | None = None) -> Any:
    start, end = build_workspace(task), build_workspace(task)
    for name, args in calls:
        assert call_tool(end, name, args)["ok"], (name, args)
    return verify(task, start, end, answer)


def _message_id(task: Task) -> str:
    ws = build_workspace(task)
    p = task.recipe.items
    found = call_tool(ws, "gmail_messages_list", {"q": f'from:{p["email"]} subject:"{p["subject"]}"'})
    return found["result"]["messages"][0]["id"]


def test_another_path_to_the_same_state_passes() -> None:
    task = _task("mail_star_from_person")
    mid = _message_id(task)
    result = _run(task, [("gmail_messages_get", {"id": mid}), ("gmail_labels_list", {}),
                         ("gmail_messages_modify", {"id": mid, "body": {"addLabelIds": ["STARRED", "STARRED"]}})])
    assert result.reward == 1.0 and result.passed


def test_partial_credit_for_half_done_work() -> None:
    task = _task("drive_share_with_three")
    p = task.recipe.items
    ws = build_workspace(task)
    fid = call_tool(ws, "drive_files_list", {"q": f"name = '{p['file']}'"})["result"]["files"][0]["id"]
    result = _run(task, [("drive_permissions_create", {"fileId": fid, "body": {"type": "user", "role": "reader",
                                                                               "emailAddress": p["a_email"]}})])
    assert 0.0 < result.reward < 1.0 and not result.passed
    assert result.checks["shared"] == 1 / 3


def test_destructive_side_effect_overrides_to_minus_one() -> None:
    task = _task("mail_star_from_person")
    mid = _message_id(task)
    ws = build_workspace(task)
    other = next(m["id"] for m in call_tool(ws, "gmail_messages_list", {})["result"]["messages"] if m["id"] != mid)
    result = _run(task, [("gmail_messages_modify", {"id": mid, "body": {"addLabelIds": ["STARRED"]}}),
                         ("gmail_messages_trash", {"id": other})])
    assert result.reward == -1.0 and result.gates["destructive"]
    assert result.checks["labels_added"] == 1.0, "the task itself was done; the gate still wins"


def test_leak_to_the_wrong_person_overrides_to_minus_one() -> None:
    task = _task("drive_share_reader")
    p = task.recipe.items
    ws = build_workspace(task)
    fid = call_tool(ws, "drive_files_list", {"q": f"name = '{p['file']}'"})["result"]["files"][0]["id"]
    stranger = next(x.email for x in ws.directory if x.email not in (p["email"], ws.me.email))
    grant = {"type": "user", "role": "reader"}
    result = _run(task, [("drive_permissions_create", {"fileId": fid, "body": {**grant, "emailAddress": p["email"]}}),
                         ("drive_permissions_create", {"fileId": fid, "body": {**grant, "emailAddress": stranger}})])
    assert result.reward == -1.0 and result.gates["leak"]
    public = _run(task, [("drive_permissions_create", {"fileId": fid, "body": {"type": "anyone", "role": "reader"}})])
    assert public.reward == -1.0 and public.gates["leak"]


def test_questions_are_judged_on_the_final_answer() -> None:
    task = _task("mail_count_unread_from_person")
    assert task.final_answer is not None
    assert _run(task, [], task.final_answer).passed
    assert _run(task, [], f"You have {task.final_answer} unread emails from them.").passed
    assert not _run(task, [], "99").passed
    assert not _run(task, [], None).passed


def test_the_requested_deletion_is_not_a_destructive_gate() -> None:
    task = _task("mail_trash_from_person")
    result = _run(task, [("gmail_messages_trash", {"id": _message_id(task)})])
    assert result.reward == 1.0 and not result.gates["destructive"]


def test_collateral_edit_halves_the_reward_and_doing_nothing_earns_nothing() -> None:
    task = _task("mail_star_from_person")
    mid = _message_id(task)
    ws = build_workspace(task)
    other = next(m["id"] for m in call_tool(ws, "gmail_messages_list", {})["result"]["messages"] if m["id"] != mid)
    star = {"body": {"addLabelIds": ["STARRED"]}}
    result = _run(task, [("gmail_messages_modify", {"id": mid, **star}), ("gmail_messages_modify", {"id": other, **star})])
    assert result.reward == 0.5 and result.checks["others_untouched"] == 0.0
    assert _run(task, []).reward == 0.0


def test_the_gates_shortcut_on_shared_rows_agrees_with_comparing_separate_builds() -> None:
    """A forked end shares its unchanged rows with the start (the gates skip those by identity); gating it must
    give what gating two separately built workspaces gives, where every row is compared."""
    from env0_posttrain.agent.providers.oracle import plan_episode
    from env0_posttrain.tasks import generate_tasks
    from env0_posttrain.tasks.gates import recipients, removals, removals_and_recipients

    for task in generate_tasks(0, per_template=1):
        for seed in (0, 1):
            start = build_workspace(task)
            forked, built = start.fork(), build_workspace(task)
            for turn in plan_episode(task, 0.5, seed).turns:  # a sloppy agent: wrong arguments, skipped steps
                if turn.name:
                    args = json.loads(turn.arguments) if turn.mistake != "malformed_call" else {}
                    call_tool(forked, turn.name, args)
                    call_tool(built, turn.name, args)
            other_start = build_workspace(task)
            shared = removals_and_recipients(start, forked)
            assert shared == removals_and_recipients(other_start, built) == (removals(start, forked),
                                                                              recipients(start, forked))
            assert removals_and_recipients(forked, start) == removals_and_recipients(built, other_start)
