"""google-api-python-client against the live workspace app: one place for the reseed-then-build step, for a client
pointed at the server completely, and for reading an HttpError's status and reason, shared by the client tests."""

from __future__ import annotations

import json

import httplib2
import pytest
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError
from googleapiclient.http import build_http

from env0_posttrain_tests.support.live_workspace import reseed


def reseeded_service(base: str, api: str, version: str, prefix: str):
    """A client built from the packaged discovery document, after reseeding the app (each test starts clean)."""
    reseed(base)
    return build(api, version, http=httplib2.Http(disable_ssl_certificate_validation=True), static_discovery=True,
                 client_options={"api_endpoint": f"{base}/{prefix}"})


def local_service(base: str, api: str, version: str):
    """A client built the way docs/README.md shows: from the discovery document the server serves (its rootUrl is the
    server), so method calls, batches and media uploads all come here; `build_http()` (what googleapiclient builds
    when given credentials) keeps a 308 Resume Incomplete from being followed as a redirect."""
    return build(api, version, http=build_http(), static_discovery=False, cache_discovery=False,
                 discoveryServiceUrl=f"{base}/discovery/v1/apis/{{api}}/{{apiVersion}}/rest")


def status_of(request) -> tuple[int, str]:
    """(HTTP status, first error reason) of a request that must fail."""
    with pytest.raises(HttpError) as e:
        request.execute()
    return e.value.resp.status, json.loads(e.value.content)["error"]["errors"][0]["reason"]
