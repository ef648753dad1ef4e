"""Drive v3 changes (getStartPageToken / list / watch), files.watch, channels.stop, about.get,
files.generateIds and files.emptyTrash.

Every write to a file appends to the change log (`record_change`, called by the toolkit); a page
token is a change id, and changes.list reports each file once, at its latest change after the token,
with the file as it is now (or `removed` once it is gone), as Drive does.
"""

from __future__ import annotations

from typing import Any

from ...base import DRIVE_ALPHABET, api
from ...errors import bad_request, forbidden, not_found
from ...paging import check_size, select_fields
from ..calendar.settings import SettingsMixin
from .access import file_json, role_of
from .data_model import FOLDER, GDOC, Change, File

D = "drive/v3"
_CHANNEL = {"body": "Channel: id, type ('web_hook'), address"}
CHANGES_KEPT = 1000  # changes kept (every write's savepoint copies the log); an older token lists from the oldest kept
_EXPORTS = {GDOC: ["text/plain", "text/markdown", "text/html"]}


class Changes:
    db: Any
    ws: Any

    def record_change(self, f: File, removed: bool = False) -> None:
        self.db.changeId += 1
        n = self.db.changeId
        self.db.changeLog[f"{n:012d}"] = Change(id=n, fileId=f.id, owner=f.ownerEmail, time=self.ws.now_rfc3339(),
                                                removed=removed)
        if len(self.db.changeLog) > CHANGES_KEPT:
            self.db.changeLog.pop(next(iter(self.db.changeLog)))

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
         writes=True, params={"pageToken": "required", **_CHANNEL})
    def changes_watch(self, pageToken: str, body: dict, driveId: str | None = None,
                      supportsAllDrives: bool | None = None) -> dict[str, Any]:
        self._token(pageToken)
        return SettingsMixin._watch(self, body, f"https://www.googleapis.com/drive/v3/changes?pageToken={pageToken}")  # type: ignore[arg-type]

    @api("drive.files.watch", f"POST {D}/files/{{fileId}}/watch", "Watch one file for changes.", writes=True,
         params={"fileId": "", **_CHANNEL})
    def files_watch(self, fileId: str, body: dict, supportsAllDrives: bool | None = None,
                    acknowledgeAbuse: bool | None = None) -> dict[str, Any]:
        f = self._file(fileId)  # type: ignore[attr-defined]
        return SettingsMixin._watch(self, body, f"https://www.googleapis.com/drive/v3/files/{f.id}?alt=json")  # type: ignore[arg-type]

    @api("drive.channels.stop", f"POST {D}/channels/stop", "Stop a push channel. body: {id, resourceId}.",
         writes=True, status=204, params={"body": "{id, resourceId}"})
    def channels_stop(self, body: dict) -> None:
        ch = self.db.channels.get(body.get("id")) if isinstance(body.get("id"), str) else None
        if ch is None or body.get("resourceId") != ch.resourceId:
            raise not_found(f"Channel '{body.get('id')}' not found for project")
        del self.db.channels[ch.id]

    # -- about, generateIds, emptyTrash --------------------------------------------------------------
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
               "importFormats": {"text/plain": [GDOC], "text/html": [GDOC]}, "exportFormats": dict(_EXPORTS),
               "maxImportSizes": {GDOC: "10485760"}, "maxUploadSize": str(5 * 1024 ** 4), "appInstalled": False,
               "canCreateDrives": True, "folderColorPalette": ["#ac725e", "#d06b64", "#4986e7", "#16a765"]}
        return select_fields(out, fields)

    @api("drive.files.generateIds", f"GET {D}/files/generateIds",
         "Ids to give files.create in body.id (so a retried create cannot make a duplicate).",
         params={"count": "1-1000, default 10"})
    def files_generateIds(self, count: int | None = None, space: str = "drive", type: str = "files",
                          fields: str | None = None) -> dict[str, Any]:
        n = check_size(count, 10, 1000, "count")
        if space not in ("drive", "appDataFolder"):
            raise bad_request(f"Invalid Value: space {space}", "invalid", "space")
        ids = [self.new_id("file", DRIVE_ALPHABET, 33) for _ in range(n)]  # type: ignore[attr-defined]
        return {"kind": "drive#generatedIds", "space": space, "ids": ids}

    @api("drive.files.emptyTrash", f"DELETE {D}/files/trash", "Permanently delete every file you own in the trash.",
         writes=True, status=204)
    def files_emptyTrash(self, driveId: str | None = None, enforceSingleParent: bool | None = None) -> None:
        me = self.ws.me.email
        if driveId is not None:
            d = self.db.drives.get(driveId)
            if d is None:
                raise not_found(f"Shared drive not found: {driveId}")
            if role_of(self.ws, self.db.files[d.id]) < 5:
                raise forbidden("The user does not have sufficient permissions for this file.",
                                "insufficientFilePermissions")
        for f in list(self.db.files.values()):
            in_scope = (driveId in f.parents) if driveId else (f.ownerEmail == me and not self._in_shared_drive(f))
            if f.trashed and in_scope and f.id in self.db.files and f.id not in self.db.drives:
                self.files_delete(f.id)  # type: ignore[attr-defined]

    def _in_shared_drive(self, f: File) -> bool:
        return any(p in self.db.drives for p in f.parents)
