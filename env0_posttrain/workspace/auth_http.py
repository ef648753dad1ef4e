"""The auth service's HTTP wire format: form-encoded OAuth requests, 302 redirects with a Location header, the
login and consent HTML pages, the session cookie and HTTP Basic client authentication.

Every request becomes one auth tool call (`Workspace.call`), so HTTP and agent calls share handlers and the
action log. `answer` is plain and synchronous; env0's surface calls it under its lock, and `auth_app` mounts it
into the workspace app (under /auth). `gate` is the resource servers' side for the workspace app when it is served
gated (`workspace serve`): the Bearer token of a Google or Slack request, checked by services/auth/gate.py.
"""

from __future__ import annotations

import html
import json
from http.cookies import SimpleCookie
from typing import Any, Callable
from urllib.parse import parse_qsl

from .dialects import dialect
from .environment import Workspace
from .errors import ApiError
from .request_limits import loads, read_body
from .services import registry
from .tools import TOOLS, CallResult, ToolSpec

Headers = list[tuple[str, str]]
Answer = tuple[int, Headers, bytes]
Call = Callable[[str, dict[str, Any]], CallResult]

ROUTES: dict[tuple[str, str], str] = {  # (verb, path) -> tool
    ("GET", "/.well-known/openid-configuration"): "auth_discovery",
    ("GET", "/oauth2/v3/certs"): "auth_certs",
    ("GET", "/o/oauth2/v2/auth"): "auth_authorize",
    ("POST", "/o/oauth2/v2/auth/callback"): "auth_consent",
    ("POST", "/web/login"): "auth_webLogin",
    ("POST", "/oauth2/token"): "auth_token",
    ("POST", "/token"): "auth_token",
    ("POST", "/oauth2/revoke"): "auth_revoke",
    ("GET", "/oauth2/v3/userinfo"): "auth_userinfo",
    ("GET", "/userinfo"): "auth_userinfo",
    ("GET", "/oauth2/v3/tokeninfo"): "auth_tokeninfo",
    ("GET", "/_admin/clients"): "auth_admin_clients",
    ("POST", "/_admin/revoke_scope"): "auth_admin_revokeScope",
    ("GET", "/_admin/audit_log"): "auth_admin_auditLog",
    ("GET", "/_admin/metrics"): "auth_admin_metrics",
    ("POST", "/_admin/issue_token"): "auth_admin_issueToken",
}
JSON_TYPE = "application/json; charset=utf-8"


def _json(status: int, body: Any, extra: Headers | None = None) -> Answer:
    return status, [("content-type", JSON_TYPE), *(extra or [])], json.dumps(body).encode()


def _html(status: int, page: str, extra: Headers | None = None) -> Answer:
    return status, [("content-type", "text/html; charset=utf-8"), *(extra or [])], page.encode()


def _params(query: bytes, body: bytes, ctype: str) -> dict[str, Any]:
    out: dict[str, Any] = dict(parse_qsl(query.decode("latin-1"), keep_blank_values=True))
    if body.strip():
        if "json" in ctype or body.lstrip()[:1] in (b"{", b"["):
            try:
                data = loads(body)
            except ValueError:
                data = None
            if isinstance(data, dict):
                out.update(data)
        else:
            out.update(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    return out


def _session(headers: dict[str, str]) -> str | None:
    jar = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # noqa: BLE001 - a malformed cookie header is no session
        return None
    morsel = jar.get(registry.guard().session_cookie)
    return morsel.value if morsel else None


def answer(call: Call, method: str, path: str, query: bytes, body: bytes, headers: dict[str, str],
           base_url: str) -> Answer:
    """One auth HTTP request. `headers` lower-cased; `base_url` is where this server is reached (the issuer)."""
    if (method, path) == ("GET", "/web/login"):
        nxt = dict(parse_qsl(query.decode("latin-1"))).get("next", "/")
        return _html(200, _login_page(nxt))
    name = ROUTES.get((method, path))
    if name is None:
        allowed = sorted(v for v, p in ROUTES if p == path)
        if allowed:
            return _json(405, {"error": "method_not_allowed", "allowed": allowed}, [("allow", ", ".join(allowed))])
        return _json(404, {"detail": "Not Found"})
    args = _params(query, body, headers.get("content-type", ""))
    if name in ("auth_authorize", "auth_consent"):
        args["session"] = _session(headers)
    if name == "auth_discovery":
        args["issuer"] = base_url
    if name == "auth_token" and headers.get("authorization"):
        args["authorization"] = headers["authorization"]
    if name in ("auth_userinfo", "auth_tokeninfo") and "access_token" not in args:
        args["access_token"] = headers.get("authorization", "")
    known = TOOLS[name].arg_fields
    res = call(name, {k: v for k, v in args.items() if k in known})
    if not res.ok:
        extra = [("www-authenticate", 'Bearer error="invalid_token"')] if res.status == 401 and "token" in name else []
        return _json(res.status, res.body, extra)
    out = res.body
    if name == "auth_webLogin":
        cookie = f"{registry.guard().session_cookie}={out['session']}; Path=/; HttpOnly; SameSite=Lax"
        return _html(302, "", [("location", out["redirect"]), ("set-cookie", cookie)])
    if name in ("auth_authorize", "auth_consent"):
        if "redirect" in out:
            return _html(302, "", [("location", out["redirect"])])
        page = _consent_page(out) if out.get("consent_required") and not out.get("login_required") else \
            _login_page("/o/oauth2/v2/auth?" + query.decode("latin-1"), out)
        return _html(200, page)
    if name == "auth_token":
        return _json(200, out, [("cache-control", "no-store"), ("pragma", "no-cache")])
    return _json(200, out)


def _login_page(nxt: str, req: dict[str, Any] | None = None) -> str:
    who = f"<p>{html.escape(req['client_name'])} wants access to your account.</p>" if req else ""
    return (f"<!doctype html><html><head><title>Sign in</title></head><body><h1>Sign in</h1>{who}"
            f'<form method="post" action="/web/login"><input name="email" type="email">'
            f'<input name="password" type="password"><input type="hidden" name="next" value="{html.escape(nxt)}">'
            f'<button type="submit">Sign in</button></form></body></html>')


def _consent_page(req: dict[str, Any]) -> str:
    hidden = "".join(f'<input type="hidden" name="{k}" value="{html.escape(str(req[k]))}">'
                     for k in ("client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "nonce")
                     if req.get(k) is not None)
    scopes = "".join(f"<li>{html.escape(s)}</li>" for s in str(req["scope"]).split())
    return (f"<!doctype html><html><head><title>Consent</title></head><body>"
            f"<h1>{html.escape(req['client_name'])} wants to access your account</h1><ul>{scopes}</ul>"
            f'<form method="post" action="/o/oauth2/v2/auth/callback">{hidden}'
            f'<button name="decision" value="allow">Allow</button><button name="decision" value="deny">Deny</button>'
            f"</form></body></html>")


def auth_app(get_ws: Callable[[], Workspace], mount: str = "/auth") -> Callable:
    """An ASGI app answering the auth paths below `mount` (the workspace app's /auth)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await read_body(receive)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        ws = get_ws()
        host = headers.get("host") or "%s:%s" % tuple(scope.get("server") or ("127.0.0.1", 80))
        base = f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}"
        ws.auth.issuer = base  # the issuer is where the client reached us: ID tokens name it, as discovery does
        path, root = scope["path"], scope.get("root_path", "")
        path = path[len(root):] if root and path.startswith(root) else path
        status, hdrs, payload = answer(lambda n, a: ws.call(n, a, source="http"), scope["method"], path or "/",
                                       scope.get("query_string", b""), body, headers, base)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(k.encode(), v.encode()) for k, v in hdrs] + [(b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})

    return app


# -- the resource servers' gate on the workspace app ---------------------------------------------------------------
LOCAL_CLIENT = "local-app"  # the OAuth client a gated `workspace serve` registers for apps under test
LOCAL_SECRET = "local-app-secret"


def register_local_client(ws: Workspace) -> dict[str, Any]:
    """A confidential client that may ask for every scope the gate knows (Google's, Slack's, OIDC's), with a
    loopback redirect URI (any port: installed-app flows) and the owner's consent on file (a `login_hint` or a
    signed-in session gets the code without the consent page). Returns what an app needs to use it."""
    scopes = registry.guard().scopes()
    ws.auth.add_client(client_id=LOCAL_CLIENT, client_name="Local app", client_secret=LOCAL_SECRET,
                       redirect_uris=["http://localhost/", "http://127.0.0.1/"], allowed_scopes=scopes,
                       grant_types=["authorization_code", "refresh_token", "client_credentials"])
    ws.auth.add_consent(user_id=ws.me.user_id, client_id=LOCAL_CLIENT, scopes=scopes)
    return {"client_id": LOCAL_CLIENT, "client_secret": LOCAL_SECRET, "user": ws.me.email}


def gate(ws: Workspace, spec: ToolSpec, scope: dict[str, Any], params: dict[str, Any],
         body: bytes) -> ApiError | None:
    """The API's refusal of a Google or Slack request without a good Bearer token (its `headers`: RFC 6750's
    WWW-Authenticate, where the API sends one); None lets it through. Stripe checks its own API keys
    (services/stripe/wire.py)."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    return dialect(spec.service).http_gate(ws, spec, registry.guard(), headers, scope.get("query_string", b""), body,
                                           params)
