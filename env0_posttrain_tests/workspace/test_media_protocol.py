"""The wire details under the media and batch client tests, in process: multipart bodies split byte-exact whatever
the last byte of a part, the resumable upload session protocol's corners (status queries, resent and missing
ranges, the size cap, cancel, eviction, a reseed), and malformed batches."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from env0_posttrain.workspace import multipart, uploads
from env0_posttrain.workspace.api_routes import handle
from env0_posttrain.workspace.environment import Workspace
from env0_posttrain.workspace.errors import ApiError
from env0_posttrain.workspace.http_app import create_app
from env0_posttrain.workspace.request_limits import RESUMABLE_UPLOAD_LIMIT

START = "/upload/drive/v3/files?uploadType=resumable&fields=id,size,md5Checksum"


@pytest.mark.parametrize("nl", [b"\n", b"\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize("payload", [b"abc\r", b"abc\n", b"abc\r\n", b"", b"\r\n\r\n", b"\x00\xff--b\n--bx"])
def test_multipart_parts_keep_their_last_bytes(nl, payload):
    body = (b"--b" + nl + b"Content-Type: application/json" + nl + nl + b"{}" + nl +
            b"--b" + nl + b"Content-Type: application/pdf" + nl + nl + payload + nl + b"--b--" + nl)
    meta, media = multipart.split('multipart/related; boundary="b"', body)
    assert (meta.payload, media.payload, media.content_type) == (b"{}", payload, "application/pdf")


def test_multipart_refuses_what_is_not_one_and_decodes_base64_parts():
    part = multipart.split("multipart/related; boundary=z", b"--z\nContent-Transfer-Encoding: base64\n\naGk=\n--z--")
    assert part[0].payload == b"hi"
    for ctype, body in (("multipart/related", b"--z\n\nx\n--z--"), ("multipart/related; boundary=z", b"no parts"),
                        ("multipart/related; boundary=z", b"--z\n\nunterminated")):
        with pytest.raises(ApiError) as e:
            multipart.split(ctype, body)
        assert e.value.status == 400


@pytest.fixture()
def client():
    return TestClient(create_app(lambda: Workspace.seeded(0)))


def test_the_metadatas_mime_type_wins_over_the_media_parts_and_parameters_are_dropped(client):
    body = (b"--m\r\nContent-Type: application/json\r\n\r\n" + json.dumps({"name": "a.csv", "mimeType": "text/csv"}).encode()
            + b"\r\n--m\r\nContent-Type: application/octet-stream\r\n\r\na,b\r\n1,2\r\n--m--\r\n")
    r = client.post("/upload/drive/v3/files?uploadType=multipart&fields=mimeType,size", content=body,
                    headers={"content-type": "multipart/related; boundary=m"})
    assert r.json() == {"mimeType": "text/csv", "size": "8"}
    r = client.post("/upload/drive/v3/files?uploadType=media&fields=mimeType", content=b"x",
                    headers={"content-type": "text/plain; charset=UTF-8"})
    assert r.json() == {"mimeType": "text/plain"}


def _start(client, **headers):
    r = client.post(START, json={"name": "s.bin"}, headers={"X-Upload-Content-Type": "image/png", **headers})
    assert r.status_code == 200 and r.content == b""
    return r.headers["location"]


def test_status_queries_resent_and_missing_ranges(client):
    at = _start(client)
    assert "upload_id=" in at and "uploadType=resumable" in at
    r = client.put(at, headers={"Content-Range": "bytes */*"})
    assert r.status_code == 308 and "range" not in r.headers  # nothing kept yet
    assert client.put(at, content=b"abcd", headers={"Content-Range": "bytes 0-3/*"}).headers["range"] == "bytes=0-3"
    assert client.put(at, content=b"xy", headers={"Content-Range": "bytes 6-7/*"}).status_code == 400  # a gap
    assert client.put(at, content=b"abc", headers={"Content-Range": "bytes 0-3/*"}).status_code == 400  # 3 != 4
    assert client.put(at, content=b"CDEF", headers={"Content-Range": "bytes 2-5/*"}).headers["range"] == "bytes=0-5"
    done = client.put(at, content=b"gh", headers={"Content-Range": "bytes 6-7/8"})
    assert done.status_code == 200 and done.json()["size"] == "8"
    fid = done.json()["id"]
    assert client.get(f"/drive/v3/files/{fid}?alt=media").content == b"abCDEFgh"
    again = client.put(at, headers={"Content-Range": "bytes */8"})  # a finished session repeats its answer
    assert again.status_code == 200 and again.json() == done.json()
    assert sum(f.name == "s.bin" for f in client.app.state.ws.drive.db.files.values()) == 1


def test_one_put_without_content_range_is_the_whole_upload_and_a_declared_total_must_hold(client):
    done = client.put(_start(client), content=b"\x89PNG\r\n\x1a\n")
    assert done.status_code == 200 and done.json()["size"] == "8"
    at = _start(client, **{"X-Upload-Content-Length": "5"})
    assert client.put(at, content=b"abc", headers={"Content-Range": "bytes 0-2/6"}).status_code == 400
    assert client.put(at, content=b"abcdef", headers={"Content-Range": "bytes 0-5/5"}).status_code == 400


def test_the_size_cap_cancel_eviction_and_a_reseed_end_sessions(client):
    r = client.post(START, headers={"X-Upload-Content-Length": str(RESUMABLE_UPLOAD_LIMIT + 1)})
    assert r.status_code == 413
    cancelled = _start(client)
    assert client.delete(cancelled).status_code == 499
    assert client.put(cancelled, content=b"x").status_code == 404
    first = _start(client)
    for _ in range(uploads.MAX_OPEN):
        _start(client)
    assert client.put(first, content=b"x").status_code == 404  # the oldest unfinished session was dropped
    live = _start(client)
    client.post("/_admin/seed", json={"seed": 0, "drop_snapshots": True})
    assert client.put(live, content=b"x").status_code == 404
    assert client.put("/upload/drive/v3/files", content=b"x").status_code == 400  # a PUT needs its session


def test_servers_without_the_session_protocol_say_so():
    ws = Workspace.seeded(0)
    scope = {"path": "/upload/drive/v3/files", "method": "POST", "query_string": b"uploadType=resumable",
             "headers": [(b"content-type", b"application/json")]}
    status, payload, _ = handle(ws, scope, b"{}")
    assert status == 400 and "Resumable uploads are served by the workspace app" in json.loads(payload)["error"]["message"]


def test_malformed_batches_are_refused_whole_and_a_nested_one_per_part(client):
    assert client.post("/batch", content=b"{}", headers={"content-type": "application/json"}).status_code == 400
    assert client.post("/batch/nope/v1", content=b"", headers={"content-type": "multipart/mixed; boundary=b"}
                       ).status_code == 404
    nested = (b"--b\r\nContent-Type: application/http\r\nContent-ID: <1>\r\n\r\nPOST /batch HTTP/1.1\r\n\r\n--b--\r\n")
    r = client.post("/batch", content=nested, headers={"content-type": "multipart/mixed; boundary=b"})
    assert r.status_code == 200 and b"Content-ID: <response-1>" in r.content and b"HTTP/1.1 400 " in r.content
    bad_part = b"--b\r\nContent-Type: text/plain\r\n\r\nGET /gmail/v1/users/me/profile HTTP/1.1\r\n\r\n--b--\r\n"
    assert client.post("/batch", content=bad_part, headers={"content-type": "multipart/mixed; boundary=b"}
                       ).status_code == 400
