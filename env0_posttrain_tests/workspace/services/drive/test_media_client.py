"""Drive media through google-api-python-client pointed at the server completely (built from the discovery document
the server serves): a random 10,262-byte binary and a PDF through multipart, resumable (several chunks) and media
uploads, files.update with media, get_media and chunked MediaIoBaseDownload byte-exact, with the size, checksums
and type Google reports; the stored bytes survive snapshot, restore and the state hash exactly."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
import zlib
from pathlib import Path

import googleapiclient
import httpx
import pytest
from googleapiclient.discovery import build, build_from_document
from googleapiclient.http import MediaIoBaseDownload, MediaIoBaseUpload, build_http

from env0_posttrain_tests.support.google_clients import local_service
from env0_posttrain_tests.support.live_workspace import reseed, server_fixture

pytestmark = pytest.mark.filterwarnings("ignore")
SIZE = 10_262
FIELDS = "id,name,mimeType,size,md5Checksum,sha1Checksum,sha256Checksum"


def _random_bytes() -> bytes:
    return random.Random(10262).randbytes(SIZE)


def _pdf() -> bytes:
    """A small PDF of exactly SIZE bytes: a binary comment line, a Flate-compressed page stream, an image stream of
    raw bytes, a cross-reference table (offsets and all), ending in CR LF."""
    text = zlib.compress(b"BT /F1 12 Tf 72 712 Td (Quarterly numbers) Tj ET\n" * 20)
    head = [b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n",
            b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n",
            b"2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n",
            b"3 0 obj\n<< /Type /Page /Parent 2 0 R /Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >> >>"
            b"\nendobj\n",
            b"4 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(text) + text + b"\nendstream\nendobj\n"]

    def build_with(n: int) -> bytes:
        image = random.Random(7).randbytes(n)
        objs = head + [b"5 0 obj\n<< /Type /XObject /Subtype /Image /Width 1 /Height %d /BitsPerComponent 8 "
                       b"/ColorSpace /DeviceGray /Length %d >>\nstream\n" % (n, n) + image + b"\nendstream\nendobj\n"]
        offsets, at = [], 0
        for o in objs:
            offsets.append(at)
            at += len(o)
        xref = b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % off for off in offsets[1:])
        return b"".join(objs) + xref + b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\r\n" % at

    n = SIZE - len(build_with(0))
    while len(build_with(n)) != SIZE:  # the digit counts of /Height and /Length move with n
        n += SIZE - len(build_with(n))
    return build_with(n)


CASES = {"random": (_random_bytes(), "application/octet-stream"), "pdf": (_pdf(), "application/pdf")}


server = server_fixture(tls=False)


@pytest.fixture()
def drive(server):
    reseed(server[0])
    return local_service(server[0], "drive", "v3")


def _check(meta: dict, data: bytes, mime: str) -> None:
    assert meta["mimeType"] == mime
    assert meta["size"] == str(SIZE) == str(len(data))
    assert meta["md5Checksum"] == hashlib.md5(data).hexdigest()
    assert meta["sha1Checksum"] == hashlib.sha1(data).hexdigest()
    assert meta["sha256Checksum"] == hashlib.sha256(data).hexdigest()


def test_the_test_media_are_what_they_claim():
    pdf = _pdf()
    assert len(pdf) == SIZE and pdf.startswith(b"%PDF-1.7\n%\xe2\xe3") and pdf.endswith(b"%%EOF\r\n")
    with pytest.raises(UnicodeDecodeError):
        pdf.decode("utf-8")
    with pytest.raises(UnicodeDecodeError):
        _random_bytes().decode("utf-8")


@pytest.mark.parametrize("case", list(CASES))
def test_multipart_upload_comes_back_byte_exact_with_its_type_size_and_checksums(server, drive, case):
    data, mime = CASES[case]
    made = drive.files().create(body={"name": f"{case}.bin", "mimeType": mime},
                                media_body=MediaIoBaseUpload(io.BytesIO(data), mimetype=mime), fields=FIELDS).execute()
    _check(made, data, mime)
    assert drive.files().get(fileId=made["id"], fields=FIELDS).execute() == made
    assert drive.files().get_media(fileId=made["id"]).execute() == data
    raw = httpx.get(f"{server[0]}/drive/v3/files/{made['id']}", params={"alt": "media"})
    assert raw.headers["content-type"] == mime and raw.content == data


@pytest.mark.parametrize("case", list(CASES))
def test_resumable_upload_in_several_chunks(server, drive, case):
    data, mime = CASES[case]
    request = drive.files().create(body={"name": f"{case}-resumable"}, fields=FIELDS, media_body=MediaIoBaseUpload(
        io.BytesIO(data), mimetype=mime, chunksize=4096, resumable=True))
    progress, done = [], None
    while done is None:
        status, done = request.next_chunk()
        if status is not None:
            progress.append(status.resumable_progress)
    assert progress == [4096, 8192]  # three PUTs: 4096 + 4096 + 2070 bytes
    _check(done, data, mime)  # no mimeType in the metadata: the media's type (X-Upload-Content-Type)
    assert drive.files().get_media(fileId=done["id"]).execute() == data


def test_media_upload_without_metadata_and_update_with_media_keep_every_version(server, drive):
    (data, _), (pdf, _) = CASES["random"], CASES["pdf"]
    made = drive.files().create(media_body=MediaIoBaseUpload(io.BytesIO(data), mimetype="image/png"),
                                fields=FIELDS).execute()  # uploadType=media
    assert made["name"] == "Untitled"
    _check(made, data, "image/png")
    updated = drive.files().update(fileId=made["id"], body={"name": "doc.pdf", "mimeType": "application/pdf"},
                                   media_body=MediaIoBaseUpload(io.BytesIO(pdf), mimetype="application/pdf",
                                                                chunksize=5000, resumable=True), fields=FIELDS).execute()
    assert updated["name"] == "doc.pdf"
    _check(updated, pdf, "application/pdf")
    revisions = drive.revisions().list(fileId=made["id"], fields="revisions(id,size)").execute()["revisions"]
    assert [r["size"] for r in revisions] == [str(SIZE), str(SIZE)]
    assert drive.revisions().get_media(fileId=made["id"], revisionId=revisions[0]["id"]).execute() == data
    assert drive.files().get_media(fileId=made["id"]).execute() == pdf


def test_chunked_download_uses_ranges_and_is_byte_exact(server, drive):
    data, mime = CASES["pdf"]
    made = drive.files().create(body={"name": "d.pdf"}, fields="id",
                                media_body=MediaIoBaseUpload(io.BytesIO(data), mimetype=mime)).execute()
    out = io.BytesIO()
    download = MediaIoBaseDownload(out, drive.files().get_media(fileId=made["id"]), chunksize=3000)
    steps, done = 0, False
    while not done:
        status, done = download.next_chunk()
        steps += 1
    assert steps == 4 and status.total_size == SIZE and out.getvalue() == data  # 3000 x 3 + 1262
    tail = httpx.get(f"{server[0]}/drive/v3/files/{made['id']}", params={"alt": "media"},
                     headers={"Range": "bytes=-10"})
    assert tail.status_code == 206 and tail.content == data[-10:]
    assert tail.headers["content-range"] == f"bytes {SIZE - 10}-{SIZE - 1}/{SIZE}"
    past = httpx.get(f"{server[0]}/drive/v3/files/{made['id']}", params={"alt": "media"},
                     headers={"Range": f"bytes={SIZE}-"})
    assert past.status_code == 416 and past.headers["content-range"] == f"bytes */{SIZE}"


def test_binary_content_survives_snapshot_restore_and_the_state_hash(server, drive):
    base, app = server
    data, mime = CASES["random"]
    made = drive.files().create(body={"name": "keep.bin"}, fields="id",
                                media_body=MediaIoBaseUpload(io.BytesIO(data), mimetype=mime)).execute()
    ws = app.state.ws
    before = ws.state_hash()
    assert ws.drive.db.files[made["id"]].data == data
    httpx.post(f"{base}/_admin/snapshot", json={"name": "with-binary"}).raise_for_status()
    drive.files().update(fileId=made["id"], media_body=MediaIoBaseUpload(io.BytesIO(b"text now"), mimetype=mime)
                         ).execute()
    assert ws.state_hash() != before
    httpx.post(f"{base}/_admin/restore", json={"name": "with-binary"}).raise_for_status()
    assert ws.state_hash() == before and ws.drive.db.files[made["id"]].data == data
    assert drive.files().get_media(fileId=made["id"]).execute() == data
    row = httpx.get(f"{base}/_admin/drive/state").json()["files"][made["id"]]  # JSON: the bytes as base64
    assert "content" not in row and base64.urlsafe_b64decode(row["blob"]) == data
    diff = httpx.get(f"{base}/_admin/drive/diff").json()
    assert made["id"] in json.dumps(diff)


def test_an_agent_tool_call_gets_text_or_a_description_of_binary_content(server, drive):
    from env0_posttrain.workspace import call_tool

    data, mime = CASES["pdf"]
    made = drive.files().create(body={"name": "a.pdf"}, fields="id",
                                media_body=MediaIoBaseUpload(io.BytesIO(data), mimetype=mime)).execute()
    text = drive.files().create(body={"name": "t.txt"}, fields="id", media_body=MediaIoBaseUpload(
        io.BytesIO("naïve café\r\n".encode()), mimetype="text/plain")).execute()
    ws = server[1].state.ws
    got = call_tool(ws, "drive_files_get", {"fileId": made["id"], "alt": "media"})
    assert got["ok"] and got["result"]["size"] == str(SIZE) and got["result"]["mimeType"] == mime
    json.dumps(got)  # what the agent loop sends back to the model
    assert call_tool(ws, "drive_files_get", {"fileId": text["id"], "alt": "media"})["result"] == "naïve café\r\n"
    assert ws.drive.db.files[text["id"]].content == "naïve café\r\n"  # UTF-8 uploads stay text (search, verifiers)
    found = drive.files().list(q="fullText contains 'café'", fields="files(id)").execute()["files"]
    assert [f["id"] for f in found] == [text["id"]]


def test_api_endpoint_alone_leaves_batches_and_uploads_on_googles_host(server):
    """Why the docs build from the served discovery document: with only client_options the client still aims its
    batches at www.googleapis.com, and its uploads at https on this host (googleapiclient keeps rootUrl's scheme)."""
    base = server[0]
    moved = build("drive", "v3", static_discovery=True, client_options={"api_endpoint": f"{base}/drive/v3/"},
                  developerKey="unused")
    assert moved.new_batch_http_request()._batch_uri == "https://www.googleapis.com/batch/drive/v3"
    upload = moved.files().create(media_body=MediaIoBaseUpload(io.BytesIO(b"x"), mimetype="text/plain"))
    assert upload.uri.startswith("https://127.0.0.1:")
    doc = httpx.get(f"{base}/discovery/v1/apis/drive/v3/rest").json()
    assert doc["rootUrl"] == f"{base}/" and doc["batchPath"] == "batch/drive/v3"
    shipped = json.loads((Path(googleapiclient.__file__).parent / "discovery_cache/documents/drive.v3.json").read_text())
    offline = build_from_document({**shipped, "rootUrl": base + "/"}, http=build_http())  # docs/SERVE.md, offline
    for local in (local_service(base, "drive", "v3"), offline):
        assert local.new_batch_http_request()._batch_uri == f"{base}/batch/drive/v3"
        upload = local.files().create(media_body=MediaIoBaseUpload(io.BytesIO(b"x"), mimetype="text/plain"))
        assert upload.uri.startswith(f"{base}/upload/drive/v3/files?")
    made = offline.files().create(body={"name": "o.bin"}, fields="id,size", media_body=MediaIoBaseUpload(
        io.BytesIO(b"\xff\x00"), mimetype="application/octet-stream", chunksize=1, resumable=True)).execute()
    assert made["size"] == "2" and offline.files().get_media(fileId=made["id"]).execute() == b"\xff\x00"
