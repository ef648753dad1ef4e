"""The services the workspace serves, in one ordered registry: each service folder's `SERVICE` descriptor, registered
once. Registering a service gives it a dialect, puts its @api methods in the tool table and makes every workspace
built afterwards hold it; everything that used to restate the services loops over `SERVICES` instead, and a table
derived from them at import time is kept in step by `watch` (a test may register a service of its own, then
unregister it)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from ..dialects import speak
from ..tools import forget as forget_tools
from ..tools import register as register_tools
from .descriptor import Guard, ServiceDescriptor
from . import admin, auth, calendar, docs, drive, gmail, slack, stripe

SERVICES: list[ServiceDescriptor] = []
_BY_NAME: dict[str, ServiceDescriptor] = {}
_WATCHERS: list[Callable[[], None]] = []


def register(service: ServiceDescriptor) -> ServiceDescriptor:
    """Serve one more service (its name must be new): the order of registration is the order of the tool table."""
    if service.name in _BY_NAME:
        raise ValueError(f"service {service.name!r} is registered twice")
    speak(service.name, service.dialect)  # before its tools: a tool's name is its dialect's
    register_tools(service.toolkit)
    SERVICES.append(service)
    _BY_NAME[service.name] = service
    _changed()
    return service


def unregister(name: str) -> None:
    """Stop serving a service registered by `register` (its tools, its dialect, its place in every table)."""
    service = get(name)
    SERVICES.remove(service)
    del _BY_NAME[name]
    forget_tools(name)
    speak(name, None)
    _changed()


@contextmanager
def registered(service: ServiceDescriptor) -> Iterator[ServiceDescriptor]:
    """The service registered for the duration of a `with` block."""
    register(service)
    try:
        yield service
    finally:
        unregister(service.name)


def watch(refresh: Callable[[], None]) -> None:
    """Call `refresh` now and after every change of the registry: it rebuilds a table derived from `SERVICES`."""
    _WATCHERS.append(refresh)
    refresh()


def _changed() -> None:
    for refresh in _WATCHERS:
        refresh()


def names() -> tuple[str, ...]:
    return tuple(s.name for s in SERVICES)


def get(name: str) -> ServiceDescriptor:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no service named {name!r}; registered: {', '.join(names())}") from None


def guard() -> Guard:
    """The OAuth gate a registered service provides (the auth service's)."""
    try:
        return next(s.guard for s in SERVICES if s.guard is not None)
    except StopIteration:
        raise LookupError(f"no registered service provides the OAuth gate; registered: {', '.join(names())}") from None


for _module in (gmail, calendar, drive, docs, slack, admin, stripe, auth):
    register(_module.SERVICE)
