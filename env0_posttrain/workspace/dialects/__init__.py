"""What differs on the wire between the API families the workspace serves, one dialect per family: Google's REST APIs
(Gmail, Calendar, Drive, Docs, the Admin Directory), Slack's Web API, Stripe's REST API, and the OAuth/OIDC surface.
Each service's descriptor names its dialect and the registry records it here (`speak`), so a shared module asks
`dialect(service)` instead of comparing service names.
"""

from __future__ import annotations

from .base import Dialect
from .google import GOOGLE

_BY_SERVICE: dict[str, Dialect] = {}


def speak(service: str, dialect: Dialect | None) -> None:
    """Record a registered service's dialect (services/registry.py, before its tools are named); None forgets it."""
    if dialect is None:
        _BY_SERVICE.pop(service, None)
    else:
        _BY_SERVICE[service] = dialect


def dialect(service: str | None) -> Dialect:
    """The dialect of a service; an unknown name speaks Google's."""
    return _BY_SERVICE.get(service or "", GOOGLE)


__all__ = ["Dialect", "dialect", "speak"]
