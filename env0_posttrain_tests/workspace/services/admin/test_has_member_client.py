"""google-api-python-client's Directory client against the live app: members.hasMember answers direct and nested
membership (a group inside a group), and a key that is no user is Google's 404."""

from __future__ import annotations

import pytest

from env0_posttrain_tests.support.google_clients import reseeded_service, status_of
from env0_posttrain_tests.support.live_workspace import tls_server_fixture, workspace_of as ws

pytestmark = pytest.mark.filterwarnings("ignore")
server = tls_server_fixture()


def test_has_member_direct_and_nested(server):
    admin = reseeded_service(server[0], "admin", "directory_v1", "")
    users = [u["primaryEmail"] for u in admin.users().list(customer="my_customer").execute()["users"]]
    outer = admin.groups().insert(body={"email": f"outer@{ws(server).domain}", "name": "Outer"}).execute()
    inner = admin.groups().insert(body={"email": f"inner@{ws(server).domain}", "name": "Inner"}).execute()
    admin.members().insert(groupKey=outer["id"], body={"email": users[0]}).execute()
    admin.members().insert(groupKey=outer["id"], body={"email": inner["email"]}).execute()
    admin.members().insert(groupKey=inner["id"], body={"email": users[1]}).execute()
    admin.members().insert(groupKey=inner["id"], body={"email": outer["email"]}).execute()  # a cycle ends
    assert admin.members().hasMember(groupKey=outer["email"], memberKey=users[0]).execute() == {"isMember": True}
    assert admin.members().hasMember(groupKey=outer["id"], memberKey=users[1]).execute() == {"isMember": True}
    assert admin.members().hasMember(groupKey=inner["id"], memberKey=users[2]).execute() == {"isMember": False}
    assert status_of(admin.members().hasMember(groupKey=outer["id"], memberKey=inner["email"])) == (404, "notFound")
    assert status_of(admin.members().hasMember(groupKey="nobody@x.example", memberKey=users[0]))[0] == 404
