"""Write env0_posttrain/workspace/services/auth/google_scopes.json: the scopes of every Google method we serve
(Gmail, Calendar, Drive, Docs and the Admin SDK Directory API), as Google's scope URLs, from the discovery
documents google-api-python-client ships.

    .venv/bin/python bench/google_scopes.py

The gate (services/auth/gate.py) reads the file at run time (the client library is a test dependency only);
workspace/test_auth_scopes.py checks that the file matches the documents and that every method accepts every
scope its entry lists.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from api_parity import DOCUMENTS, discovery_methods  # noqa: E402 - the discovery documents, read once

from env0_posttrain.workspace.services.auth.tokens import SCOPE_FILE  # noqa: E402
from env0_posttrain.workspace.tools import TOOLS  # noqa: E402

SOURCES = {**DOCUMENTS, "admin": "admin.directory_v1.json"}  # the Google services whose methods the gate guards


def document(service: str) -> dict:
    import googleapiclient

    return json.loads((Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" /
                       SOURCES[service]).read_text())


def table() -> dict:
    methods: dict[str, list[str]] = {}
    for service in SOURCES:
        found = discovery_methods(document(service))
        for spec in sorted((s for s in TOOLS.values() if s.service == service), key=lambda s: s.method_id):
            methods[spec.method_id] = sorted(found[spec.method_id].get("scopes", []))
    return {"source": "google-api-python-client discovery_cache/documents: " + ", ".join(SOURCES.values()),
            "methods": methods}


def main() -> int:
    t = table()
    rows = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in t["methods"].items())
    SCOPE_FILE.write_text(f'{{"source": {json.dumps(t["source"])},\n "methods": {{\n{rows}\n}}}}\n')
    assert json.loads(SCOPE_FILE.read_text()) == t
    print(f"wrote {SCOPE_FILE} ({len(t['methods'])} methods)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
