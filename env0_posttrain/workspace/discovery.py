"""The discovery documents of the Google APIs this server implements, at Google's discovery path
(`/discovery/v1/apis/API/VERSION/rest`), with `rootUrl` (and `mtlsRootUrl`, `baseUrl`) pointing at this server.

A client built from such a document sends everything here: method calls, batches (`rootUrl` + `batchPath`) and
media uploads (`rootUrl` + `upload/...`). `client_options={"api_endpoint": ...}` alone moves only the method
calls: googleapiclient still sends batches to Google's host, and uploads there with the https of Google's rootUrl.
So an app points googleapiclient here the way it would point it at Google's discovery service:

    build("drive", "v3", credentials=creds, static_discovery=False,
          discoveryServiceUrl=BASE + "/discovery/v1/apis/{api}/{apiVersion}/rest")

(BASE = "https://www.googleapis.com" reaches Google itself.) The documents are the ones google-api-python-client
ships (`googleapiclient/discovery_cache/documents/`, installed with the test extra): without that package the
path answers 404.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .errors import google_error
from .services import registry

SERVED: set[tuple[str, str]] = set()  # (api, version) of each Google API we serve
PATH = "/discovery/v1/apis/{api}/{version}/rest"


@functools.cache
def shipped(api: str, version: str) -> dict[str, Any] | None:
    """The document google-api-python-client ships for an API we serve (None: not served, or not installed)."""
    found = importlib.util.find_spec("googleapiclient") if (api, version) in SERVED else None
    if found is None or not found.submodule_search_locations:
        return None
    path = Path(next(iter(found.submodule_search_locations))) / "discovery_cache" / "documents" / f"{api}.{version}.json"
    return json.loads(path.read_text()) if path.is_file() else None


registry.watch(lambda: (SERVED.clear(), SERVED.update(s.google_api for s in registry.SERVICES if s.google_api),
                        shipped.cache_clear()))


def document(api: str, version: str, base: str) -> dict[str, Any] | None:
    """The document with its roots at `base` (this server's URL as the client reached it)."""
    doc = shipped(api, version)
    if doc is None:
        return None
    root = base.rstrip("/") + "/"
    return {**doc, "rootUrl": root, "mtlsRootUrl": root, "baseUrl": root + doc.get("servicePath", "")}


async def _endpoint(request: Request) -> Response:
    doc = document(request.path_params["api"], request.path_params["version"], str(request.base_url))
    if doc is None:
        body, status = google_error(404, "Requested entity was not found.", "notFound").body, 404
    else:
        body, status = doc, 200
    return Response(json.dumps(body).encode(), status, media_type="application/json; charset=UTF-8")


def route() -> Route:
    return Route(PATH, _endpoint, methods=["GET"], name="discovery")
