"""The OAuth/OIDC surface: Google-shaped tools and errors, but its form posts, redirects and cookies are served by
auth_http.py (and env0's auth port) rather than the API routes, and it issues the tokens the Bearer gate checks."""

from __future__ import annotations

from .google import Google


class Auth(Google):
    family = "auth"
    own_http_surface = True


AUTH = Auth()
