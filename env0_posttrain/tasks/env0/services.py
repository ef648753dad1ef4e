"""env0's services as its packages reach them: the port each has in env0's image, the URL variables scripts read,
and which of our services answers, read from each service descriptor's env0 face (workspace/services/), so that
package/load.py, serve/server.py and serve/listeners.py share one table and a service is registered in its folder.

The ports are the scripts' own defaults (`${GMAIL_URL:-http://localhost:9001}` in test.sh / solve.sh). In a
sandbox each service listens on its port of the sandbox's private loopback; unconfined, on a free port.
"""

from __future__ import annotations

from typing import NamedTuple

from ...workspace.services import registry
from ...workspace.services.descriptor import Env0Face


class Env0Service(NamedTuple):
    name: str  # env0's name: task.toml `services`, the Dockerfile's seed command (`gmail --db ...`), `mock-<name>`
    port: int  # env0's port (localhost:<port> in the scripts)
    prefix: str  # the path prefix Env0Surface answers it under (serve/server.py)
    ours: str  # our workspace service (its state / diff shapes in serve/shapes.py)
    env: tuple[str, ...]  # the URL variables packages read (env0's MOCK_*_URL, env-0's *_URL)


SERVICES: list[Env0Service] = []  # by port; these tables follow the registry (`_refresh`)
# Not env0's: one more listener answering every API of the workspace at its real path (the Admin SDK, which env0
# has no port for, is reached only there), each method behind its own service's gate (serve/auth_surface.py). The shell
# surface names it to agents as $WORKSPACE_URL.
WORKSPACE = Env0Service("workspace", 9099, "workspace", "*", ("WORKSPACE_URL",))
LISTENERS: list[Env0Service] = []

# URL prefix -> our service; env0 service name (and its `mock-` package name) -> our service
PREFIXES: dict[str, str] = {}
SERVICE_MAP: dict[str, str] = {}
FACES: dict[str, Env0Face] = {}  # our service -> its env0 face (descriptor.py), for what its port does beyond the API


def _refresh() -> None:
    SERVICES[:] = sorted((Env0Service(s.env0.name, s.env0.port, s.env0.prefix, s.name, s.env0.env)
                          for s in registry.SERVICES if s.env0), key=lambda s: s.port)
    LISTENERS[:] = [*SERVICES, WORKSPACE]
    PREFIXES.clear()
    PREFIXES.update({s.prefix: s.ours for s in SERVICES})
    SERVICE_MAP.clear()
    SERVICE_MAP.update({n: s.ours for s in SERVICES for n in (s.name, f"mock-{s.name}")})
    FACES.clear()
    FACES.update({s.name: s.env0 for s in registry.SERVICES if s.env0})


registry.watch(_refresh)


def service_urls(base_of: dict[str, str]) -> dict[str, str]:
    """Every URL variable of every listener, given each one's base URL by prefix."""
    return {var: base_of[s.prefix] for s in LISTENERS for var in s.env}


def face(prefix: str) -> Env0Face | None:
    """The env0 face of the service a prefix serves (None: the workspace listener, or no such prefix)."""
    return FACES.get(PREFIXES.get(prefix, ""))


def issuer_prefix() -> str:
    """The prefix of the port that is the OIDC issuer (its base URL is the discovery document's default issuer)."""
    return next(s.prefix for s in SERVICES if FACES[s.ours].issuer)
