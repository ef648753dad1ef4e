"""Slack team.info: the workspace itself."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import slack_error
from .data_model import TEAM
from .state import SlackState


class Team(SlackState):
    @api("team.info", "POST api/team.info", "The workspace (team): id, name, domain.")
    def team_info(self, team: str | None = None, domain: str | None = None) -> dict[str, Any]:
        if team and team != TEAM:
            raise slack_error("team_not_found")
        sub = self.ws.domain.split(".")[0]
        return {"ok": True, "team": {"id": TEAM, "name": self.ws.company.name, "url": f"https://{sub}.slack.com/",
                                     "domain": sub, "email_domain": self.ws.domain,
                                     "icon": {"image_default": True}, "avatar_base_url": "", "is_verified": False}}
