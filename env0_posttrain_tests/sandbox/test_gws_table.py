"""gws runs alone inside the sandbox: the host hands it the service registry's table of URL variables, so a service
registered with a gws face (here the test tree's notes service) is reachable through gws without an edit to gws.py."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

from env0_posttrain.sandbox.gws import SERVICES_FILE
from env0_posttrain.sandbox.root import shims
from env0_posttrain.workspace.services import registry
from env0_posttrain_tests.workspace.services.notes_service import SERVICE as NOTES

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there, so the call fails as "not running" (3)


def _gws(bin_dir: Path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir / "gws"), *argv], env={"PATH": os.environ["PATH"], **env},
                          capture_output=True, text=True, timeout=120)


def test_gws_finds_each_services_url_variable_in_the_table_the_host_wrote(tmp_path: Path) -> None:
    shims(tmp_path / "bin", str(tmp_path / "bin"))
    table = json.loads((tmp_path / "bin" / SERVICES_FILE).read_text())
    assert table == {"gmail": "MOCK_GMAIL_URL", "calendar": "MOCK_GCAL_URL", "drive": "MOCK_GDRIVE_URL",
                     "docs": "MOCK_GDOC_URL"}
    r = _gws(tmp_path / "bin", "drive", "files", "list", MOCK_GDRIVE_URL=CLOSED)
    assert r.returncode == 3 and f"drive service is not running at {CLOSED}" in r.stderr
    r = _gws(tmp_path / "bin", "drive", "files", "list", MOCK_GMAIL_URL=CLOSED)  # another service's variable
    assert r.returncode == 2 and "unknown gws service 'drive'" in r.stderr


def test_a_registered_service_with_a_gws_face_is_in_the_table(tmp_path: Path) -> None:
    notes = dataclasses.replace(NOTES, env0=dataclasses.replace(NOTES.env0, gws=True))
    with registry.registered(notes):
        shims(tmp_path / "bin", str(tmp_path / "bin"))
    assert json.loads((tmp_path / "bin" / SERVICES_FILE).read_text())["notes"] == "MOCK_NOTES_URL"
    r = _gws(tmp_path / "bin", "notes", "notes", "list", MOCK_NOTES_URL=CLOSED)
    assert r.returncode == 3 and f"notes service is not running at {CLOSED}" in r.stderr
    shims(tmp_path / "after", str(tmp_path / "after"))
    assert "notes" not in json.loads((tmp_path / "after" / SERVICES_FILE).read_text())
