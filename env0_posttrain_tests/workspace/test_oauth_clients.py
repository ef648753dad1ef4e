"""The official OAuth / OIDC clients against the gated workspace server, as `workspace serve` runs it:
google-auth-oauthlib's Flow (the Python quickstart) gets its token with Google's scope URLs and no "Scope has
changed", google-auth refreshes it without rotation, googleapiclient built with only the discovery document's
rootUrl set calls Gmail, Calendar, Drive, Docs and the Admin Directory with it and meets Google's 401 / 403 without
a good one; Authlib runs the code flow through the login and consent pages and the ID token keeps its nonce,
verified by PyJWT against the published RS256 key."""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httplib2
import pytest
import requests

from env0_posttrain.workspace.auth_http import LOCAL_CLIENT, LOCAL_SECRET
from env0_posttrain.workspace.local_server import running_server

G = "https://www.googleapis.com/auth/"
DOCS = {"gmail": "gmail.v1.json", "calendar": "calendar.v3.json", "drive": "drive.v3.json", "docs": "docs.v1.json",
        "admin": "admin.directory_v1.json"}


@pytest.fixture(scope="module")
def server():
    with running_server(gated=True) as (base, app):
        yield base, app


@pytest.fixture(autouse=True)
def plain_http(monkeypatch):
    """The clients' own switches for a loopback server without TLS (app code unchanged)."""
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")


def client(api: str, base: str, credentials=None):
    """googleapiclient from the packaged discovery document, its rootUrl (only) pointed at the server."""
    import googleapiclient
    from googleapiclient.discovery import build_from_document

    doc = json.loads((Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" / DOCS[api]).read_text())
    doc["rootUrl"] = base + "/"
    if credentials is None:
        return build_from_document(doc, http=httplib2.Http())
    return build_from_document(doc, credentials=credentials)


def _code_from(location: str) -> str:
    return parse_qs(urlsplit(location).query)["code"][0]


def _flow_credentials(base: str, email: str, scopes: list[str]):
    """The quickstart's Flow, with the browser step done by requests (the owner's consent is on file)."""
    from google_auth_oauthlib.flow import Flow

    config = {"installed": {"client_id": LOCAL_CLIENT, "client_secret": LOCAL_SECRET,
                            "auth_uri": f"{base}/auth/o/oauth2/v2/auth", "token_uri": f"{base}/auth/oauth2/token",
                            "redirect_uris": ["http://localhost"]}}
    flow = Flow.from_client_config(config, scopes=scopes, redirect_uri="http://localhost:8090/")
    url, _ = flow.authorization_url(access_type="offline", login_hint=email)
    answer = requests.get(url, allow_redirects=False, timeout=30)
    assert answer.status_code == 302, answer.text
    flow.fetch_token(code=_code_from(answer.headers["location"]))  # raises "Scope has changed" on short names
    return flow.credentials


def test_the_quickstart_flow_gets_googles_scopes_and_the_clients_work_with_only_the_root_url(server):
    from google.auth.transport.requests import Request
    from googleapiclient.errors import HttpError

    base, app = server
    ws = app.state.ws
    scopes = [f"{G}gmail.readonly", f"{G}calendar.readonly", f"{G}drive.readonly", f"{G}documents",
              f"{G}admin.directory.user.readonly"]
    creds = _flow_credentials(base, ws.me.email, scopes)
    assert set(creds.granted_scopes) == set(scopes) and creds.refresh_token
    assert client("gmail", base, creds).users().messages().list(userId="me").execute()["messages"]
    assert "items" in client("calendar", base, creds).events().list(calendarId="primary").execute()
    assert "files" in client("drive", base, creds).files().list(pageSize=2).execute()
    doc = client("docs", base, creds).documents().create(body={"title": "Gate check"}).execute()
    assert doc["title"] == "Gate check"
    assert client("admin", base, creds).users().list(customer="my_customer").execute()["users"]
    with pytest.raises(HttpError) as e:  # a scope the token lacks: Google's 403
        client("gmail", base, creds).users().messages().send(userId="me", body={"raw": "eA"}).execute()
    assert e.value.resp.status == 403 and b"insufficientPermissions" in e.value.content
    with pytest.raises(HttpError) as e:  # no token at all: Google's 401
        client("gmail", base).users().labels().list(userId="me").execute()
    assert e.value.resp.status == 401
    first = creds.refresh_token
    for _ in range(2):  # Google's refresh tokens do not rotate: the same one refreshes again
        creds.refresh(Request())
        assert creds.refresh_token == first and creds.valid
    assert client("gmail", base, creds).users().labels().list(userId="me").execute()["labels"]
    requests.post(f"{base}/auth/oauth2/revoke", data={"token": creds.token}, timeout=30)  # revokes the grant
    with pytest.raises(Exception, match="invalid_grant"):
        creds.refresh(Request())


def test_authlib_code_flow_through_consent_keeps_the_nonce_in_an_rs256_id_token(server):
    import jwt
    from authlib.integrations.requests_client import OAuth2Session

    base, app = server
    email = app.state.ws.me.email
    disc = requests.get(f"{base}/auth/.well-known/openid-configuration", timeout=30).json()
    assert "RS256" in disc["id_token_signing_alg_values_supported"]
    sess = OAuth2Session(LOCAL_CLIENT, LOCAL_SECRET, scope="openid email", redirect_uri="http://127.0.0.1:8091/",
                         code_challenge_method="S256")
    login = sess.post(f"{base}/auth/web/login", data={"email": email, "password": "password123", "next": "/"},
                      allow_redirects=False, timeout=30, withhold_token=True)
    assert login.status_code == 302
    nonce, verifier = secrets.token_urlsafe(16), secrets.token_urlsafe(48)
    url, state = sess.create_authorization_url(disc["authorization_endpoint"], nonce=nonce, prompt="consent",
                                               code_verifier=verifier)
    page = sess.get(url, allow_redirects=False, timeout=30, withhold_token=True)
    assert page.status_code == 200 and "Allow" in page.text  # the consent page, not an auto-consent
    form = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.text))
    answer = sess.post(f"{base}/auth/o/oauth2/v2/auth/callback", data={**form, "decision": "allow"},
                       allow_redirects=False, timeout=30, withhold_token=True)
    assert answer.status_code == 302, answer.text
    token = sess.fetch_token(disc["token_endpoint"], authorization_response=answer.headers["location"],
                             code_verifier=verifier, state=state)
    key = jwt.PyJWKClient(disc["jwks_uri"]).get_signing_key_from_jwt(token["id_token"])
    claims = jwt.decode(token["id_token"], key.key, algorithms=["RS256"], audience=LOCAL_CLIENT, issuer=disc["issuer"])
    assert claims["nonce"] == nonce and claims["email"] == email
    assert jwt.get_unverified_header(token["id_token"])["alg"] == "RS256"


def test_the_banners_token_command_serves_slack_sdk_and_google_and_no_auth_opens_the_server(server):
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    from env0_posttrain.cli.main import serve_banner

    base, app = server
    banner = serve_banner("127.0.0.1", int(base.rsplit(":", 1)[1]), 0)
    scope = re.search(r"scope=([^']+)'", banner).group(1)
    assert f"client id: {LOCAL_CLIENT}" in banner and f"client secret: {LOCAL_SECRET}" in banner
    tok = requests.post(f"{base}/auth/oauth2/token", timeout=30, data={
        "grant_type": "client_credentials", "client_id": LOCAL_CLIENT, "client_secret": LOCAL_SECRET,
        "subject": app.state.ws.me.email, "scope": scope}).json()
    assert tok["scope"].split() == scope.split(), tok
    assert WebClient(token=tok["access_token"], base_url=f"{base}/api/").conversations_list()["channels"]
    with pytest.raises(SlackApiError) as e:
        WebClient(token="xoxp-not-ours", base_url=f"{base}/api/").conversations_list()
    assert e.value.response["error"] == "invalid_auth"
    headers = {"Authorization": f"Bearer {tok['access_token']}"}
    assert requests.get(f"{base}/gmail/v1/users/me/labels", headers=headers, timeout=30).status_code == 200
    with running_server() as (open_base, _):  # --no-auth: every call answered without a token
        assert requests.get(f"{open_base}/gmail/v1/users/me/labels", timeout=30).status_code == 200


def test_workspace_serve_is_gated_unless_told_no_auth(monkeypatch):
    from typer.testing import CliRunner

    from env0_posttrain.cli.main import app
    from env0_posttrain.workspace import http_app

    seen: list[bool] = []
    monkeypatch.setattr(http_app, "serve", lambda **kw: seen.append(kw["gated"]))
    gated = CliRunner().invoke(app, ["workspace", "serve", "--port", "8799"])
    assert gated.exit_code == 0 and f"client secret: {LOCAL_SECRET}" in gated.output and ":8799/auth/" in gated.output
    opened = CliRunner().invoke(app, ["workspace", "serve", "--no-auth"])
    assert opened.exit_code == 0 and "client secret" not in opened.output
    assert seen == [True, False]


def test_behind_the_gate_a_client_from_the_served_discovery_document_batches_and_uploads_with_its_token(server):
    """What `workspace serve` prints is enough for a real app: the discovery path stays open (as Google's), and a
    batch and a resumable upload carry the credentials' token to each part and chunk, so neither meets the gate."""
    import io

    from googleapiclient.discovery import build
    from googleapiclient.http import MediaIoBaseUpload

    base, app = server
    creds = _flow_credentials(base, app.state.ws.me.email, [f"{G}drive", f"{G}gmail.readonly"])
    url = f"{base}/discovery/v1/apis/{{api}}/{{apiVersion}}/rest"
    drive = build("drive", "v3", credentials=creds, static_discovery=False, cache_discovery=False,
                  discoveryServiceUrl=url)
    data = secrets.token_bytes(3 * 256 * 1024 + 77)  # four chunks, the last one short
    media = MediaIoBaseUpload(io.BytesIO(data), mimetype="application/octet-stream", chunksize=256 * 1024,
                              resumable=True)
    request = drive.files().create(body={"name": "blob.bin"}, media_body=media, fields="id,size,md5Checksum")
    made = None
    while made is None:
        _, made = request.next_chunk()
    assert int(made["size"]) == len(data)
    assert drive.files().get_media(fileId=made["id"]).execute() == data
    answers: dict[str, object] = {}
    batch = drive.new_batch_http_request(callback=lambda rid, answer, error: answers.update({rid: error or answer}))
    batch.add(drive.files().get(fileId=made["id"], fields="name"), request_id="mine")
    batch.add(drive.files().get(fileId="no-such-file"), request_id="missing")
    batch.execute()
    assert answers["mine"] == {"name": "blob.bin"}
    assert getattr(answers["missing"], "resp").status == 404  # an HttpError for that part only, past the gate
