"""Slack's seeding helpers as seeders call them: rows planted under fixed ids, or under new ones."""

from __future__ import annotations

import pytest

from env0_posttrain.workspace import Workspace
from env0_posttrain_tests.support.workspace import ok


def test_add_user_keeps_a_fixed_id_and_draws_a_new_one_otherwise():
    ws = Workspace.seeded(7)
    fixed = ws.slack.add_user(id="U0FIXED", name="sam", real_name="Sam Ro", email="sam@example.com", is_admin=True)
    assert ws.slack.db.users["U0FIXED"] is fixed and fixed.is_admin and fixed.tz == "America/Los_Angeles"
    drawn = [ws.slack.add_user(name=f"bot{i}", real_name="Bot", email="", is_bot=True) for i in range(2)]
    assert drawn[0].id != drawn[1].id and all(u.id.startswith("U") and len(u.id) == 11 for u in drawn)
    assert drawn[0].id not in {"U0FIXED"} and ws.slack.db.users[drawn[1].id].is_bot is True
    again = Workspace.seeded(7)
    again.slack.add_user(id="U0FIXED", name="sam", real_name="Sam Ro", email="sam@example.com")
    assert again.slack.add_user(name="bot0", real_name="Bot", email="").id == drawn[0].id  # same seed, same ids
    listed = {u["id"] for u in ok(ws, "slack_users_list", {})["members"]}
    assert {"U0FIXED", drawn[0].id} <= listed


def test_put_channel_stores_the_row_as_given():
    ws = Workspace.seeded(7)
    me, other = ws.slack.me, ws.directory[5].slack_user_id
    dm = ws.slack.put_channel(id="D0FIXED", is_im=True, im_user=other, creator=me, members=(me, other), created=1)
    assert ws.slack.db.channels["D0FIXED"] is dm and dm.is_im and dm.im_user == other
    ws.slack.add_message("D0FIXED", user=other, text="hello")
    assert [m["text"] for m in ok(ws, "slack_conversations_history", {"channel": "D0FIXED"})["messages"]] == ["hello"]
    with pytest.raises(ValueError):
        ws.slack.put_channel(name="no-id")
