"""An env0 package's own scripts that call mock-gdoc's comment/permission routes still run on our surface: each
maps onto the Drive method of the doc's file (resolve/reopen as a reply with that action), logged under docs."""

from __future__ import annotations

from fastapi.testclient import TestClient

from env0_posttrain.tasks.env0.serve.server import Env0Surface
from env0_posttrain.workspace import Workspace


def test_mock_gdoc_comment_and_permission_routes_map_onto_drive():
    ws = Workspace.seeded(2)
    colleague = ws.directory[3]
    doc = ws.docs.add_document(title="Spec", text="Body\n", shared_with={colleague.email: "commenter"})
    surface = Env0Surface(ws)
    c = TestClient(surface)
    base = f"/gdoc/v1/documents/{doc.documentId}"
    made = c.post(f"{base}/comments", json={"content": "Check this", "quotedText": "Body"}).json()
    cid = made["id"]
    assert made["quotedFileContent"]["value"] == "Body" and ws.drive.db.comments[cid].fileId == doc.documentId
    assert c.post(f"{base}/comments/{cid}/resolve").status_code == 200 and ws.drive.db.comments[cid].resolved
    assert c.post(f"{base}/comments/{cid}/reopen").status_code == 200 and not ws.drive.db.comments[cid].resolved
    rid = c.post(f"{base}/comments/{cid}/replies", json={"content": "Done"}).json()["id"]
    assert [(r.action, r.content) for r in ws.drive.replies_of(cid)] == [("resolve", ""), ("reopen", ""), (None, "Done")]
    assert c.patch(f"{base}/comments/{cid}", json={"content": "Check this again", "resolved": True}).status_code == 200
    assert ws.drive.db.comments[cid].content == "Check this again" and ws.drive.db.comments[cid].resolved
    assert [r.get("action") for r in c.get(f"{base}/comments/{cid}").json()["replies"]] == [
        "resolve", "reopen", None, "resolve"]
    assert c.delete(f"{base}/comments/{cid}/replies/{rid}").status_code == 200
    assert "Done" not in [r.content for r in ws.drive.replies_of(cid)]
    assert c.delete(f"{base}/comments/{cid}").status_code == 200 and ws.drive.db.comments[cid].deleted
    assert [x["id"] for x in c.get(f"{base}/comments").json()["comments"]] == []
    perms = c.get(f"{base}/permissions").json()["permissions"]
    assert {p["emailAddress"] for p in perms} == {ws.me.email, colleague.email}
    assert c.patch(f"{base}/permissions/{colleague.user_id}", json={"role": "writer"}).json()["role"] == "writer"
    assert c.delete(f"{base}/permissions/{colleague.user_id}").status_code == 200
    assert colleague.email not in {p.emailAddress for p in ws.drive.db.files[doc.documentId].permissions}
    assert c.post(f"{base}/comments/nope/resolve").status_code == 404
    assert c.put(f"{base}/comments").status_code == 404
    paths = [e["path"] for e in surface.log["gdoc"]]
    assert paths[0] == f"/v1/documents/{doc.documentId}/comments" and len(paths) == 14
