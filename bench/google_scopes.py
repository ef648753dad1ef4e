"""Write env0_posttrain/workspace/services/auth/google_scopes.json: the scopes of every Calendar, Drive and Docs method
we serve, from the discovery documents google-api-python-client ships, in env0's short names.

    .venv/bin/python bench/google_scopes.py

The gate (services/auth/gate.py) reads the file at run time (the client library is a test dependency only);
test_workspace_auth_gate.py checks that the file matches the documents.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from api_parity import DOCUMENTS, discovery, discovery_methods  # noqa: E402 - the discovery documents, read once

from env0_posttrain.workspace.services.auth.gate import _SCOPE_FILE  # noqa: E402
from env0_posttrain.workspace.services.auth.tokens import short_scope  # noqa: E402
from env0_posttrain.workspace.tools import TOOLS  # noqa: E402

SERVICES = ("calendar", "drive", "docs")  # the Google services whose methods the gate guards by scope


def table() -> dict:
    methods: dict[str, list[str]] = {}
    for service in SERVICES:
        found = discovery_methods(discovery(service))
        for spec in sorted((s for s in TOOLS.values() if s.service == service), key=lambda s: s.method_id):
            methods[spec.method_id] = sorted({short_scope(u) for u in found[spec.method_id].get("scopes", [])})
    return {"source": "google-api-python-client discovery_cache/documents: " + ", ".join(DOCUMENTS[s] for s in SERVICES),
            "methods": methods}


def main() -> int:
    t = table()
    rows = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in t["methods"].items())
    _SCOPE_FILE.write_text(f'{{"source": {json.dumps(t["source"])},\n "methods": {{\n{rows}\n}}}}\n')
    assert json.loads(_SCOPE_FILE.read_text()) == t
    print(f"wrote {_SCOPE_FILE} ({len(t['methods'])} methods)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
