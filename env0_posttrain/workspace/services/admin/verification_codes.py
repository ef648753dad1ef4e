"""Admin SDK Directory verificationCodes: a user's backup codes for 2-step verification."""

from __future__ import annotations

from typing import Any

from ...base import DIGITS, api
from .data_model import VerificationCode
from .render import code_json
from .state import A, AdminState


class VerificationCodes(AdminState):
    @api("directory.verificationCodes.list", f"GET {A}/users/{{userKey}}/verificationCodes",
         "A user's 2-step backup codes.", params={"userKey": ""}, name="admin_verificationCodes_list")
    def verificationCodes_list(self, userKey: str) -> dict[str, Any]:
        return self._owned(self.db.codes, userKey, "verificationCode", "admin#directory#verificationCodesList",
                           code_json)

    @api("directory.verificationCodes.generate", f"POST {A}/users/{{userKey}}/verificationCodes/generate",
         "Replace a user's backup codes with 10 new ones.", writes=True, status=204, params={"userKey": ""},
         name="admin_verificationCodes_generate")
    def verificationCodes_generate(self, userKey: str) -> None:
        u = self._user(userKey)
        self._drop_codes(u.id)
        for _ in range(10):
            code = self.new_id("code", DIGITS, 8)
            self.db.codes[f"{u.id}/{code}"] = VerificationCode(userId=u.id, verificationCode=code)

    @api("directory.verificationCodes.invalidate", f"POST {A}/users/{{userKey}}/verificationCodes/invalidate",
         "Invalidate all of a user's backup codes.", writes=True, status=204, params={"userKey": ""},
         name="admin_verificationCodes_invalidate")
    def verificationCodes_invalidate(self, userKey: str) -> None:
        self._drop_codes(self._user(userKey).id)
