"""Drive v3 shared drives (drives.*).

A shared drive is a SharedDrive row plus a root folder row with the same id: files go in it with
parents=[driveId], and its permissions are the drive's membership (the creator is its organizer,
stored as the root's owner permission). The root folder is never listed by files.list.
"""

from __future__ import annotations

from typing import Any

from ...base import DRIVE_ALPHABET, api, make_id
from ...errors import bad_request, conflict, forbidden, google_error
from ...paging import check_size, page, select_fields
from .access import role_of
from .data_model import FOLDER, SharedDrive
from .state import DriveState

D = "drive/v3"
_RGB = "0123456789abcdef"


def _drive_not_found(did: str) -> Exception:
    return google_error(404, f"Shared drive not found: {did}", "notFound", "driveId")


class SharedDrives(DriveState):
    def _drive_json(self, d: SharedDrive) -> dict[str, Any]:
        role = role_of(self.ws, self.db.files[d.id])
        organizer = role >= 5
        out: dict[str, Any] = {"kind": "drive#drive", "id": d.id, "name": d.name, "createdTime": d.createdTime,
                               "hidden": d.hidden, "colorRgb": d.colorRgb or "#4986e7",
                               "capabilities": {"canAddChildren": role >= 3, "canDeleteDrive": organizer,
                                                "canManageMembers": organizer, "canRenameDrive": organizer,
                                                "canShare": organizer, "canEdit": role >= 3},
                               "restrictions": {"adminManagedRestrictions": False, "copyRequiresWriterPermission": False,
                                                "domainUsersOnly": False, "driveMembersOnly": False}}
        return out

    def _drive(self, driveId: str, need: int = 1) -> SharedDrive:
        d = self.db.drives.get(driveId)
        if d is None or role_of(self.ws, self.db.files[d.id]) < 1:
            raise _drive_not_found(driveId)
        if role_of(self.ws, self.db.files[d.id]) < need:
            raise forbidden("The user does not have sufficient permissions for this shared drive.",
                            "insufficientFilePermissions")
        return d

    @api("drive.drives.create", f"POST {D}/drives", "Create a shared drive (requestId: any unique string).",
         writes=True, params={"requestId": "idempotency key", "body": "{name, colorRgb}"})
    def drives_create(self, requestId: str, body: dict) -> dict[str, Any]:
        if not requestId.strip():
            raise bad_request("Required parameter: requestId", "required", "requestId")
        if any(d.requestId == requestId for d in self.db.drives.values()):
            raise conflict("A shared drive with this requestId already exists.", "duplicate")
        name = body.get("name")
        if not isinstance(name, str) or not name.strip():
            raise bad_request("The shared drive name field is required.", "required", "name")
        color = self._color(body.get("colorRgb"))
        did = "0A" + make_id(self.ws.seed, f"drive.shared.{requestId}", self.db.seq, DRIVE_ALPHABET, 17) + "Uk9PVA"
        self.db.seq += 1
        now, me = self.ws.now_rfc3339(), self.ws.me.email
        root = self._new_file(did, name.strip(), FOLDER, (), me, None, when=now)
        self.db.files[did] = root.model_copy(update={"driveId": did})
        d = SharedDrive(id=did, name=name.strip(), createdTime=now, requestId=requestId, creatorEmail=me, colorRgb=color)
        self.db.drives[did] = d
        return self._drive_json(d)

    def _color(self, v: Any) -> str | None:
        if v is None:
            return None
        if not isinstance(v, str) or len(v) != 7 or v[0] != "#" or any(c not in _RGB for c in v[1:].lower()):
            raise bad_request("Invalid value for colorRgb.", "invalid", "colorRgb")
        return v.lower()

    @api("drive.drives.get", f"GET {D}/drives/{{driveId}}", "Get a shared drive.", params={"driveId": ""})
    def drives_get(self, driveId: str, useDomainAdminAccess: bool = False) -> dict[str, Any]:
        return self._drive_json(self._drive(driveId))

    @api("drive.drives.list", f"GET {D}/drives", "List the shared drives you are a member of.",
         params={"pageSize": "1-100, default 10", "pageToken": "", "q": "e.g. name contains 'Eng'"})
    def drives_list(self, pageSize: int | None = None, pageToken: str | None = None, q: str | None = None,
                    useDomainAdminAccess: bool = False, fields: str | None = None) -> dict[str, Any]:
        size = check_size(pageSize, 10, 100, "pageSize")
        rows = sorted((d for d in self.db.drives.values() if role_of(self.ws, self.db.files[d.id]) >= 1),
                      key=lambda d: (d.createdTime, d.id))
        if q:
            rows = [d for d in rows if self._drive_q(q, d)]
        chunk, nxt = page(rows, pageToken, size)
        out: dict[str, Any] = {"kind": "drive#driveList", "drives": [self._drive_json(d) for d in chunk]}
        if nxt:
            out["nextPageToken"] = nxt
        return select_fields(out, fields) if fields else out

    def _drive_q(self, q: str, d: SharedDrive) -> bool:
        """The drives.list q subset: name contains/= 'x', hidden = true|false, joined by 'and'."""
        import re

        for term in re.split(r"\s+and\s+", q.strip(), flags=re.IGNORECASE):
            m = re.fullmatch(r"(name|hidden)\s*(contains|=|!=)\s*'?([^']*)'?", term.strip(), flags=re.IGNORECASE)
            if m is None:
                raise bad_request(f"Invalid Value: q {q}", "invalid", "q")
            field, op, value = m.group(1).lower(), m.group(2).lower(), m.group(3)
            have = d.name if field == "name" else str(d.hidden).lower()
            ok = value.lower() in have.lower() if op == "contains" else (have == value.lower() if field == "hidden"
                                                                        else have == value)
            if ok == (op == "!="):
                return False
        return True

    @api("drive.drives.update", f"PATCH {D}/drives/{{driveId}}", "Rename or recolour a shared drive.", writes=True,
         params={"driveId": "", "body": "{name, colorRgb}"})
    def drives_update(self, driveId: str, body: dict, useDomainAdminAccess: bool = False) -> dict[str, Any]:
        d = self._drive(driveId, need=5)
        upd: dict[str, Any] = {}
        if set(body) - {"name", "colorRgb", "themeId", "restrictions"}:
            raise bad_request("The resource body includes fields which are not directly writable.", "fieldNotWritable")
        if "name" in body:
            if not isinstance(body["name"], str) or not body["name"].strip():
                raise bad_request("Invalid value for name.", "invalid", "name")
            upd["name"] = body["name"].strip()
            self._touch(self.db.files[d.id], name=upd["name"])
        if "colorRgb" in body:
            upd["colorRgb"] = self._color(body["colorRgb"])
        d = d.model_copy(update=upd)
        self.db.drives[d.id] = d
        return self._drive_json(d)

    @api("drive.drives.delete", f"DELETE {D}/drives/{{driveId}}", "Delete an empty shared drive.", writes=True,
         status=204, params={"driveId": ""})
    def drives_delete(self, driveId: str, useDomainAdminAccess: bool = False, allowItemDeletion: bool = False) -> None:
        d = self._drive(driveId, need=5)
        if allowItemDeletion and not useDomainAdminAccess:
            raise forbidden("allowItemDeletion requires useDomainAdminAccess.", "insufficientAdministratorPrivileges")
        if not allowItemDeletion and any(d.id in f.parents for f in self.db.files.values()):
            raise forbidden("The shared drive cannot be deleted because it contains one or more items.",
                            "cannotDeleteSharedDriveWithItems")
        del self.db.drives[d.id]
        self.files_delete(d.id)  # type: ignore[attr-defined]

    @api("drive.drives.hide", f"POST {D}/drives/{{driveId}}/hide", "Hide a shared drive from your default view.",
         writes=True, params={"driveId": ""})
    def drives_hide(self, driveId: str) -> dict[str, Any]:
        d = self._drive(driveId).model_copy(update={"hidden": True})
        self.db.drives[d.id] = d
        return self._drive_json(d)

    @api("drive.drives.unhide", f"POST {D}/drives/{{driveId}}/unhide", "Show a hidden shared drive again.",
         writes=True, params={"driveId": ""})
    def drives_unhide(self, driveId: str) -> dict[str, Any]:
        d = self._drive(driveId).model_copy(update={"hidden": False})
        self.db.drives[d.id] = d
        return self._drive_json(d)

    # -- seeding helper ---------------------------------------------------------------------------
    def add_shared_drive(self, name: str, *, creator: str | None = None, members: dict[str, str] | None = None,
                         hidden: bool = False) -> SharedDrive:
        """Plant a shared drive; members: {email: role} besides its creator (organizer)."""
        from .data_model import Permission

        creator = creator or self.ws.me.email
        self.db.seq += 1
        did = "0A" + make_id(self.ws.seed, f"drive.shared.{name}", self.db.seq, DRIVE_ALPHABET, 17) + "Uk9PVA"
        now = self.ws.now_rfc3339()
        root = self._new_file(did, name, FOLDER, (), creator, None, when=now)
        perms = list(root.permissions)
        for email, role in (members or {}).items():
            p = self.ws.person(email)
            perms.append(Permission(id=p.user_id if p else self._perm_id(email), type="user", role=role,
                                    emailAddress=email, displayName=p.name if p else None))
        self.db.files[did] = root.model_copy(update={"permissions": tuple(perms), "driveId": did})
        d = SharedDrive(id=did, name=name, createdTime=now, requestId=f"seed-{did}", creatorEmail=creator, hidden=hidden)
        self.db.drives[did] = d
        return d
