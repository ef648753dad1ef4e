"""Drive v3 changes (getStartPageToken / list / watch).

Every write to a file appends to the change log (`record_change`, state.py); a page
token is a change id, and changes.list reports each file once, at its latest change after the token,
with the file as it is now (or `removed` once it is gone), as Drive does.
"""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request
from ...paging import check_size, select_fields
from ..push_channels import CHANNEL_PARAMS
from .access import file_json, role_of
from .data_model import Change
from .state import DriveState

D = "drive/v3"


class Changes(DriveState):
    @api("drive.changes.getStartPageToken", f"GET {D}/changes/startPageToken",
         "A page token for changes.list: changes after now.")
    def changes_getStartPageToken(self, driveId: str | None = None, supportsAllDrives: bool | None = None,
                                  supportsTeamDrives: bool | None = None, fields: str | None = None) -> dict[str, Any]:
        return {"kind": "drive#startPageToken", "startPageToken": str(self.db.changeId + 1)}

    def _token(self, pageToken: str) -> int:
        if not pageToken.isdigit() or int(pageToken) < 1:
            raise bad_request(f"Invalid Value: pageToken {pageToken}", "invalid", "pageToken")
        return int(pageToken)

    @api("drive.changes.list", f"GET {D}/changes",
         "Files changed since a page token (from changes.getStartPageToken or a newStartPageToken).",
         params={"pageToken": "required", "pageSize": "", "includeRemoved": "", "fields": ""})
    def changes_list(self, pageToken: str, pageSize: int | None = None, includeRemoved: bool = True,
                     restrictToMyDrive: bool = False, spaces: str | None = None, driveId: str | None = None,
                     includeItemsFromAllDrives: bool | None = None, supportsAllDrives: bool | None = None,
                     fields: str | None = None) -> dict[str, Any]:
        start, size = self._token(pageToken), check_size(pageSize, 100, 1000, "pageSize")
        latest: dict[str, Change] = {}
        for key in sorted(k for k in self.db.changeLog if int(k) >= start):
            c = self.db.changeLog[key]
            latest.pop(c.fileId, None)
            latest[c.fileId] = c  # re-inserted: ordered by each file's latest change
        me, out_changes, last = self.ws.me.email, [], self.db.changeId
        for c in latest.values():
            f = self.db.files.get(c.fileId)
            visible = f is not None and role_of(self.ws, f) >= 1 and f.id not in self.db.drives
            if not visible and not (c.owner == me and includeRemoved):
                continue
            if restrictToMyDrive and f is not None and f.ownerEmail != me:
                continue
            if len(out_changes) == size:
                last = c.id - 1
                break
            entry: dict[str, Any] = {"kind": "drive#change", "changeType": "file", "time": c.time,
                                     "removed": not visible, "fileId": c.fileId}
            if visible:
                entry["file"] = file_json(self.ws, f)
            out_changes.append(entry)
        out: dict[str, Any] = {"kind": "drive#changeList", "changes": out_changes}
        if last < self.db.changeId:
            out["nextPageToken"] = str(last + 1)
        else:
            out["newStartPageToken"] = str(self.db.changeId + 1)
        return select_fields(out, fields) if fields else out

    # -- watch channels (one shape with Calendar's) --------------------------------------------------
    @api("drive.changes.watch", f"POST {D}/changes/watch", "Watch for changes (registers a push channel).",
         writes=True, params={"pageToken": "required", **CHANNEL_PARAMS})
    def changes_watch(self, pageToken: str, body: dict, driveId: str | None = None,
                      supportsAllDrives: bool | None = None) -> dict[str, Any]:
        self._token(pageToken)
        return self.open_channel(body, f"https://www.googleapis.com/drive/v3/changes?pageToken={pageToken}")
