"""An env0 package's auth needles -> the auth service: env0's base seed (user1 / user2 with the shared demo
password, the gws-cli public client, the stripe-agent confidential client the stripe packages name), then AUTH_USERS, AUTH_CLIENTS (confidential ones get env0's generic secret
"client-secret"), AUTH_CONSENTS, and SESSION_TOKENS (what env0's per-package seed_sessions.py hook mints: one live
token per session, with the rogue device's audit trail). Whether the package puts its APIs behind the auth server
(`ENV AUTH_ENABLED=1` in its Dockerfile) goes to the server as an extra.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from ....workspace.environment import Workspace

PASSWORD = "password123"
BASE_USERS = [{"id": "user1", "email": "alex@nexusai.com", "display_name": "Alex Chen", "given_name": "Alex",
               "family_name": "Chen"},
              {"id": "user2", "email": "colleague@example.com", "display_name": "Jordan Lee", "given_name": "Jordan",
               "family_name": "Lee"}]
GWS_CLI = {"client_id": "gws-cli", "client_name": "Google Workspace CLI", "client_type": "public",
           "redirect_uris": ["http://localhost:8085/", "http://localhost:8085/callback", "http://127.0.0.1:8085/callback",
                             "urn:ietf:wg:oauth:2.0:oob"],
           "allowed_scopes": ["openid", "email", "profile", "gmail.readonly", "gmail.send", "gmail.compose",
                              "gmail.modify", "gmail.labels", "gmail.settings.basic", "gmail.metadata", "gmail.full",
                              "calendar.readonly", "calendar.events", "calendar.full", "drive.readonly", "drive.file",
                              "drive.full"],
           "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"]}
STRIPE_SCOPES = [f"stripe.{r}.{a}" for r in ("customers", "payment_intents", "charges", "refunds", "payment_methods",
                                             "products", "prices", "webhook_endpoints") for a in ("read", "write")] + \
    ["stripe.balance.read", "stripe.balance_transactions.read", "stripe.events.read", "stripe.read_only", "stripe.full"]
STRIPE_AGENT = {"client_id": "stripe-agent", "client_name": "Stripe Agent", "client_type": "confidential",
                "client_secret": "stripe-agent-secret", "redirect_uris": ["http://localhost:8765/callback"],
                "allowed_scopes": ["openid", *STRIPE_SCOPES],
                "grant_types": ["client_credentials", "authorization_code", "refresh_token"]}
_CLIENT_KEYS = ("client_id", "client_name", "client_type", "client_secret", "redirect_uris", "allowed_scopes",
                "grant_types", "access_token_ttl")


def auth_enabled(needles_path: Path) -> bool:
    docker = needles_path.resolve().parent.parent / "environment" / "Dockerfile"
    try:
        text = docker.read_text(encoding="utf-8")
    except OSError:
        return False
    return re.search(r"^\s*ENV\s+AUTH_ENABLED\s*=?\s*\"?(1|true|yes)\"?\s*$", text, re.M | re.I) is not None


def seed_auth(ws: Workspace, mod: ModuleType, extras: dict[str, Any]) -> None:
    auth = ws.auth
    auth.db.users.clear()
    auth.db.clients.clear()
    for u in BASE_USERS:
        auth.add_user(**u, password=PASSWORD)
    auth.add_client(**GWS_CLI)
    auth.add_client(**STRIPE_AGENT)
    auth.db.mailbox_owner = "user1"  # env0's gmail / gcal / gdrive hold user1's data
    auth.db.profile = "env0"  # env0's own server where it differs from Google's (docs/ENV0-PACKAGES.md, auth)
    for u in getattr(mod, "AUTH_USERS", None) or []:
        auth.add_user(id=u["id"], email=u["email"], display_name=u.get("display_name") or u.get("name"),
                      given_name=u.get("given_name"), family_name=u.get("family_name"),
                      password=u.get("password", PASSWORD))
    for c in getattr(mod, "AUTH_CLIENTS", None) or []:
        if c["client_id"] in auth.db.clients:  # env0's seeder skips clients the base seed made
            continue
        auth.add_client(**{k: c[k] for k in _CLIENT_KEYS if k in c})
    for c in getattr(mod, "AUTH_CONSENTS", None) or []:
        days = c.get("last_used_days_ago")
        auth.add_consent(user_id=c["user_id"], client_id=c["client_id"], scopes=list(c.get("scopes") or []),
                         last_used=timedelta(days=float(days)) if days is not None else None)
    for s in getattr(mod, "SESSION_TOKENS", None) or []:
        _session_token(ws, getattr(mod, "OWNER_USER_ID", "user1"), s)
    if auth_enabled(Path(getattr(mod, "__file__", "needles.py"))):
        extras["auth_enabled"] = True
        auth.db.resource_gate = True  # the tool channel is gated too (workspace/tool_gate.py)


def _session_token(ws: Workspace, user_id: str, s: dict[str, Any]) -> None:
    """env0's seed_sessions.py: a day-long token per session, issued hours ago, and for the suspicious one the
    authorization request and resource reads that followed it (all marked seeded)."""
    auth = ws.auth
    client, user = auth.db.clients[s["client_id"]], auth.db.users[user_id]
    hours = float(s.get("hours_ago", 0))
    at = auth.stamp(-timedelta(hours=hours))
    scope = s["scope"] if isinstance(s["scope"], list) else str(s["scope"]).split()
    where = {"ip_address": s.get("ip"), "user_agent": s.get("user_agent")}
    if s.get("suspicious"):
        auth.log_event("authorization_request", client_id=client.client_id, user_id=user_id, scope=" ".join(scope),
                       details={"redirect_uri": f"http://{s.get('ip')}/callback", "seeded": True},
                       at=auth.stamp(-timedelta(hours=hours + 0.05)), **where)
    auth.mint(client, user, scope, "authorization_code", expires_in=86400, audit=None)
    jti = next(reversed(auth.db.access_tokens))
    row = auth.db.access_tokens[jti]
    auth.db.access_tokens[jti] = row.model_copy(update={"created_at": at})
    auth.log_event("token_issued", client_id=client.client_id, user_id=user_id, scope=" ".join(scope),
                   details={"grant": "authorization_code", "jti": jti, "seeded": True}, at=at, **where)
    if s.get("suspicious"):
        for i, (route, used) in enumerate([("/gmail/v1/users/{userId}/messages", "gmail.full"),
                                           ("/drive/v3/files", "drive.full"),
                                           ("/gmail/v1/users/{userId}/messages/{messageId}", "gmail.full")]):
            auth.log_event("resource_access", client_id=client.client_id, user_id=user_id, scope=used,
                           details={"scope_used": used, "route": route, "seeded": True},
                           at=auth.stamp(-timedelta(hours=hours - 0.1 * (i + 1))), **where)
