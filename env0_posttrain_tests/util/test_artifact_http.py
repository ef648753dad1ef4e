"""The artifact server `env0-posttrain ui` starts: a run's report, plots and curves over HTTP, read-only, and
nothing outside the data dir's served folders, however the path is spelt (attacked with `..`, encoded `..`,
absolute paths, NUL bytes, symlinks out of a folder and into another); metadata links point at it."""

from __future__ import annotations

import http.client
import os
import socket
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from env0_posttrain.util.artifact_http import artifact_app, artifact_url, start_server

SECRET = b"outside the served folders"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    report = root / "artifacts" / "r1" / "report" / "20261128T120000"
    (report / "explorer").mkdir(parents=True)
    (report / "report.html").write_text("<h1>the report</h1>")
    (report / "explorer" / "index.html").write_text("<p>explorer</p>")
    curves = root / "artifacts" / "r1" / "adapter" / "t1" / "tensorboard"
    curves.mkdir(parents=True)
    (curves / "events.out.tfevents.1.host").write_bytes(b"\x00tb")
    (root / "env0.duckdb").write_bytes(SECRET)
    (root / "dagster_home").mkdir()
    (root / "dagster_home" / "dagster.yaml").write_bytes(SECRET)
    (tmp_path / "secret.txt").write_bytes(SECRET)
    run = root / "artifacts" / "r1"
    os.symlink(tmp_path / "secret.txt", run / "link-out.txt")  # a planted link to a file outside
    os.symlink(tmp_path, run / "dir-out")  # ... to a folder outside
    os.symlink(root / "env0.duckdb", run / "link-db")  # ... to the store, inside the data dir but not served
    os.symlink(root / "dagster_home", run / "link-home")
    return root


@pytest.fixture
def client(data: Path) -> TestClient:
    return TestClient(artifact_app(data))


def test_serves_reports_explorers_and_lists_curve_folders(client: TestClient):
    assert client.get("/artifacts/r1/report/20261128T120000/report.html").text == "<h1>the report</h1>"
    assert client.get("/artifacts/r1/report/20261128T120000/explorer/").text == "<p>explorer</p>"
    listing = client.get("/artifacts/r1/adapter/t1/tensorboard/")
    assert listing.status_code == 200 and 'href="events.out.tfevents.1.host"' in listing.text
    assert client.get("/artifacts/r1/adapter/t1/tensorboard/events.out.tfevents.1.host").content == b"\x00tb"
    run = client.get("/artifacts/r1/").text
    assert "report/" in run and "link-out" not in run and "dir-out" not in run and "link-db" not in run


@pytest.mark.parametrize("path", [
    "/env0.duckdb", "/dagster_home/dagster.yaml", "/artifacts/../env0.duckdb", "/artifacts/%2e%2e/env0.duckdb",
    "/artifacts/..%2fenv0.duckdb", "/artifacts/%2e%2e%2fdagster_home%2fdagster.yaml", "/artifacts/r1/../../env0.duckdb",
    "/artifacts/r1/%2e%2e/%2e%2e/%2e%2e/secret.txt", "/artifacts//etc/passwd", "/artifacts/%2fetc%2fpasswd",
    "/artifacts/r1/link-out.txt", "/artifacts/r1/dir-out/secret.txt", "/artifacts/r1/dir-out/", "/artifacts/r1/link-db",
    "/artifacts/r1/link-home/dagster.yaml", "/artifacts/r1/link-home/", "/artifacts/%00", "/artifacts/r1/%00/x",
    "/artifacts/r1/report/20261128T120000/report.html%00.txt", "/models/../env0.duckdb", "/runs/%2e%2e/env0.duckdb",
])
def test_nothing_outside_the_served_folders_is_reachable(client: TestClient, path: str):
    response = client.get(path)
    assert response.status_code == 404 and SECRET not in response.content, (path, response.status_code)


def test_raw_request_lines_cannot_climb_out_either(data: Path):
    """The same attacks as raw request lines, unnormalised by any client, against the real server."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stop = start_server(data, "127.0.0.1", port)
    try:
        for path in ("/artifacts/../env0.duckdb", "/artifacts/%2e%2e/env0.duckdb", "/artifacts/r1/../../../secret.txt",
                     "/artifacts/..\\env0.duckdb", "/artifacts/r1/dir-out/secret.txt", "//env0.duckdb"):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.putrequest("GET", path, skip_accept_encoding=True)
            conn.endheaders()
            response = conn.getresponse()
            body = response.read()
            conn.close()
            assert response.status in (400, 404) and SECRET not in body, (path, response.status)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/artifacts/r1/report/20261128T120000/report.html")
        assert conn.getresponse().read() == b"<h1>the report</h1>"
        conn.close()
    finally:
        stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()  # stopped: nothing listens any more


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_read_only(client: TestClient, data: Path, method: str):
    target = "/artifacts/r1/report/20261128T120000/report.html"
    assert client.request(method, target, content=b"x").status_code == 405
    assert (data / "artifacts/r1/report/20261128T120000/report.html").read_text() == "<h1>the report</h1>"


def test_metadata_urls_name_served_files_only(data: Path):
    report = data / "artifacts" / "r 1" / "report.html"
    assert artifact_url(report, data, "http://h:9") == "http://h:9/artifacts/r%201/report.html"
    assert artifact_url(Path("artifacts/r1"), data, "http://h:9") == "http://h:9/artifacts/r1/"  # a folder, relative
    assert artifact_url(data / "env0.duckdb", data, "http://h:9") is None
    assert artifact_url(data / "artifacts" / ".." / "env0.duckdb", data, "http://h:9") is None
    assert artifact_url("/elsewhere/report.html", data, "http://h:9") is None


def test_a_port_in_use_fails_at_once(data: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        with pytest.raises(OSError):
            start_server(data, "127.0.0.1", taken.getsockname()[1])


def test_text_is_served_inline_with_its_type(data: Path):
    """A spec, a report's Markdown and JSON open in the browser as text instead of downloading."""
    (data / "runs").mkdir()
    (data / "runs" / "r1.yaml").write_text("run_id: r1\n")
    report = data / "artifacts" / "r1" / "report" / "20261128T120000"
    (report / "report.md").write_text("# the report\n")
    (report / "report.json").write_text('{"a": 1}')
    (report / "bin.safetensors").write_bytes(b"\x00\x01")
    with TestClient(artifact_app(data)) as client:
        for path, media, body in [("/runs/r1.yaml", "text/plain; charset=utf-8", "run_id: r1"),
                                  ("/artifacts/r1/report/20261128T120000/report.md", "text/plain; charset=utf-8",
                                   "# the report"),
                                  ("/artifacts/r1/report/20261128T120000/report.json",
                                   "application/json; charset=utf-8", '"a": 1')]:
            r = client.get(path)
            assert r.status_code == 200 and r.headers["content-type"] == media and body in r.text, path
            assert r.headers["x-content-type-options"] == "nosniff" and "attachment" not in r.headers.get(
                "content-disposition", "")
        assert client.get(f"{report.relative_to(data).as_posix()}/report.html".join(["/", ""])).headers[
            "content-type"].startswith("text/html")  # pages stay pages
        assert "text/plain" not in client.get("/artifacts/r1/report/20261128T120000/bin.safetensors").headers[
            "content-type"]
