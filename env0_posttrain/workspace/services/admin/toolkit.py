"""The Admin SDK Directory service, assembled from one mixin per resource (users, groups, members, tokens, asps,
verificationCodes) over the state mechanics, plus the seeding helpers."""

from __future__ import annotations

from datetime import datetime

from ...base import DIGITS, HEX, make_id
from .asps import Asps
from .data_model import Asp, Group, Member, Token
from .groups import Groups
from .members import Members
from .tokens import Tokens
from .users import Users
from .verification_codes import VerificationCodes


class Admin(Users, Groups, Members, Tokens, Asps, VerificationCodes):
    """Seeding helpers (not tools) on top of every resource."""

    def add_token(self, email: str, *, display_text: str, scopes: list[str], client_id: str | None = None,
                  native_app: bool = False) -> Token:
        """Plant an OAuth grant of a third-party app for a user."""
        uid = self._user(email).id
        cid = client_id or (make_id(self.ws.seed, f"admin.client.{display_text}", self.db.seq, DIGITS, 12) +
                            "-" + self.new_id("client", "abcdefghijklmnopqrstuvwxyz0123456789", 32) +
                            ".apps.googleusercontent.com")
        t = Token(userId=uid, clientId=cid, displayText=display_text, scopes=tuple(scopes), nativeApp=native_app)
        self.db.tokens[f"{uid}/{cid}"] = t
        return t

    def add_asp(self, email: str, *, name: str, created: datetime, last_used: datetime | None = None) -> Asp:
        """Plant an app password."""
        uid = self._user(email).id
        self.db.seq += 1
        code = 1000 + self.db.seq
        a = Asp(userId=uid, codeId=code, name=name, creationTime=int(created.timestamp() * 1000),
                lastTimeUsed=int((last_used or created).timestamp() * 1000))
        self.db.asps[f"{uid}/{code}"] = a
        return a

    def add_group(self, email: str, *, name: str, description: str = "", members: dict[str, str] | None = None) -> Group:
        g = Group(id="0" + self.new_id("group", HEX, 14), email=email, name=name, description=description)
        self.db.groups[g.id] = g
        for addr, role in (members or {}).items():
            u = self._user(addr)
            self.db.members[f"{g.id}/{u.id}"] = Member(groupId=g.id, id=u.id, email=u.primaryEmail, role=role)
        return g

    def add_codes(self, email: str, n: int = 10) -> list[str]:
        u = self._user(email)
        self.verificationCodes_generate(u.id)
        return [c.verificationCode for c in self.db.codes.values() if c.userId == u.id][:n]
