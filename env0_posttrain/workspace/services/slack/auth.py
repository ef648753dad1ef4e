"""Slack auth.test: who the token belongs to."""

from __future__ import annotations

from typing import Any

from ...base import api
from .data_model import TEAM
from .state import SlackState


class Auth(SlackState):
    @api("auth.test", "POST api/auth.test", "Who you are in Slack (your user id).")
    def auth_test(self) -> dict[str, Any]:
        team = self.ws.company.name
        return {"ok": True, "url": f"https://{self.ws.domain.split('.')[0]}.slack.com/", "team": team,
                "user": self.ws.me.handle, "team_id": TEAM, "user_id": self.me, "is_enterprise_install": False}
