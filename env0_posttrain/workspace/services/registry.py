"""The services the workspace serves, in one ordered registry: each service folder's `SERVICE` descriptor, registered
once. Registering a service gives it a dialect, puts its @api methods in the tool table and makes every workspace
built afterwards hold it; everything that used to restate the services loops over `SERVICES` instead."""

from __future__ import annotations

from ..dialects import speak
from ..tools import register as register_tools
from .descriptor import ServiceDescriptor
from . import admin, auth, calendar, docs, drive, gmail, slack, stripe

SERVICES: list[ServiceDescriptor] = []
_BY_NAME: dict[str, ServiceDescriptor] = {}


def register(service: ServiceDescriptor) -> ServiceDescriptor:
    """Serve one more service (its name must be new): the order of registration is the order of the tool table."""
    if service.name in _BY_NAME:
        raise ValueError(f"service {service.name!r} is registered twice")
    speak(service.name, service.dialect)  # before its tools: a tool's name is its dialect's
    register_tools(service.toolkit)
    SERVICES.append(service)
    _BY_NAME[service.name] = service
    return service


def names() -> tuple[str, ...]:
    return tuple(s.name for s in SERVICES)


def get(name: str) -> ServiceDescriptor:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no service named {name!r}; registered: {', '.join(names())}") from None


def find(name: str | None) -> ServiceDescriptor | None:
    return _BY_NAME.get(name or "")


for _module in (gmail, calendar, drive, docs, slack, admin, stripe, auth):
    register(_module.SERVICE)
