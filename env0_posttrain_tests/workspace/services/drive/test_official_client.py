"""google-api-python-client (packaged discovery document) drives the Drive v3 methods env0's mock-gdrive serves
beyond files/permissions basics: comments and replies, revisions, changes and watch channels, about,
generateIds, emptyTrash, shared drives and permissions get/update, over HTTP to the live app."""

from __future__ import annotations


import pytest
from googleapiclient.http import MediaInMemoryUpload

from env0_posttrain_tests.support.live_workspace import tls_server_fixture, workspace_of as ws
from env0_posttrain_tests.support.google_clients import reseeded_service, status_of

pytestmark = pytest.mark.filterwarnings("ignore")
CH = {"type": "web_hook", "address": "https://hooks.example.com/drive"}


server = tls_server_fixture()


@pytest.fixture()
def drive(server):
    return reseeded_service(server[0], "drive", "v3", "drive/v3/")


def test_comment_thread_reply_resolve_reopen_edit_delete(server, drive):
    w = ws(server)
    f = w.drive.add_file(name="Plan.txt", content="draft", shared_with={w.directory[2].email: "commenter"})
    theirs = w.drive.add_comment(f.id, "Numbers look off", author=w.directory[2].email)
    got = drive.comments().get(fileId=f.id, commentId=theirs.id, fields="id,content,resolved,replies").execute()
    assert got == {"id": theirs.id, "content": "Numbers look off", "resolved": False, "replies": []}
    assert status_of(drive.comments().get(fileId=f.id, commentId=theirs.id)) == (400, "required")  # fields required
    assert status_of(drive.comments().update(fileId=f.id, commentId=theirs.id, fields="id",
                                             body={"content": "mine now"})) == (403, "insufficientFilePermissions")
    r = drive.replies().create(fileId=f.id, commentId=theirs.id, fields="id,content,action",
                               body={"content": "Fixed in v2", "action": "resolve"}).execute()
    assert r["action"] == "resolve" and w.drive.db.comments[theirs.id].resolved is True
    assert drive.replies().get(fileId=f.id, commentId=theirs.id, replyId=r["id"], fields="content").execute() == {
        "content": "Fixed in v2"}
    drive.replies().create(fileId=f.id, commentId=theirs.id, fields="id", body={"action": "reopen"}).execute()
    assert w.drive.db.comments[theirs.id].resolved is False
    assert status_of(drive.replies().create(fileId=f.id, commentId=theirs.id, fields="id", body={"content": " "})) \
        == (400, "required")
    assert status_of(drive.replies().create(fileId=f.id, commentId=theirs.id, fields="id", body={"action": "close"})) \
        == (400, "invalid")
    up = drive.replies().update(fileId=f.id, commentId=theirs.id, replyId=r["id"], fields="content",
                                body={"content": "Fixed in v3"}).execute()
    assert up == {"content": "Fixed in v3"}
    listed = drive.replies().list(fileId=f.id, commentId=theirs.id, fields="replies(id,content,action)").execute()
    assert [x.get("action") for x in listed["replies"]] == ["resolve", "reopen"]
    drive.replies().delete(fileId=f.id, commentId=theirs.id, replyId=r["id"]).execute()
    assert len(drive.replies().list(fileId=f.id, commentId=theirs.id, fields="replies(id)").execute()["replies"]) == 1
    assert drive.replies().list(fileId=f.id, commentId=theirs.id, fields="replies(id,deleted)",
                                includeDeleted=True).execute()["replies"][0]["deleted"] is True
    mine = drive.comments().create(fileId=f.id, fields="id", body={"content": "Ship it"}).execute()["id"]
    assert drive.comments().update(fileId=f.id, commentId=mine, fields="content",
                                   body={"content": "Ship it Friday"}).execute() == {"content": "Ship it Friday"}
    drive.comments().delete(fileId=f.id, commentId=mine).execute()
    assert status_of(drive.comments().get(fileId=f.id, commentId=mine, fields="id")) == (404, "notFound")
    ids = [c["id"] for c in drive.comments().list(fileId=f.id, fields="comments(id)").execute()["comments"]]
    assert ids == [theirs.id]
    assert status_of(drive.comments().delete(fileId=f.id, commentId="nope")) == (404, "notFound")


def test_revisions_follow_content_changes(server, drive):
    w = ws(server)
    f = drive.files().create(body={"name": "notes.txt"}, media_body=MediaInMemoryUpload(b"one", "text/plain")).execute()
    only = drive.revisions().list(fileId=f["id"]).execute()["revisions"]
    assert [r["id"] for r in only] == ["1"] and not w.drive.db.revisions  # implied: nothing stored yet
    drive.files().update(fileId=f["id"], media_body=MediaInMemoryUpload(b"two", "text/plain")).execute()
    drive.files().update(fileId=f["id"], media_body=MediaInMemoryUpload(b"three", "text/plain")).execute()
    revs = drive.revisions().list(fileId=f["id"]).execute()["revisions"]
    assert [r["id"] for r in revs] == ["1", "2", "3"] and [r["size"] for r in revs] == ["3", "3", "5"]
    assert drive.revisions().get_media(fileId=f["id"], revisionId="1").execute() == b"one"
    assert drive.revisions().get(fileId=f["id"], revisionId="head").execute()["id"] == "3"
    kept = drive.revisions().update(fileId=f["id"], revisionId="2", body={"keepForever": True},
                                    fields="id,keepForever").execute()
    assert kept == {"id": "2", "keepForever": True}
    assert status_of(drive.revisions().delete(fileId=f["id"], revisionId="3")) == (400, "cannotDeleteHeadRevision")
    drive.revisions().delete(fileId=f["id"], revisionId="1").execute()
    assert [r["id"] for r in drive.revisions().list(fileId=f["id"]).execute()["revisions"]] == ["2", "3"]
    assert status_of(drive.revisions().get(fileId=f["id"], revisionId="1")) == (404, "notFound")
    doc = w.docs.add_document(title="Spec", text="Intro\n")
    w.docs.documents_batchUpdate(doc.documentId, {"requests": [{"insertText": {"location": {"index": 1}, "text": "Hi "}}]})
    drevs = drive.revisions().list(fileId=doc.documentId).execute()["revisions"]
    assert len(drevs) == 2 and w.drive.db.revisions[f"{doc.documentId}/1"].content == "Intro\n"
    assert status_of(drive.revisions().delete(fileId=doc.documentId, revisionId="1")) \
        == (403, "revisionDeletionNotSupported")


def test_changes_watch_channels_about_generate_ids_empty_trash(server, drive):
    w = ws(server)
    token = drive.changes().getStartPageToken().execute()["startPageToken"]
    assert drive.changes().list(pageToken=token).execute() == {"kind": "drive#changeList", "changes": [],
                                                               "newStartPageToken": token}
    ids = drive.files().generateIds(count=3).execute()
    assert ids["kind"] == "drive#generatedIds" and len(set(ids["ids"])) == 3
    made = drive.files().create(body={"id": ids["ids"][0], "name": "a.txt"}).execute()
    assert made["id"] == ids["ids"][0]
    assert status_of(drive.files().create(body={"id": ids["ids"][0], "name": "again"})) == (409, "fileIdInUse")
    assert status_of(drive.files().create(body={"id": "short", "name": "x"})) == (400, "fileIdNotUsable")
    other = drive.files().create(body={"name": "b.txt"}).execute()
    drive.files().update(fileId=made["id"], body={"name": "a2.txt"}).execute()
    drive.files().update(fileId=other["id"], body={"trashed": True}).execute()
    page1 = drive.changes().list(pageToken=token, pageSize=1, fields="changes(fileId,removed),nextPageToken").execute()
    assert page1["changes"] == [{"fileId": made["id"], "removed": False}] and page1["nextPageToken"]
    rest = drive.changes().list(pageToken=page1["nextPageToken"]).execute()
    assert [c["fileId"] for c in rest["changes"]] == [other["id"]] and rest["changes"][0]["file"]["trashed"] is True
    drive.files().emptyTrash().execute()
    assert other["id"] not in w.drive.db.files and made["id"] in w.drive.db.files
    gone = drive.changes().list(pageToken=rest["newStartPageToken"]).execute()["changes"]
    assert gone == [{**gone[0], "fileId": other["id"], "removed": True}] and "file" not in gone[0]
    assert status_of(drive.changes().list(pageToken="abc")) == (400, "invalid")

    ch = drive.changes().watch(pageToken=token, body={"id": "c1", **CH}).execute()
    fch = drive.files().watch(fileId=made["id"], body={"id": "c2", **CH}).execute()
    assert ch["kind"] == "api#channel" and fch["resourceUri"].endswith(f"files/{made['id']}?alt=json")
    assert status_of(drive.files().watch(fileId=made["id"], body={"id": "c2", **CH})) == (400, "channelIdNotUnique")
    drive.channels().stop(body={"id": "c1", "resourceId": ch["resourceId"]}).execute()
    assert status_of(drive.channels().stop(body={"id": "c1", "resourceId": ch["resourceId"]})) == (404, "notFound")

    about = drive.about().get(fields="user(emailAddress,me),storageQuota(limit),canCreateDrives").execute()
    assert about == {"user": {"emailAddress": w.me.email, "me": True}, "storageQuota": {"limit": str(30 * 1024 ** 3)},
                     "canCreateDrives": True}
    assert status_of(drive.about().get()) == (400, "required")


def test_shared_drives_and_permission_get_update(server, drive):
    w = ws(server)
    d = drive.drives().create(requestId="req-1", body={"name": "Engineering", "colorRgb": "#16a765"}).execute()
    assert d["kind"] == "drive#drive" and d["capabilities"]["canManageMembers"] is True
    assert status_of(drive.drives().create(requestId="req-1", body={"name": "Again"})) == (409, "duplicate")
    assert status_of(drive.drives().create(requestId="req-2", body={"name": "Bad", "colorRgb": "green"})) == (400, "invalid")
    inside = drive.files().create(body={"name": "design.md", "parents": [d["id"]]}, fields="id,parents").execute()
    assert inside["parents"] == [d["id"]]
    listed = [f["id"] for f in drive.files().list(pageSize=1000).execute()["files"]]
    assert d["id"] not in listed and inside["id"] not in listed  # shared-drive items only when asked for
    in_drive = drive.files().list(driveId=d["id"], corpora="drive", includeItemsFromAllDrives=True,
                                  supportsAllDrives=True, fields="files(id,driveId)").execute()["files"]
    assert in_drive == [{"id": inside["id"], "driveId": d["id"]}]
    assert status_of(drive.files().list(driveId=d["id"])) == (400, "invalid")
    assert drive.drives().update(driveId=d["id"], body={"name": "Eng"}).execute()["name"] == "Eng"
    assert drive.drives().hide(driveId=d["id"]).execute()["hidden"] is True
    assert [x["name"] for x in drive.drives().list(q="hidden = true").execute()["drives"]] == ["Eng"]
    assert drive.drives().unhide(driveId=d["id"]).execute()["hidden"] is False
    assert drive.drives().get(driveId=d["id"]).execute()["name"] == "Eng"
    assert status_of(drive.drives().delete(driveId=d["id"])) == (403, "cannotDeleteSharedDriveWithItems")
    assert status_of(drive.files().delete(fileId=d["id"])) == (403, "insufficientFilePermissions")
    drive.files().delete(fileId=inside["id"]).execute()
    drive.drives().delete(driveId=d["id"]).execute()
    assert status_of(drive.drives().get(driveId=d["id"])) == (404, "notFound")
    theirs = w.drive.add_shared_drive("Finance", creator=w.directory[5].email, members={w.me.email: "reader"})
    assert {x["name"] for x in drive.drives().list().execute()["drives"]} == {"Company Shared", "Finance"}  # + seeded
    colleague_file = w.drive.add_file(name="Q3.csv", content="1", parent=theirs.id, owner=w.directory[5].email)
    assert drive.files().get(fileId=colleague_file.id, fields="driveId,capabilities(canEdit)").execute() == {
        "driveId": theirs.id, "capabilities": {"canEdit": False}}  # a reader of the drive reads its items
    assert status_of(drive.drives().update(driveId=theirs.id, body={"name": "x"})) == (403, "insufficientFilePermissions")

    f = w.drive.add_file(name="Budget.xlsx", content="1", shared_with={w.directory[3].email: "reader"})
    pid = w.directory[3].user_id
    assert drive.permissions().get(fileId=f.id, permissionId=pid).execute() == {
        "kind": "drive#permission", "id": pid, "type": "user", "role": "reader"}
    up = drive.permissions().update(fileId=f.id, permissionId=pid, body={"role": "writer"}, fields="id,role").execute()
    assert up == {"id": pid, "role": "writer"}
    assert status_of(drive.permissions().update(fileId=f.id, permissionId=pid, body={"role": "owner"})) == (403, "forbidden")
    assert status_of(drive.permissions().update(fileId=f.id, permissionId=w.me.user_id, body={"role": "reader"})) \
        == (403, "cannotModifyOwner")
    moved = drive.permissions().update(fileId=f.id, permissionId=pid, transferOwnership=True,
                                       body={"role": "owner"}).execute()
    assert moved["role"] == "owner" and w.drive.db.files[f.id].ownerEmail == w.directory[3].email
    assert status_of(drive.permissions().get(fileId=f.id, permissionId="nope")) == (404, "notFound")
