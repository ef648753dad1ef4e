"""The workspace app served over TLS on 127.0.0.1, for the official-client tests (google-api-python-client,
slack_sdk): one server per test module, reseeded before each test that asks for a clean workspace."""

from __future__ import annotations

import httpx
import pytest

from env0_posttrain.workspace.local_server import running_server


def server_fixture(tls: bool):
    """A module-scoped `server` fixture: (base URL, app) of a live server, over TLS when `tls` (googleapiclient pointed
    by api_endpoint alone keeps the https of Google's rootUrl for media uploads); plain HTTP for clients built from
    the discovery document the server serves (google_clients.local_service)."""

    @pytest.fixture(scope="module")
    def server():
        with running_server(seed=0, tls=tls) as (base, app):
            yield base, app

    return server


def tls_server_fixture():
    return server_fixture(tls=True)


def reseed(base: str) -> None:
    httpx.post(f"{base}/_admin/seed", json={"seed": 0, "drop_snapshots": True}, verify=False).raise_for_status()


def workspace_of(server):
    """The live app's workspace (swapped by each reseed: read it after reseeding)."""
    return server[1].state.ws


def reseeded_workspace_fixture():
    """A `ws` fixture: the server reseeded to seed 0, then its workspace."""

    @pytest.fixture()
    def ws(server):
        reseed(server[0])
        return workspace_of(server)

    return ws
