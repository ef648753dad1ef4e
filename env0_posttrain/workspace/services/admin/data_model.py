"""Admin SDK Directory state: users, groups and members, OAuth tokens, app passwords, backup codes."""

from __future__ import annotations

from ...base import DB, Row, table


class AdminUser(Row):
    id: str
    primaryEmail: str
    givenName: str
    familyName: str
    isAdmin: bool = False
    suspended: bool = False
    suspensionReason: str | None = None
    orgUnitPath: str = "/"
    creationTime: str
    lastLoginTime: str
    isEnrolledIn2Sv: bool = False
    isEnforcedIn2Sv: bool = False
    changePasswordAtNextLogin: bool = False
    archived: bool = False
    title: str = ""
    department: str = ""
    aliases: tuple[str, ...] = ()
    passwordVersion: int = 1  # bumped when an admin sets a password (not an API field)
    signOutCount: int = 0  # bumped by users.signOut (not an API field)


class Group(Row):
    id: str
    email: str
    name: str
    description: str = ""


class Member(Row):
    groupId: str
    id: str
    email: str
    role: str = "MEMBER"
    type: str = "USER"


class Token(Row):
    userId: str
    clientId: str
    displayText: str
    scopes: tuple[str, ...]
    anonymous: bool = False
    nativeApp: bool = False


class Asp(Row):
    userId: str
    codeId: int
    name: str
    creationTime: int
    lastTimeUsed: int


class VerificationCode(Row):
    userId: str
    verificationCode: str


class AdminDB(DB):
    users: dict[str, AdminUser] = table()
    groups: dict[str, Group] = table()
    members: dict[str, Member] = table()  # key "groupId/memberId"
    tokens: dict[str, Token] = table()  # key "userId/clientId"
    asps: dict[str, Asp] = table()  # key "userId/codeId"
    codes: dict[str, VerificationCode] = table()  # key "userId/code"
