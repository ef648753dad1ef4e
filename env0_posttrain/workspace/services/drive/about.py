"""Drive v3 about.get: the user, their storage quota and the import/export formats."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request
from ...paging import select_fields
from .data_model import FOLDER, GDOC
from .files import EXPORTS
from .state import DriveState

D = 'drive/v3'



class About(DriveState):
    @api("drive.about.get", f"GET {D}/about", "Your Drive user, storage quota and formats ('fields' is required).",
         params={"fields": "required, e.g. user,storageQuota or *"})
    def about_get(self, fields: str | None = None) -> dict[str, Any]:
        if not fields:
            raise bad_request("The 'fields' parameter is required for this operation.", "required", "fields")
        me = self.ws.me
        mine = [f for f in self.db.files.values() if f.ownerEmail == me.email and f.mimeType != FOLDER]
        used = sum(len(f.data) for f in mine)
        trash = sum(len(f.data) for f in mine if f.trashed)
        out = {"kind": "drive#about",
               "user": {"kind": "drive#user", "displayName": me.name, "me": True, "permissionId": me.user_id,
                        "emailAddress": me.email},
               "storageQuota": {"limit": str(30 * 1024 ** 3), "usage": str(used), "usageInDrive": str(used),
                                "usageInDriveTrash": str(trash)},
               "importFormats": {"text/plain": [GDOC], "text/html": [GDOC]}, "exportFormats": {k: list(v) for k, v in EXPORTS.items()},
               "maxImportSizes": {GDOC: "10485760"}, "maxUploadSize": str(5 * 1024 ** 4), "appInstalled": False,
               "canCreateDrives": True, "folderColorPalette": ["#ac725e", "#d06b64", "#4986e7", "#16a765"]}
        return select_fields(out, fields)
