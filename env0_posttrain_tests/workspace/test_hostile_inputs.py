"""Hostile inputs on every service an env0 package reaches (Gmail, Calendar, Drive, Docs, Slack, Stripe, auth),
through env0's surface: strings JSON carries but UTF-8 cannot (lone surrogates, in values and names), non-finite
numbers, nesting past 100 levels (JSON and Stripe's bracket forms), bytes that are not UTF-8. None gets a 5xx; each
gets its API's own refusal (or is stored safely), and the state, its hash, snapshots, diffs and the action logs
still answer afterwards."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from env0_posttrain.tasks.env0.serve.server import Env0Surface
from env0_posttrain.tasks.env0.services import PREFIXES
from env0_posttrain.workspace import TOOLS, Workspace, call_tool
from env0_posttrain_tests.support.workspace import assert_not_a_server_error

KEY = (b"authorization", b"Bearer sk_test_env_0_51deterministic")
JSON, FORM = b"application/json", b"application/x-www-form-urlencoded"
EVENT = {"start": {"dateTime": "2026-03-12T10:00:00Z"}, "end": {"dateTime": "2026-03-12T11:00:00Z"}}
# prefix, verb, path, content type, a valid body as a dict (the hostile value goes into its first field)
ROUTES = [
    ("gmail", "POST", "/gmail/v1/users/me/labels", JSON, {"name": "ok"}),
    ("gcal", "POST", "/calendar/v3/calendars/primary/events", JSON, {"summary": "ok", **EVENT}),
    ("gdrive", "POST", "/drive/v3/files", JSON, {"name": "ok"}),
    ("gdoc", "POST", "/v1/documents", JSON, {"title": "ok"}),
    ("slack", "POST", "/api/chat.postMessage", JSON, {"text": "ok", "channel": "general"}),
    ("slack", "POST", "/api/chat.postMessage", FORM, {"text": "ok", "channel": "general"}),
    ("stripe", "POST", "/v1/customers", FORM, {"name": "ok"}),
    ("stripe", "POST", "/v1/customers", JSON, {"name": "ok"}),
    ("auth", "POST", "/oauth2/token", FORM, {"grant_type": "client_credentials", "client_id": "x"}),
]


def _encode(ctype: bytes, body: dict) -> bytes:
    if ctype == JSON:
        return json.dumps(body).encode()  # escapes a lone surrogate as \udXXX: valid JSON text
    from urllib.parse import quote

    return "&".join(f"{quote(k.encode('utf-8', 'surrogatepass'))}={quote(str(v).encode('utf-8', 'surrogatepass'))}"
                    for k, v in body.items()).encode()


def _hostile_bodies(ctype: bytes, valid: dict) -> list[bytes]:
    first = next(iter(valid))
    out = [_encode(ctype, {**valid, first: "x\ud800y"}), _encode(ctype, {**valid, "name\udc00": "v"}),
           _encode(ctype, {**valid, first: "\udfff"})]
    if ctype == JSON:
        out += [json.dumps(valid)[:-1].encode() + b', "n": NaN}', json.dumps(valid)[:-1].encode() + b', "n": 1e999}',
                ('{"a": ' * 101 + "1" + "}" * 101).encode(), b'{"name": "\xff\xfe"}']
    else:
        out += [_encode(ctype, valid) + b"&meta" + b"[a]" * 500 + b"=1", _encode(ctype, valid) + b"&z=%ff%fe%ED%A0%80"]
    return out


def _answers_json(payload: bytes) -> object:
    return json.loads(payload) if payload.strip() else None


def _reads_still_work(surface: Env0Surface, ws: Workspace) -> None:
    for prefix in PREFIXES:
        for path in ("/_admin/state", "/_admin/diff", "/_admin/action_log"):
            status, _, payload = surface.respond(prefix, "GET", path, b"", [], b"")
            assert status == 200, (prefix, path, payload[:200])
            json.loads(payload)
    json.dumps(ws.state(), ensure_ascii=False).encode()  # UTF-8 holds every stored string
    assert ws.state_hash() == ws.state_hash()
    ws.snapshot("after")
    assert ws.diff("seed") is not None
    json.dumps(ws.log(), ensure_ascii=False).encode()


@pytest.mark.parametrize("prefix,verb,path,ctype,valid", ROUTES, ids=[f"{r[0]}-{r[3].decode()[12:16]}" for r in ROUTES])
def test_hostile_bodies_get_the_apis_refusal_never_a_5xx_and_break_no_read(prefix, verb, path, ctype, valid):
    ws = Workspace.seeded(0)
    surface = Env0Surface(ws)
    for body in _hostile_bodies(ctype, valid):
        status, _, payload = surface.respond(prefix, verb, path, b"", [(b"content-type", ctype), KEY], body)
        assert status < 500, (body[:80], payload[:300])
        out = _answers_json(payload)
        if prefix == "slack":
            assert status == 200 and isinstance(out, dict) and "ok" in out
        elif prefix == "stripe":
            assert status == 200 or out["error"]["type"] == "invalid_request_error"
        elif prefix != "auth":
            assert status == 200 or out["error"]["code"] == status
        _reads_still_work(surface, ws)
    for e in ws.action_log:  # what was refused is logged JSON-safe
        json.dumps(e["args"], ensure_ascii=False).encode()


_hostile_text = st.text(alphabet=st.one_of(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
                                           st.characters(codec="utf-8")), max_size=6)
_value = st.recursive(st.one_of(_hostile_text, st.floats(), st.integers(), st.none(), st.booleans()),
                      lambda inner: st.one_of(st.lists(inner, max_size=3),
                                              st.dictionaries(_hostile_text, inner, max_size=3)), max_leaves=8)
WRITES = tuple(sorted(n for n, s in TOOLS.items() if s.writes and s.service != "admin"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(ROUTES), _value), min_size=1, max_size=4))
def test_random_hostile_values_over_http_never_5xx_and_keep_the_state_readable(sends):
    ws = Workspace.seeded(0)
    surface = Env0Surface(ws)
    for (prefix, verb, path, ctype, valid), value in sends:
        field = next(iter(valid))
        body = {**valid, field: value} if ctype == JSON else {**valid, field: json.dumps(value)}
        try:
            raw = _encode(ctype, body)
        except ValueError:  # allow_nan: json.dumps writes NaN, which is still sent
            continue
        status, _, payload = surface.respond(prefix, verb, path, b"", [(b"content-type", ctype), KEY], raw)
        assert status < 500, (prefix, raw[:120], payload[:300])
    _reads_still_work(surface, ws)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(WRITES), st.dictionaries(st.sampled_from(
    ["body", "name", "text", "summary", "title", "channel", "q", "description", "metadata"]), _value, max_size=3)),
    min_size=1, max_size=5))
def test_random_hostile_tool_arguments_on_every_service_never_5xx_or_store_them(calls):
    ws = Workspace.seeded(0)
    h0 = ws.state_hash()
    ws.snapshot("start")
    for name, args in calls:
        assert_not_a_server_error(name, args, call_tool(ws, name, args))
    json.dumps(ws.state(), ensure_ascii=False).encode()
    json.dumps(ws.log(), ensure_ascii=False).encode()
    ws.restore("start")
    assert ws.state_hash() == h0


@pytest.mark.parametrize("params", ["a string", ["userId", "me"], 7, [["userId", "me"]]])
def test_a_gws_call_whose_params_are_no_object_is_the_callers_400(params):
    surface = Env0Surface(Workspace.seeded(0))
    body = json.dumps({"service": "gmail", "method_id": "gmail.users.labels.list", "params": params}).encode()
    status, _, payload = surface.respond("gmail", "POST", "/_gws", b"", [(b"content-type", JSON)], body)
    assert status == 400 and json.loads(payload)["error"]["reason"] == "invalidParameter", payload
    ok = json.dumps({"service": "gmail", "method_id": "gmail.users.labels.list", "params": {"userId": "me"}}).encode()
    assert surface.respond("gmail", "POST", "/_gws", b"", [(b"content-type", JSON)], ok)[0] == 200
