"""google-api-python-client against the live app: events.quickAdd reads dates, named times and time ranges relative
to the workspace clock (never the parts of an ISO date as a range), and an all-day start with a timed end (or the
reverse) is a 400 as on Google."""

from __future__ import annotations

import pytest

from env0_posttrain_tests.support.google_clients import reseeded_service, status_of
from env0_posttrain_tests.support.live_workspace import tls_server_fixture

pytestmark = pytest.mark.filterwarnings("ignore")
server = tls_server_fixture()


@pytest.fixture()
def cal(server):
    c = reseeded_service(server[0], "calendar", "v3", "calendar/v3/")
    c.calendars().patch(calendarId="primary", body={"timeZone": "UTC"}).execute()
    return c


@pytest.mark.parametrize("text, summary, start, end", [
    ("Lunch with Ann tomorrow 12pm-1pm", "Lunch with Ann", "2026-03-12T12:00:00Z", "2026-03-12T13:00:00Z"),
    ("Meeting on Dec 12 3-4pm", "Meeting", "2026-12-12T15:00:00Z", "2026-12-12T16:00:00Z"),
    ("Review 2026-03-14 10am-11am", "Review", "2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z"),
    ("Coffee with Bo tomorrow at noon", "Coffee with Bo", "2026-03-12T12:00:00Z", "2026-03-12T13:00:00Z"),
])
def test_quick_add_reads_dates_and_ranges(cal, text, summary, start, end):
    ev = cal.events().quickAdd(calendarId="primary", text=text).execute()
    assert (ev["summary"], ev["start"]["dateTime"], ev["end"]["dateTime"]) == (summary, start, end)


def test_quick_add_date_alone_is_all_day(cal):
    ev = cal.events().quickAdd(calendarId="primary", text="Offsite 2026-03-14").execute()
    assert (ev["start"], ev["end"]) == ({"date": "2026-03-14"}, {"date": "2026-03-15"})


def test_all_day_start_with_timed_end_is_refused(cal):
    mixed = {"summary": "x", "start": {"date": "2026-03-16"}, "end": {"dateTime": "2026-03-16T10:00:00Z"}}
    assert status_of(cal.events().insert(calendarId="primary", body=mixed)) == (400, "invalid")
    reverse = {"summary": "x", "start": {"dateTime": "2026-03-16T10:00:00Z"}, "end": {"date": "2026-03-17"}}
    assert status_of(cal.events().insert(calendarId="primary", body=reverse)) == (400, "invalid")
    ev = cal.events().insert(calendarId="primary", body={"summary": "day", "start": {"date": "2026-03-16"},
                                                         "end": {"date": "2026-03-17"}}).execute()
    assert status_of(cal.events().patch(calendarId="primary", eventId=ev["id"],
                                        body={"end": {"dateTime": "2026-03-16T10:00:00Z"}})) == (400, "invalid")
