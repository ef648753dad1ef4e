"""The clock a user chooses for a served workspace (util/clock.py, `workspace serve --clock`): on the host's clock an app
that schedules works as against the real services (slack_sdk schedules a message an hour from now, stripe-python's
`created` filter finds what it just made); frozen or running from an instant seeds there; an episode's workspace
stays frozen."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import httpx
import pytest
import stripe
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from env0_posttrain.workspace import Workspace
from env0_posttrain.util.clock import Clock
from env0_posttrain.workspace.local_server import running_server

KEY = "sk_test_env_0_51deterministic"
LATER = datetime(2031, 5, 4, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def host_server():
    with running_server(seed=0, clock=Clock.parse("host")) as (base, app):
        yield base, app


def test_parse_names_every_mode_and_refuses_the_rest():
    assert Clock.parse("frozen") == Clock("frozen")
    assert Clock.parse("running@2031-05-04T12:00:00Z") == Clock("running", LATER)
    assert Clock.parse("frozen@2031-05-04T12:00:00") == Clock("frozen", LATER)  # no offset: UTC
    for bad in ("ticking", "host@2031-05-04T12:00:00Z", "frozen@next tuesday"):
        with pytest.raises(ValueError, match="clock"):
            Clock.parse(bad)


def test_slack_schedules_an_hour_ahead_on_the_host_clock(host_server):
    base, app = host_server
    client = WebClient(token="xoxp-local", base_url=f"{base}/api/")
    channel = next(c.id for c in app.state.ws.slack.db.channels.values() if app.state.ws.slack.me in c.members)
    post_at = int(time.time()) + 3600
    res = client.chat_scheduleMessage(channel=channel, post_at=post_at, text="standup notes")
    assert res["ok"] and int(res["post_at"]) == post_at
    with pytest.raises(SlackApiError) as e:
        client.chat_scheduleMessage(channel=channel, post_at=int(time.time()) - 3600, text="too late")
    assert e.value.response["error"] == "time_in_past"


def test_stripe_created_filter_against_real_time(host_server):
    client = stripe.StripeClient(KEY, base_addresses={"api": host_server[0]}, max_network_retries=0)
    since = int(time.time()) - 60
    made = client.v1.customers.create(params={"name": "Ada Lovelace"})
    assert made.created >= since
    found = client.v1.customers.list(params={"created": {"gte": since}})
    assert [c.id for c in found.data] == [made.id]


def test_frozen_and_running_clocks_seed_at_their_instant():
    with running_server(seed=0, clock=Clock.parse("frozen@2031-05-04T12:00:00Z")) as (base, app):
        assert httpx.get(f"{base}/_admin/health").json()["now"] == LATER.isoformat()
        httpx.post(f"{base}/_admin/seed", json={"seed": 1}).raise_for_status()  # a reseed keeps the chosen clock
        assert app.state.ws.now == LATER
    with running_server(seed=0, clock=Clock.parse("running@2031-05-04T12:00:00Z")) as (base, app):
        now = datetime.fromisoformat(httpx.get(f"{base}/_admin/health").json()["now"])
        assert LATER <= now < LATER + timedelta(days=1)
    with running_server(seed=0, gated=True, clock=Clock.parse("frozen@2031-05-04T12:00:00Z")) as (base, app):
        assert app.state.ws.auth.now() == LATER  # tokens are issued and expire on the chosen clock


def test_an_episode_workspace_stays_frozen():
    ws = Workspace.seeded(0)
    assert ws.now == ws.now == datetime(2026, 3, 11, 16, 0, tzinfo=timezone.utc)
    assert ws.fork().now == ws.now


def test_serve_refuses_a_clock_it_cannot_read():
    from typer.testing import CliRunner

    from env0_posttrain.cli.main import app

    res = CliRunner().invoke(app, ["workspace", "serve", "--clock", "ticking"])
    assert res.exit_code == 2 and "--clock" in res.output and "frozen, running, host" in res.output
