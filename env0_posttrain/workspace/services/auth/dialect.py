"""The OAuth/OIDC surface: Google-shaped tools and errors, but its form posts, redirects and cookies are served by
auth_http.py (and env0's auth port) rather than the API routes, and it issues the tokens the Bearer gate checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...dialects.base import HttpRoute
from ...dialects.google import Google

if TYPE_CHECKING:
    from ...environment import Workspace
    from ...errors import ApiError
    from ...tools import ToolSpec


class Auth(Google):
    family = "auth"
    own_http_surface = True

    def http_routes(self, spec: ToolSpec) -> tuple[HttpRoute, ...]:
        """None: its form posts, redirects and cookies are auth_http.py's (mounted at /auth)."""
        return ()

    def http_gate(self, ws: Workspace, spec: ToolSpec, guard: Any, headers: dict[str, str], query: bytes, body: bytes,
                  params: dict[str, Any]) -> ApiError | None:
        """None: it issues the tokens; its own surface checks its clients and sessions."""
        return None


AUTH = Auth()
