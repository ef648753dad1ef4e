"""Multi-app family, one item carried across two services: a file shared and announced or emailed, access asked for
in Slack and granted in Drive, an invitation and its email, a meeting asked for by mail, an event or a mail relayed to
Slack."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.calendar_support import (
    attendee_emails, dt_body, event_by_title, find_event, new_events, plant_event, sample_event, starts_at,
)
from env0_posttrain.tasks.families.common import Script, pick_people, person_params, slot
from env0_posttrain.tasks.families.drive_support import file_by_name, find_file, plant_file, role_for, sample_file
from env0_posttrain.tasks.families.mail_support import plant_mail
from env0_posttrain.tasks.families.multi_app.common import (HISTORY, LOOKUP, POST, check_emailed, judge_dm, reg,
                                                         sample_channel_person)
from env0_posttrain.tasks.families.slack_support import mentions, my_channels, plant_post, posts_in
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import SUBJECTS


# -- Drive + Slack / Gmail ---------------------------------------------------------------------

def _sample_share_post(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_channel_person(rng, ws), **sample_file(rng, ws)}


def _plant_file(ws: Any, p: dict[str, Any]) -> None:
    plant_file(ws, p["file"])


def _share(s: Script, p: dict[str, Any], role: str = "reader") -> str:
    fid = file_by_name(s, p["file"])["id"]
    s("drive_permissions_create", fileId=fid, body={"type": "user", "role": role, "emailAddress": p["email"]})
    return fid


def _solve_share_post(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    _share(s, p)
    s(POST, channel=f"#{p['channel']}", text=f"{p['file']} is now shared with {p['name']}")
    return s.calls


def _judge_share_post(j: Judge, p: dict[str, Any]) -> None:
    f = find_file(j.start, p["file"])
    j.check("shared", role_for(j.end.drive.db.files.get(f.id), p["email"]) == "reader")
    j.check("announced", any(mentions(m.text, p["file"]) for m in posts_in(j.start, j.end, p["channel"])))
    standard_gates(j, audience={p["email"], f"#{p['channel']}"})


reg("multi_share_file_and_post", ("Share {file} with {name} (reader) and tell #{channel} that it is shared.",
                                  "Give {first} read access to {file}, then announce it in #{channel}, naming the file."),
    _sample_share_post, _solve_share_post, _judge_share_post, ("drive_files_list", "drive_permissions_create", POST),
    (HISTORY,), plant=_plant_file)


def _solve_share_mail(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    _share(s, p, "writer")
    s("gmail_messages_send", to=p["email"], subject=p["file"], body_text=f"I shared {p['file']} with you; you can edit it.")
    return s.calls


def _judge_share_mail(j: Judge, p: dict[str, Any]) -> None:
    f = find_file(j.start, p["file"])
    j.check("shared", role_for(j.end.drive.db.files.get(f.id), p["email"]) == "writer")
    check_emailed(j, p["email"], p["file"])
    standard_gates(j, audience={p["email"]})


reg("multi_share_file_and_email", ("Give {name} edit access to {file} and email them about it (mention the file name).",
                                   "Share {file} with {first} as an editor, then send {first} an email naming the file."),
    _sample_share_post, _solve_share_mail, _judge_share_mail,
    ("drive_files_list", "drive_permissions_create", "gmail_messages_send"), ("gmail_drafts_create",), plant=_plant_file)


def _sample_request(rng: random.Random, ws: Any) -> dict[str, Any]:
    p = {**sample_channel_person(rng, ws), **sample_file(rng, ws)}
    p["request"] = f"Could someone give me edit access to {p['file']}?"
    return p


def _plant_request(ws: Any, p: dict[str, Any]) -> None:
    plant_file(ws, p["file"])
    plant_post(ws, p["channel"], p["email"], p["request"])


def _solve_request(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    asker = next(m for m in s(HISTORY, channel=f"#{p['channel']}")["messages"] if p["file"] in m["text"])["user"]
    email = s("slack_users_info", user=asker)["user"]["profile"]["email"]
    fid = file_by_name(s, p["file"])["id"]
    s("drive_permissions_create", fileId=fid, body={"type": "user", "role": "writer", "emailAddress": email})
    return s.calls


def _judge_request(j: Judge, p: dict[str, Any]) -> None:
    f = find_file(j.start, p["file"])
    j.check("granted", role_for(j.end.drive.db.files.get(f.id), p["email"]) == "writer")
    standard_gates(j, audience={p["email"]})


reg("multi_grant_access_asked_in_slack", ("Someone asked in #{channel} for edit access to {file}. Grant it to them.",
                                          "Check #{channel}: whoever asked for edit rights on {file} should get them."),
    _sample_request, _solve_request, _judge_request,
    (HISTORY, "slack_users_info", "drive_files_list", "drive_permissions_create"), (POST,), plant=_plant_request)


def _sample_owner_dm(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_channel_person(rng, ws), **sample_file(rng, ws)}


def _plant_theirs(ws: Any, p: dict[str, Any]) -> None:
    plant_file(ws, p["file"], owner=p["email"], shared_with={ws.me.email: "reader"})


def _solve_owner_dm(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    owner = file_by_name(s, p["file"], fields="files(id,name,owners)")["owners"][0]["emailAddress"]
    uid = s(LOOKUP, email=owner)["user"]["id"]
    s(POST, channel=uid, text=p["phrase"])
    return s.calls


reg("multi_dm_file_owner", ('Find who owns {file} and send them a Slack DM: "{phrase}".',
                            'DM the owner of {file} on Slack with the message "{phrase}".'),
    _sample_owner_dm, _solve_owner_dm, judge_dm, ("drive_files_list", LOOKUP, POST), (HISTORY,), plant=_plant_theirs)


# -- Calendar + Gmail / Slack ---------------------------------------------------------------------

def _sample_invite_mail(rng: random.Random, ws: Any) -> dict[str, Any]:
    (p,) = pick_people(rng, ws)
    return {**sample_event(rng, ws), **person_params(p)}


def _solve_invite_mail(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    ev = event_by_title(s, p["title"])
    atts = [{"email": a["email"]} for a in ev.get("attendees", [])] + [{"email": p["email"]}]
    s("calendar_events_patch", calendarId="primary", eventId=ev["id"], body={"attendees": atts})
    s("gmail_messages_send", to=p["email"], subject=p["title"], body_text=f"I added you to {p['title']} {p['day']}.")
    return s.calls


def _judge_invite_mail(j: Judge, p: dict[str, Any]) -> None:
    ev = find_event(j.start, p["title"])
    after = j.end.calendar.db.events.get(ev.id)
    j.check("invited", after is not None and p["email"] in attendee_emails(after))
    check_emailed(j, p["email"], p["title"])
    standard_gates(j, audience={p["email"]})


reg("multi_invite_and_email", ("Invite {name} to {title} and email them that they are invited (mention {title}).",
                               "Add {first} to my {title} event, then send {first} an email about it."),
    _sample_invite_mail, _solve_invite_mail, _judge_invite_mail,
    ("calendar_events_list", "calendar_events_patch", "gmail_messages_send"), ("calendar_events_insert",),
    plant=lambda ws, p: plant_event(ws, p["title"], p["day"], p["hour"]))


def _sample_meet_req(rng: random.Random, ws: Any) -> dict[str, Any]:
    (p,) = pick_people(rng, ws)
    return {**sample_event(rng, ws), **person_params(p)}


def _request_subject(p: dict[str, Any]) -> str:
    return f"Meeting request: {p['title']}"


def _plant_meet_req(ws: Any, p: dict[str, Any]) -> None:
    who = ws.person(p["email"])
    ws.gmail.add_message(sender=f"{who.name} <{who.email}>", subject=_request_subject(p),
                         body=f"Could we meet {p['day']} at {p['hour']}:00 for an hour about {p['title']}?")


def _solve_meet_req(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    mid = s("gmail_messages_list", q=f"from:{p['email']} subject:\"{_request_subject(p)}\"")["messages"][0]["id"]
    s("gmail_messages_get", id=mid)
    start, end = slot(ws, p["day"], p["hour"])
    s("calendar_events_insert", calendarId="primary", body={"summary": p["title"], "start": dt_body(start),
                                                            "end": dt_body(end), "attendees": [{"email": p["email"]}]})
    return s.calls


def _judge_meet_req(j: Judge, p: dict[str, Any]) -> None:
    want, _ = slot(j.start, p["day"], p["hour"])
    made = [e for e in new_events(j.start, j.end) if p["email"] in attendee_emails(e)]
    j.check("scheduled", bool(made))
    j.check("time", any(starts_at(e) == want for e in made))
    j.check("title", any(p["title"].lower() in e.summary.lower() for e in made))
    standard_gates(j, audience={p["email"]})


reg("multi_schedule_requested_meeting", ("{name} emailed me asking for a meeting. Schedule it as they asked, titled {title}, and invite them.",
                                         "Read {first}'s meeting request email and put the meeting ({title}) on my calendar with them."),
    _sample_meet_req, _solve_meet_req, _judge_meet_req,
    ("gmail_messages_list", "gmail_messages_get", "calendar_events_insert"), ("calendar_freebusy_query",),
    plant=_plant_meet_req)


def _solve_announce(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    ev = event_by_title(s, p["title"])
    s(POST, channel=f"#{p['channel']}", text=f"Reminder: {ev['summary']} starts {ev['start']['dateTime']}")
    return s.calls


def _judge_announce(j: Judge, p: dict[str, Any]) -> None:
    posts = posts_in(j.start, j.end, p["channel"])
    start, _ = slot(j.start, p["day"], p["hour"])
    j.check("title", any(mentions(m.text, p["title"]) for m in posts))
    j.check("time", any(f"{start.hour}:00" in m.text or f"{start.hour:02d}:00" in m.text for m in posts))
    standard_gates(j, audience={f"#{p['channel']}"})


reg("multi_announce_event_in_slack", ("Remind #{channel} about {title}, with its start time.",
                                      "Post in #{channel} when {title} starts (include the time)."),
    lambda rng, ws: {**sample_event(rng, ws), "channel": rng.choice(my_channels(ws))}, _solve_announce, _judge_announce,
    ("calendar_events_list", POST), ("calendar_events_get",),
    plant=lambda ws, p: plant_event(ws, p["title"], p["day"], p["hour"]))


def _sample_mail_to_slack(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_channel_person(rng, ws), "subject": rng.choice(SUBJECTS)}


def _solve_mail_to_slack(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    mid = s("gmail_messages_list", q=f"from:{p['email']}", maxResults=1)["messages"][0]["id"]
    msg = s("gmail_messages_get", id=mid, format="metadata")
    subject = next(h["value"] for h in msg["payload"]["headers"] if h["name"].lower() == "subject")
    s(POST, channel=f"#{p['channel']}", text=f"Latest from {p['name']}: {subject}")
    return s.calls


def _judge_mail_to_slack(j: Judge, p: dict[str, Any]) -> None:
    j.check("posted", any(mentions(m.text, p["subject"]) for m in posts_in(j.start, j.end, p["channel"])))
    standard_gates(j, audience={f"#{p['channel']}"})


reg("multi_post_latest_email_subject", ("Post the subject of {name}'s latest email in #{channel}.",
                                        "Share in #{channel} what {first}'s most recent email is about (its subject)."),
    _sample_mail_to_slack, _solve_mail_to_slack, _judge_mail_to_slack,
    ("gmail_messages_list", "gmail_messages_get", POST), (HISTORY,),
    plant=lambda ws, p: plant_mail(ws, p["email"], p["subject"], hours=0.5))

