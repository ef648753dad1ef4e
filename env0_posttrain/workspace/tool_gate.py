"""The tool channel as a client of the auth service, where the resource servers sit behind it (env0's
`AUTH_ENABLED=1`: the auth DB's `resource_gate`, Stripe's `auth_required`).

There a guarded tool call carries the access token the agent last obtained through the auth tools (`auth_token`,
`auth_admin_issueToken`), as a client library holds the credential its OAuth flow fetched, and passes the same gate
an HTTP request passes: no token is the API's 401, a wrong scope its 403, a revoked token refused, each audited.
So an auth package asks on the tools surface what it asks on the shell surface and in env0's containers: the OAuth
steps its instruction requires. Elsewhere the tool channel is the agent's own credential and nothing is checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .dialects import dialect
from .services import registry

if TYPE_CHECKING:
    from .environment import Workspace
    from .tools import ToolSpec

ISSUERS = ("auth_token", "auth_admin_issueToken")  # the auth tools whose answer carries an access token


def gated(ws: "Workspace", spec: "ToolSpec") -> bool:
    own = dialect(spec.service).own_gate(ws)  # Stripe: its own API keys, behind `auth_required`
    return spec.service in registry.guard().guarded and ws.auth.db.resource_gate if own is None else own


def refusal(ws: "Workspace", spec: "ToolSpec", arguments: Any) -> tuple[int, Any, Any]:
    """(status, error body, arguments to run with) for a gated call: status 0 lets it run. A token of a second
    account with a mailbox here runs the call as that account (Gmail's userId), as the HTTP gate does. Caller holds
    the workspace lock."""
    token = ws.tool_credential
    d = dialect(spec.service)
    if d.own_gate(ws) is not None:
        err = d.check_credential(ws, spec, token)
        return (err.status, err.body, arguments) if err is not None else (0, None, arguments)
    args = arguments if isinstance(arguments, dict) else {}
    guard = registry.guard()
    try:
        other = guard.authorize(ws, spec, f"Bearer {token}" if token else None, args)
    except guard.refused as r:
        e = d.refusal(r)
        return e.status, e.body, arguments
    if other is not None:
        return 0, None, {**args, "userId": ws.auth.db.users[other].email}
    return 0, None, arguments


def remember(ws: "Workspace", name: str, ok: bool, body: Any) -> None:
    """Hold the access token an issuing auth tool answered with (the channel's credential from now on)."""
    if ok and name in ISSUERS and isinstance(body, dict) and isinstance(body.get("access_token"), str):
        ws.tool_credential = body["access_token"]
