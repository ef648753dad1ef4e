"""google-api-python-client against the live workspace app: one place for the reseed-then-build step and for
reading an HttpError's status and reason, shared by the per-service client tests."""

from __future__ import annotations

import json

import httplib2
import pytest
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

from env0_posttrain_tests.live_workspace import reseed


def reseeded_service(base: str, api: str, version: str, prefix: str):
    """A client built from the packaged discovery document, after reseeding the app (each test starts clean)."""
    reseed(base)
    return build(api, version, http=httplib2.Http(disable_ssl_certificate_validation=True), static_discovery=True,
                 client_options={"api_endpoint": f"{base}/{prefix}"})


def status_of(request) -> tuple[int, str]:
    """(HTTP status, first error reason) of a request that must fail."""
    with pytest.raises(HttpError) as e:
        request.execute()
    return e.value.resp.status, json.loads(e.value.content)["error"]["errors"][0]["reason"]
