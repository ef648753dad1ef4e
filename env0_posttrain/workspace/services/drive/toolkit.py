"""The Drive v3 service, assembled from one mixin per API resource (files, permissions, comments and replies,
revisions, changes, drives, about, channels), plus what they share (access to a file, the root folder, storing a
change) and the seeding helpers."""

from __future__ import annotations

from datetime import datetime

from ...base import DRIVE_ALPHABET
from .about import About
from .changes import Changes
from .channels import Channels
from .data_model import FOLDER, File, Permission
from .drives import SharedDrives
from .files import Files
from .permissions import Permissions
from .replies import Replies
from .revisions import Revisions

D = "drive/v3"
_ROLES = ("owner", "organizer", "fileOrganizer", "writer", "commenter", "reader")


class Drive(Files, Permissions, Replies, Revisions, Changes, SharedDrives, About, Channels):
    """Seeding helpers (not tools) on top of every resource."""

    # -- seeding helpers ------------------------------------------------------------------------
    def add_file(self, *, name: str, content: str | None = "", mime_type: str = "text/plain",
                 parent: str | None = None, owner: str | None = None, shared_with: dict[str, str] | None = None,
                 anyone: str | None = None, domain_role: str | None = None, modified: datetime | None = None,
                 description: str | None = None) -> File:
        """Plant a file. shared_with: {email: role} (a group address shares with the group);
        anyone / domain_role: a role for link / domain sharing."""
        owner = owner or self.ws.me.email
        parents = (parent,) if parent else (self.root_id(owner),)
        when = modified.strftime("%Y-%m-%dT%H:%M:%S.000Z") if modified else None
        f = self._new_file(self.new_id("file", DRIVE_ALPHABET, 33), name, mime_type, parents, owner, content,
                           description, when=when)
        perms = list(f.permissions)
        groups = {g.email for g in self.ws.admin.db.groups.values()}
        for email, role in (shared_with or {}).items():
            p = self.ws.person(email)
            perms.append(Permission(id=p.user_id if p else self._perm_id(email), type="group" if email in groups else
                                    "user", role=role, emailAddress=email, displayName=p.name if p else None))
        if domain_role:
            perms.append(Permission(id=self._perm_id(f"domain.{self.ws.domain}"), type="domain", role=domain_role,
                                    domain=self.ws.domain, allowFileDiscovery=True))
        if anyone:
            perms.append(Permission(id="anyoneWithLink", type="anyone", role=anyone, allowFileDiscovery=False))
        f = f.model_copy(update={"permissions": tuple(perms)})
        self.db.files[f.id] = f
        return f

    def add_folder(self, name: str, *, parent: str | None = None, owner: str | None = None,
                   shared_with: dict[str, str] | None = None) -> File:
        return self.add_file(name=name, content=None, mime_type=FOLDER, parent=parent, owner=owner,
                             shared_with=shared_with)
