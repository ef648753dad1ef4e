"""What differs on the wire between the API families the workspace serves. Here: the questions a shared module asks
(base.py) and Google's REST conventions (google.py), which Calendar, Drive, Docs and the Admin Directory speak as
they are. A family that is one service's (Gmail's quirks, Slack's Web API, Stripe's REST API, the OAuth/OIDC surface)
lives in that service's folder (`services/<svc>/dialect.py`). Each service's descriptor names its dialect and the
registry records it here (`speak`), so a shared module asks `dialect(service)` instead of comparing service names.
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
