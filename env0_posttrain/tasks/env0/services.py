"""env0's services as its packages reach them: the port each has in env0's image, the URL variables scripts read,
and which of our services answers. Registering a service is one row of SERVICES (no imports here on purpose:
package/load.py, serve/server.py and serve/listeners.py all read this table).

The ports are the scripts' own defaults (`${GMAIL_URL:-http://localhost:9001}` in test.sh / solve.sh). In a
sandbox each service listens on its port of the sandbox's private loopback; unconfined, on a free port.
"""

from __future__ import annotations

from typing import NamedTuple


class Env0Service(NamedTuple):
    name: str  # env0's name: task.toml `services`, the Dockerfile's seed command (`gmail --db ...`), `mock-<name>`
    port: int  # env0's port (localhost:<port> in the scripts)
    prefix: str  # the path prefix Env0Surface answers it under (serve/server.py)
    ours: str  # our workspace service (its state / diff shapes in serve/shapes.py)
    env: tuple[str, ...]  # the URL variables packages read (env0's MOCK_*_URL, env-0's *_URL)


SERVICES: tuple[Env0Service, ...] = (
    Env0Service("auth", 9000, "auth", "auth", ("MOCK_AUTH_URL", "AUTH_URL")),
    Env0Service("gmail", 9001, "gmail", "gmail", ("MOCK_GMAIL_URL", "GMAIL_URL")),
    Env0Service("slack", 9002, "slack", "slack", ("MOCK_SLACK_URL", "SLACK_URL")),
    Env0Service("gcal", 9003, "gcal", "calendar", ("MOCK_GCAL_URL", "GCAL_URL", "CALENDAR_URL")),
    Env0Service("gdoc", 9004, "gdoc", "docs", ("MOCK_GDOC_URL", "GDOC_URL", "DOCS_URL")),
    Env0Service("gdrive", 9005, "gdrive", "drive", ("MOCK_GDRIVE_URL", "GDRIVE_URL", "DRIVE_URL")),
    Env0Service("stripe", 9007, "stripe", "stripe", ("MOCK_STRIPE_URL", "STRIPE_URL")),
)

# Not env0's: one more listener answering every API of the workspace at its real path (the Admin SDK, which env0
# has no port for, is reached only there), each method behind its own service's gate (serve/auth_surface.py). The shell
# surface names it to agents as $WORKSPACE_URL.
WORKSPACE = Env0Service("workspace", 9099, "workspace", "*", ("WORKSPACE_URL",))
LISTENERS: tuple[Env0Service, ...] = (*SERVICES, WORKSPACE)

# URL prefix -> our service; env0 service name (and its `mock-` package name) -> our service
PREFIXES = {s.prefix: s.ours for s in SERVICES}
SERVICE_MAP = {n: s.ours for s in SERVICES for n in (s.name, f"mock-{s.name}")}


def service_urls(base_of: dict[str, str]) -> dict[str, str]:
    """Every URL variable of every listener, given each one's base URL by prefix."""
    return {var: base_of[s.prefix] for s in LISTENERS for var in s.env}
