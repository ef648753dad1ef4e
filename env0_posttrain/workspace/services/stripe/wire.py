"""Stripe over HTTP: form bodies with bracket keys (`metadata[order_id]=1234`, `expand[]=customer`), the API key
(`Authorization: Bearer sk_test_...` or HTTP Basic with the key as user name), restricted keys' permissions,
env0's auth-service tokens when the account sits behind it, and `Idempotency-Key` replays.

Idempotency follows Stripe's rules: a POST's answer is saved under its key once the endpoint ran (a success or a
card decline; a request refused by validation is not saved), a retry with the same parameters gets the saved
answer again without running, and the same key with other parameters is an `idempotency_error`.
"""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote

from ...errors import ApiError
from ...request_limits import MAX_DEPTH, loads
from ..auth.gate import Refusal, authorize
from .data_model import IdempotentResponse
from .errors import idempotency_mismatch, invalid, permission_denied, unauthenticated

if TYPE_CHECKING:
    from ...environment import Workspace
    from ...tools import ToolSpec

_NO_KEY = ("You did not provide an API key. You need to provide your API key in the Authorization header, using "
           "Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication "
           "for details, or we can help at https://support.stripe.com/.")
_RESOURCE = {"listPaymentMethods": "payment_methods"}


def form_params(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Stripe's form encoding to nested values: a[b]=1 -> {"a": {"b": "1"}}, a[]=x&a[]=y and a[0]=x -> lists.
    Keys nested past MAX_DEPTH (JSON's limit) are refused with Stripe's 400."""
    root: dict[str, Any] = {}
    for key, value in pairs:
        parts = re.findall(r"\[([^\]]*)\]", key)
        head = key.split("[", 1)[0]
        if len(parts) >= MAX_DEPTH:
            raise invalid(f"Invalid parameter: {head} is nested more than {MAX_DEPTH} levels deep.", head)
        path = [head, *parts]
        cur = root
        for i, part in enumerate(path):
            last = i == len(path) - 1
            if part == "":
                part = str(len(cur))
            if last:
                cur[part] = value
            else:
                nxt = cur.get(part)
                if not isinstance(nxt, dict):
                    nxt = cur[part] = {}
                cur = nxt
    return {k: _lists(v) for k, v in root.items()}  # the top level names parameters, even a digit one ("0=x")


def _lists(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _lists(v) for k, v in value.items()}
        if out and all(k.isdigit() for k in out):
            return [out[k] for k in sorted(out, key=int)]
        return out
    return value


def api_key(headers: dict[str, str]) -> str | None:
    auth = headers.get("authorization", "").strip()
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    if auth.lower().startswith("basic "):
        try:
            user = base64.b64decode(auth[6:].strip()).decode().partition(":")[0]
        except (ValueError, UnicodeDecodeError):
            return None
        return unquote(user) or None
    return None


def permission(spec: "ToolSpec") -> tuple[str, str]:
    """(resource, "read" | "write") a method needs: `stripe.customers.list` -> ("customers", "read")."""
    parts = spec.method_id.split(".")
    resource = _RESOURCE.get(parts[-1]) or re.sub(r"(?<!^)([A-Z])", r"_\1", parts[1]).lower()
    return resource, "write" if spec.writes else "read"


def _masked(key: str) -> str:
    return key[:8] + "*" * max(0, len(key) - 12) + key[-4:] if len(key) > 12 else key


def check_access(ws: "Workspace", spec: "ToolSpec", key: str | None) -> None:
    """Raise Stripe's 401 / 403 unless `key` may call `spec`. Caller holds the workspace lock."""
    db = ws.stripe.db
    resource, mode = permission(spec)
    if db.auth_required:
        _check_token(ws, spec, key, resource, mode)
        return
    if not key:
        raise unauthenticated(_NO_KEY)
    row = db.api_keys.get(key)
    if row is None:
        raise unauthenticated(f"Invalid API Key provided: {_masked(key)}")
    if row.type == "restricted":
        held = set(row.permissions)
        if f"{resource}.write" not in held and (mode == "write" or f"{resource}.read" not in held):
            raise permission_denied(f"The provided key '{_masked(key)}' does not have the required permissions for "
                                    f"this endpoint on account 'acct_env0'. Having the '{_rak(resource, mode)}' "
                                    "permission would allow this request to continue.")


def _rak(resource: str, mode: str) -> str:
    return f"rak_{resource.rstrip('s') if resource != 'balance' else resource}_{mode}"


def _check_token(ws: "Workspace", spec: "ToolSpec", token: str | None, resource: str, mode: str) -> None:
    """env0's AUTH_ENABLED=1: an access token of the auth service whose scopes cover the call
    (`stripe.<resource>.read|write`, write implying read; `stripe.read_only`; `stripe.full`), checked and audited by
    the auth service's gate like every other resource server's."""
    need = {"stripe.full", f"stripe.{resource}.write"}
    if mode == "read":
        need |= {f"stripe.{resource}.read", "stripe.read_only"}
    try:
        authorize(ws, spec, f"Bearer {token}" if token else None, {}, need=need, account=False)
    except Refusal as r:
        if r.kind == "scope":
            raise permission_denied(f"The access token does not have the required permissions for this endpoint: it "
                                    f"needs the scope 'stripe.{resource}.{mode}'.") from None
        raise unauthenticated(_NO_KEY if r.kind == "missing" else "Invalid or expired access token: this account "
                              "requires an access token from the identity layer (AUTH_URL /oauth2/token), not an API "
                              "key.") from None


def answer(ws: "Workspace", spec: "ToolSpec", path_params: dict[str, str], query: list[tuple[str, str]],
           body: bytes, content_type: str, headers: dict[str, str]) -> tuple[int, Any]:
    """(status, JSON body) of one Stripe request."""
    try:
        return _answer(ws, spec, path_params, query, body, content_type, headers)
    except ApiError as e:  # a form the wire format refuses (keys nested too deep)
        return e.status, e.body


def _answer(ws: "Workspace", spec: "ToolSpec", path_params: dict[str, str], query: list[tuple[str, str]],
            body: bytes, content_type: str, headers: dict[str, str]) -> tuple[int, Any]:
    params = form_params(query)
    if body.strip():
        if content_type.startswith("application/json"):  # not Stripe's wire format, but an agent may send it
            try:
                value = loads(body)  # past the nesting limit: ValueError, not RecursionError
            except (ValueError, UnicodeDecodeError) as e:  # refused, not dropped: nothing runs without its params
                raise invalid(f"Invalid JSON request body: {e}"[:300]) from None
            if not isinstance(value, dict):
                raise invalid("Invalid JSON request body: expected an object of parameters.")
            params.update(value)
        else:
            params.update(form_params(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)))
    kwargs = {**params, **{k: unquote(v) for k, v in path_params.items()}}
    with ws.lock:
        try:
            check_access(ws, spec, api_key(headers))
        except Exception as e:  # an ApiError: answered like any other
            return getattr(e, "status", 401), getattr(e, "body", {})
        key = headers.get("idempotency-key") if spec.http_method == "POST" else None
        if not key:
            res = ws.call(spec.name, kwargs, source="http")
            return res.status, res.body
        fingerprint = json.dumps([spec.http_method, spec.path, kwargs], sort_keys=True, default=str)
        saved = ws.stripe.db.idempotency.get(key)
        if saved is not None:
            if saved.fingerprint != fingerprint:
                err = idempotency_mismatch(key)
                return err.status, err.body
            return saved.status, json.loads(saved.body_json)
        res = ws.call(spec.name, kwargs, source="http")
        if res.ok or res.status == 402:
            ws.stripe.db.idempotency[key] = IdempotentResponse(key=key, fingerprint=fingerprint, status=res.status,
                                                               body_json=json.dumps(res.body), created=ws.stripe.now())
        return res.status, res.body
