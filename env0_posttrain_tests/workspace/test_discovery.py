"""Every Google tool matches its method in the discovery document shipped with google-api-python-client:
the same HTTP verb, the same path, and only real parameter names (plus the documented agent conveniences)."""

from __future__ import annotations

import json
from pathlib import Path

import googleapiclient
import pytest

from env0_posttrain.workspace import TOOLS

DOCS = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
FILES = {"gmail": "gmail.v1.json", "calendar": "calendar.v3.json", "drive": "drive.v3.json", "docs": "docs.v1.json",
         "admin": "admin.directory_v1.json"}
CONVENIENCE = {"to", "cc", "bcc", "subject", "body_text", "threadId", "content", "body",  # agent shortcuts
               "media_body", "media_mime_type"}  # an upload's media (googleapiclient's names for it)


def _methods(doc: dict) -> dict[str, dict]:
    out = {}

    def walk(resources: dict) -> None:
        for r in resources.values():
            for m in r.get("methods", {}).values():
                out[m["id"]] = m
            walk(r.get("resources", {}))

    walk(doc["resources"])
    return out


DISCOVERY = {svc: (json.loads((DOCS / f).read_text()), ) for svc, f in FILES.items()}
GOOGLE_TOOLS = sorted(n for n, s in TOOLS.items() if s.service in FILES)  # Slack and Stripe have no discovery document


@pytest.mark.parametrize("name", GOOGLE_TOOLS)
def test_tool_matches_discovery_document(name):
    spec = TOOLS[name]
    (doc,) = DISCOVERY[spec.service]
    method = _methods(doc)[spec.method_id]
    assert spec.http_method == method["httpMethod"]
    assert spec.path == doc["servicePath"] + method["path"]
    real = set(method.get("parameters", {})) | {"fields", "alt", "uploadType"}  # + system params
    assert set(spec.kinds) - CONVENIENCE <= real, set(spec.kinds) - CONVENIENCE - real
    for p in spec.path_params:
        assert method["parameters"][p]["location"] == "path"
    if spec.upload_path:
        assert spec.upload_path == method["mediaUpload"]["protocols"]["simple"]["path"]
    if "body" in spec.kinds:
        assert "request" in method


def test_every_service_has_its_operations():
    have = {(s.service, s.method_id) for s in TOOLS.values()}
    for svc, mid in [("gmail", "gmail.users.messages.list"), ("gmail", "gmail.users.drafts.send"),
                     ("calendar", "calendar.freebusy.query"), ("calendar", "calendar.events.move"),
                     ("drive", "drive.permissions.delete"), ("docs", "docs.documents.batchUpdate"),
                     ("admin", "directory.verificationCodes.invalidate"), ("slack", "reactions.add"),
                     ("slack", "users.lookupByEmail")]:
        assert (svc, mid) in have
