"""What differs on the wire between the API families the workspace serves, one dialect per family, chosen once by
service name: Google's REST APIs (Gmail, Calendar, Drive, Docs, the Admin Directory), Slack's Web API, Stripe's
REST API, and the OAuth/OIDC surface. A shared module asks `dialect(service)` instead of comparing service names.
"""

from __future__ import annotations

from .auth import AUTH
from .base import Dialect
from .google import GOOGLE
from .slack import SLACK
from .stripe import STRIPE

_BY_SERVICE: dict[str, Dialect] = {"slack": SLACK, "stripe": STRIPE, "auth": AUTH}


def dialect(service: str | None) -> Dialect:
    """The dialect of a service; every other service (and an unknown name) speaks Google's."""
    return _BY_SERVICE.get(service or "", GOOGLE)


__all__ = ["Dialect", "dialect"]
