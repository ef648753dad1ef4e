"""The sharing/organising calendar templates reward the asked-for change and nothing near it: the wrong
role, an extra share, a removed bystander rule or a deleted (not moved) event all lose."""

from __future__ import annotations

from env0_posttrain.tasks import build_workspace, verify
from env0_posttrain.workspace import call_tool
from env0_posttrain_tests.support.template_runs import first_task, run_calls


def test_share_needs_the_asked_role_and_no_extra_grantee():
    task = first_task("calendar_share_with_person")
    p = task.recipe.items
    wrong = "writer" if p["role"] == "reader" else "reader"
    assert task.tools[0] == "calendar_acl_insert" and len(task.tools) <= 8
    def share(email, role):
        return "calendar_acl_insert", {"calendarId": "primary", "body": {"role": role, "scope": {"type": "user", "value": email}}}

    assert run_calls(task, [share(p["email"], p["role"])]).reward == 1.0
    assert run_calls(task, [share(p["email"], wrong)]).reward < 1.0
    ws = build_workspace(task)
    outsider = next(x.email for x in ws.directory if x.email not in (p["email"], ws.me.email)
                    and f"{ws.me.email}/user:{x.email}" not in ws.calendar.db.acl)
    leaked = run_calls(task, [share(p["email"], p["role"]), share(outsider, "reader")])
    assert leaked.reward < 1.0
    public = run_calls(task, [share(p["email"], p["role"]), ("calendar_acl_insert", {"calendarId": "primary", "body": {
        "role": "reader", "scope": {"type": "default"}}})])
    assert public.reward < 1.0


def test_unshare_removes_only_that_rule():
    task = first_task("calendar_unshare_person")
    p = task.recipe.items
    ws = build_workspace(task)
    me = ws.me.email
    assert run_calls(task, [("calendar_acl_delete", {"calendarId": "primary", "ruleId": f"user:{p['email']}"})]).reward == 1.0
    both = [("calendar_acl_delete", {"calendarId": "primary", "ruleId": f"user:{e}"}) for e in (p["email"], p["keep_email"])]
    assert run_calls(task, both).reward < 1.0
    assert f"{me}/user:{p['keep_email']}" in ws.calendar.db.acl


def test_move_to_new_calendar_is_not_delete_and_recreate():
    task = first_task("calendar_new_calendar_move_event")
    p = task.recipe.items
    ws = build_workspace(task)
    ev = next(e for e in ws.calendar.events_of() if e.summary == p["title"])
    start, end = build_workspace(task), build_workspace(task)
    cal = call_tool(end, "calendar_calendars_insert", {"body": {"summary": p["cal_name"]}})["result"]
    call_tool(end, "calendar_events_insert", {"calendarId": cal["id"], "body": {
        "summary": p["title"], "start": dict(ev.start), "end": dict(ev.end)}})
    call_tool(end, "calendar_events_delete", {"eventId": ev.id})
    assert verify(task, start, end, None).reward < 1.0
    only_made = run_calls(task, [("calendar_calendars_insert", {"body": {"summary": p["cal_name"]}})])
    assert 0 < only_made.reward < 1.0
