"""Drive v3 permissions: who may read, comment on or edit a file (and a shared drive's members)."""

from __future__ import annotations

from typing import Any

from ...base import api
from ...errors import bad_request, forbidden, google_error
from ...paging import select_fields
from .access import perm_json
from .data_model import Permission
from .state import DriveState

D = 'drive/v3'

_ROLES = ("owner", "organizer", "fileOrganizer", "writer", "commenter", "reader")


class Permissions(DriveState):
    @api("drive.permissions.list", f"GET {D}/files/{{fileId}}/permissions", "List who has access to a file.",
         params={"fileId": ""})
    def permissions_list(self, fileId: str, fields: str | None = None, pageSize: int | None = None,
                         pageToken: str | None = None, supportsAllDrives: bool | None = None) -> dict[str, Any]:
        f = self._file(fileId)
        out = {"kind": "drive#permissionList", "permissions": [perm_json(p) for p in f.permissions]}
        return select_fields(out, fields)

    @api("drive.permissions.get", f"GET {D}/files/{{fileId}}/permissions/{{permissionId}}", "Get one permission.",
         params={"fileId": "", "permissionId": ""})
    def permissions_get(self, fileId: str, permissionId: str, supportsAllDrives: bool | None = None,
                        useDomainAdminAccess: bool = False, fields: str | None = None) -> dict[str, Any]:
        f = self._file(fileId)
        hit = next((p for p in f.permissions if p.id == permissionId), None)
        if hit is None:
            raise google_error(404, f"Permission not found: {permissionId}.", "notFound", "permissionId")
        return select_fields(perm_json(hit), fields or "kind,id,type,role")

    @api("drive.permissions.create", f"POST {D}/files/{{fileId}}/permissions", "Share a file.", writes=True,
         params={"fileId": "", "body": "{type: user|domain|anyone, role: reader|commenter|writer, emailAddress}",
                 "sendNotificationEmail": ""})
    def permissions_create(self, fileId: str, body: dict, sendNotificationEmail: bool | None = None,
                           emailMessage: str | None = None, transferOwnership: bool = False,
                           fields: str | None = None, supportsAllDrives: bool | None = None) -> dict[str, Any]:
        f = self._file(fileId, need=3)
        ptype, role = body.get("type"), body.get("role")
        if ptype not in ("user", "group", "domain", "anyone"):
            raise bad_request("The permission type field is required.", "required") if not ptype else \
                bad_request(f"Invalid permission type: {ptype}", "invalid")
        if role not in _ROLES:
            raise bad_request("The permission role field is required.", "required") if not role else \
                bad_request(f"Invalid permission role: {role}", "invalid")
        if role == "owner" and not transferOwnership:
            raise forbidden("The transferOwnership parameter must be enabled when the permission role is 'owner'.",
                            "forbidden")
        email = str(body.get("emailAddress") or "").strip().lower() or None
        domain = str(body.get("domain") or "").strip().lower() or None
        if ptype in ("user", "group") and (not email or "@" not in email):
            raise bad_request("The permission emailAddress field is required.", "required")
        if ptype == "domain" and not domain:
            raise bad_request("The permission domain field is required.", "required")
        if ptype == "anyone":
            pid = "anyoneWithLink"
        elif ptype == "domain":
            pid = self._perm_id(f"domain.{domain}")
        else:
            person = self.ws.person(email or "")
            pid = person.user_id if person else self._perm_id(email or "")
        person = self.ws.person(email) if email else None
        perm = Permission(id=pid, type=ptype, role=role, emailAddress=email if ptype in ("user", "group") else None,
                          domain=domain if ptype == "domain" else None, displayName=person.name if person else None,
                          allowFileDiscovery=bool(body.get("allowFileDiscovery", False)) if ptype in ("domain", "anyone") else None)
        perms = [p for p in f.permissions if p.id != pid]
        if role == "owner":
            perms = [p.model_copy(update={"role": "writer"}) if p.role == "owner" else p for p in perms]
            f = f.model_copy(update={"ownerEmail": email})
        perms.append(perm)
        self._touch(f, permissions=tuple(perms))
        return select_fields(perm_json(perm), fields or "kind,id,type,role")

    @api("drive.permissions.update", f"PATCH {D}/files/{{fileId}}/permissions/{{permissionId}}",
         "Change someone's role on a file: body {role}.", writes=True,
         params={"fileId": "", "permissionId": "", "body": "{role: reader|commenter|writer}", "transferOwnership": ""})
    def permissions_update(self, fileId: str, permissionId: str, body: dict, transferOwnership: bool = False,
                           removeExpiration: bool = False, supportsAllDrives: bool | None = None,
                           useDomainAdminAccess: bool = False, fields: str | None = None) -> dict[str, Any]:
        f = self._file(fileId, need=3)
        hit = next((p for p in f.permissions if p.id == permissionId), None)
        if hit is None:
            raise google_error(404, f"Permission not found: {permissionId}.", "notFound", "permissionId")
        if set(body) - {"role", "expirationTime", "type"} or ("type" in body and body["type"] != hit.type):
            raise bad_request("The resource body includes fields which are not directly writable.", "fieldNotWritable")
        role = body.get("role", hit.role)
        if role not in _ROLES:
            raise bad_request(f"Invalid permission role: {role}", "invalid", "role")
        if hit.role == "owner" and role != "owner":
            raise forbidden("The owner of a file cannot be demoted; transfer ownership instead.", "cannotModifyOwner")
        if role == "owner" and hit.role != "owner":
            if not transferOwnership:
                raise forbidden("The transferOwnership parameter must be enabled when the permission role is 'owner'.",
                                "forbidden")
            if hit.type != "user":
                raise bad_request("Only a user can own a file.", "invalidOwnershipTransfer")
            return self.permissions_create(fileId, {"type": "user", "role": "owner",
                                                    "emailAddress": hit.emailAddress}, transferOwnership=True,
                                           fields=fields)
        new = hit.model_copy(update={"role": role})
        self._touch(f, permissions=tuple(new if p.id == hit.id else p for p in f.permissions))
        return select_fields(perm_json(new), fields or "kind,id,type,role")

    @api("drive.permissions.delete", f"DELETE {D}/files/{{fileId}}/permissions/{{permissionId}}",
         "Remove someone's access.", writes=True, status=204, params={"fileId": "", "permissionId": ""})
    def permissions_delete(self, fileId: str, permissionId: str, supportsAllDrives: bool | None = None) -> None:
        f = self._file(fileId, need=3)
        hit = [p for p in f.permissions if p.id == permissionId]
        if not hit:
            raise google_error(404, f"Permission not found: {permissionId}.", "notFound", "permissionId")
        if hit[0].role == "owner":
            raise forbidden("The owner of a file cannot be removed.", "cannotRemoveOwner")
        self._touch(f, permissions=tuple(p for p in f.permissions if p.id != permissionId))
