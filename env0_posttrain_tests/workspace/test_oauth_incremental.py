"""google-auth-oauthlib's Flow and google-api-python-client against a gated server: incremental authorization
(`include_granted_scopes=true`: the second code's token holds the first grant's scopes too, without it only what
was asked) and RFC 6750's WWW-Authenticate on Google's 401 and 403 answers."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httplib2
import pytest
import requests

from env0_posttrain.workspace.auth_http import LOCAL_CLIENT, LOCAL_SECRET
from env0_posttrain.workspace.local_server import running_server

G = "https://www.googleapis.com/auth/"


@pytest.fixture(scope="module")
def server():
    with running_server(gated=True) as (base, app):
        yield base, app


@pytest.fixture(autouse=True)
def plain_http(monkeypatch):
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")
    monkeypatch.setenv("OAUTHLIB_RELAX_TOKEN_SCOPE", "1")  # what an app asking incrementally sets: the token's scope grows


def _credentials(base: str, email: str, scopes: list[str], **extra):
    from google_auth_oauthlib.flow import Flow

    config = {"installed": {"client_id": LOCAL_CLIENT, "client_secret": LOCAL_SECRET,
                            "auth_uri": f"{base}/auth/o/oauth2/v2/auth", "token_uri": f"{base}/auth/oauth2/token",
                            "redirect_uris": ["http://localhost"]}}
    flow = Flow.from_client_config(config, scopes=scopes, redirect_uri="http://localhost:8090/")
    url, _ = flow.authorization_url(login_hint=email, **extra)
    answer = requests.get(url, allow_redirects=False, timeout=30)
    assert answer.status_code == 302, answer.text
    flow.fetch_token(code=parse_qs(urlsplit(answer.headers["location"]).query)["code"][0])
    return flow.credentials


def _gmail(base: str, credentials=None):
    import googleapiclient
    from googleapiclient.discovery import build_from_document

    doc = json.loads((Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" / "gmail.v1.json")
                     .read_text())
    doc["rootUrl"] = base + "/"
    return build_from_document(doc, credentials=credentials) if credentials else build_from_document(doc, http=httplib2.Http())


def test_include_granted_scopes_unions_the_earlier_grants(server):
    base, app = server
    auth, email = app.state.ws.auth, app.state.ws.me.email
    with app.state.ws.lock:  # the user has granted this client two scopes so far (the seeded consent grants all)
        con = next(c for c in auth.db.consents.values() if c.client_id == LOCAL_CLIENT and auth.db.users[c.user_id].email == email)
        auth.db.consents[con.id] = con.model_copy(update={"granted_scopes": "gmail.readonly calendar.readonly"})
    first = _credentials(base, email, [f"{G}gmail.readonly"])
    assert set(first.granted_scopes) == {f"{G}gmail.readonly"}
    plain = _credentials(base, email, [f"{G}calendar.readonly"])
    assert set(plain.granted_scopes) == {f"{G}calendar.readonly"}
    more = _credentials(base, email, [f"{G}calendar.readonly"], include_granted_scopes="true")
    assert set(more.granted_scopes) == {f"{G}gmail.readonly", f"{G}calendar.readonly"}
    assert _gmail(base, more).users().labels().list(userId="me").execute()["labels"]


def test_401_and_403_carry_rfc6750_www_authenticate(server):
    from googleapiclient.errors import HttpError

    base, app = server
    with pytest.raises(HttpError) as e:
        _gmail(base).users().labels().list(userId="me").execute()
    assert e.value.resp.status == 401 and e.value.resp["www-authenticate"].startswith("Bearer realm=")
    bad = requests.get(f"{base}/gmail/v1/users/me/labels", headers={"Authorization": "Bearer not-a-token"}, timeout=30)
    assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]
    creds = _credentials(base, app.state.ws.me.email, [f"{G}gmail.readonly"])
    with pytest.raises(HttpError) as e:
        _gmail(base, creds).users().messages().send(userId="me", body={"raw": "eA"}).execute()
    www = e.value.resp["www-authenticate"]
    assert e.value.resp.status == 403 and 'error="insufficient_scope"' in www and f"{G}gmail.send" in www
