"""The registry is the one list of services: every service folder's descriptor is in it, and a service that exists
only in the test tree (notes_service/) is served, listed as tools and reachable on env0's face once registered, and
gone again once unregistered, without an edit to any other file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env0_posttrain.tasks.env0.package.load import load_package
from env0_posttrain.tasks.env0.serve.server import Env0Surface
from env0_posttrain.tasks.env0.services import PREFIXES, SERVICE_MAP, service_urls
from env0_posttrain.workspace import TOOLS, Workspace, openai_tools
from env0_posttrain.workspace.environment import SERVICE_NAMES
from env0_posttrain.workspace.http_app import create_app
from env0_posttrain.workspace.services import registry
from env0_posttrain_tests.workspace.services.notes_service import SERVICE as NOTES

SERVICES_DIR = Path(registry.__file__).parent


def test_every_service_folder_is_registered_once_in_the_tool_tables_order():
    folders = sorted(d.name for d in SERVICES_DIR.iterdir() if (d / "__init__.py").is_file())
    assert sorted(registry.names()) == folders
    order = list(dict.fromkeys(spec.service for spec in TOOLS.values()))
    assert order == list(registry.names()) == SERVICE_NAMES


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(registry.get("slack"))
    with pytest.raises(KeyError, match="no service named 'nope'"):
        registry.get("nope")


def _package(root: Path) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "task.toml").write_text('[environment]\nservices = ["mock-notes"]\n')
    (root / "instruction.md").write_text("Write a note saying hello.\n")
    (root / "data" / "needles.py").write_text("NEEDLES = []\n")
    (root / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    return root


def test_a_test_service_once_registered_is_served_listed_and_on_env0s_face(tmp_path):
    with pytest.raises(Exception, match="notes"):
        load_package(_package(tmp_path / "before"))  # not served yet: the package names a service we lack
    with registry.registered(NOTES):
        assert {"notes_notes_list", "notes_notes_insert"} <= set(TOOLS)
        assert "notes_notes_insert" in {t["function"]["name"] for t in openai_tools()}
        ws = Workspace.seeded(0)
        assert ws.call("notes_notes_insert", {"body": {"text": "hello"}}).ok
        assert {n["text"] for n in ws.state("notes")["notes"].values()} == {"Welcome to notes.", "hello"}
        http = TestClient(create_app(lambda: Workspace.seeded(0)))
        assert http.get("/notes/v1/notes").json()["notes"][0]["id"] == "welcome"

        assert PREFIXES["notes"] == SERVICE_MAP["mock-notes"] == "notes"
        assert service_urls({p: f"http://x/{p}" for p in [*PREFIXES, "workspace"]})["NOTES_URL"] == "http://x/notes"
        assert load_package(_package(tmp_path / "during")).services == ("notes",)
        surface = Env0Surface(Workspace.seeded(0))
        status, _, body = surface.respond("notes", "POST", "/notes/v1/notes", b"",
                                          [(b"content-type", b"application/json")], b'{"text": "via env0"}')
        assert status == 200
        status, _, body = surface.respond("notes", "GET", "/_admin/diff", b"", [], b"")
        assert status == 200 and [n["text"] for n in json.loads(body)["notes"]["added"]] == ["via env0"]
    assert not any(spec.service == "notes" for spec in TOOLS.values())
    assert "notes" not in PREFIXES and "notes" not in SERVICE_NAMES
    assert not hasattr(Workspace.seeded(0), "notes")
