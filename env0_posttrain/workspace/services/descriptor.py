"""What the house knows about one service, held in one place: each service folder exports one `ServiceDescriptor`
and `registry.py` collects them, so the workspace, the tool table, the dialect lookup and env0's face of the service
loop over the registry instead of restating the services."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..dialects.base import Dialect
from ..dialects.google import GOOGLE

if TYPE_CHECKING:
    from ..base import Service
    from .env0_planting import Planter
    from .env0_shapes import Diff, State
    from .safety import Gate


@dataclass(frozen=True)
class Env0Face:
    """How env0's task packages reach the service: env0's own name for it (task.toml `services`, `mock-<name>`), the
    port its scripts default to (`${GMAIL_URL:-http://localhost:9001}`), the URL variables they read, its rows in
    env0's /_admin/state and /_admin/diff JSON (env0_shapes.py), the needles module's fill-config name, the (service,
    table)s its default fill goes into (emptied when a package wants its needles alone) and the module attributes that
    show a package uses it when task.toml names none."""

    name: str
    port: int
    env: tuple[str, ...]
    state: State | None = None
    diff: Diff | None = None
    fill: str | None = None
    fill_tables: tuple[tuple[str, str], ...] = ()
    hints: tuple[str, ...] = ()
    gws: bool = False  # reached through env0's `gws` command (Google Workspace CLI) under our service name
    # env0 face, round 3
    family: str | None = None  # the task family a package of this service alone counts as (None: multi-app)
    subsumes: tuple[str, ...] = ()  # services a package may use beside it and still count as its family
    routes: Env0Routes | None = None  # routes its port answers beyond the API's own (mock-gdoc's comments)
    own_routes: tuple[str, ...] = ()  # API routes standing for no tool that are its own (Slack's upload step 2)
    issuer: bool = False  # its port is the OIDC issuer: auth_http answers it, and its answers carry the tokens
    stand_ins: Path | None = None  # a folder of stand-ins for env0-private packages of it, importable by their names
    seed_rows: Mapping[str, type] = field(default_factory=dict)  # table -> row model of a stand-in seeder's objects
    plant: Planter | None = None  # plants a package's needles of it (env0_planting.py); faces sharing one plant once
    plant_order: int = 0  # planters run in this order, env0's image's (gmail and calendar share one rng)
    fill_family: bool = True  # counts as a family when FILL_CONFIG is read as one family's (docs rides on drive)

    @property
    def prefix(self) -> str:
        """The path prefix the env0 surface answers it under: env0's name."""
        return self.name


@dataclass(frozen=True)
class Guard:
    """The OAuth gate the resource servers sit behind, which one service (auth) provides and shared code reaches
    through the registry (`registry.guard()`): `authorize(ws, spec, authorization, args)` returns the account a
    token of another mailbox acts as (None: the caller's) or raises `refused`, whose `answer()` is Google's error;
    `guarded`: the services it guards on the tool channel while the auth DB's `resource_gate` is on; `scopes()`:
    every scope it knows; `session_cookie`: the name of the signed-in session's cookie on its own HTTP surface."""

    authorize: Callable[..., str | None]
    refused: type[Exception]
    guarded: tuple[str, ...]
    scopes: Callable[[], list[str]]
    session_cookie: str


@dataclass(frozen=True)
class ServiceDescriptor:
    """One service to the rest of the house. `gates`: what the safety gates read of it (safety.py; None: nothing to
    remove or send). `planted_offset`: a built-in task's planting moves the service's id counter by a per-task offset
    (tasks/sources.py), so planted ids differ between tasks. `google_api`: the (name, version) Google's client knows it
    by, whose discovery document discovery.py serves; `batch_limit`: the calls one batch may hold at the API's own
    /batch/<name>/<version> endpoint (batch.py; None: it has none)."""

    toolkit: type[Service]
    dialect: Dialect = GOOGLE
    env0: Env0Face | None = None
    gates: Gate | None = None
    planted_offset: bool = False
    google_api: tuple[str, str] | None = None
    batch_limit: int | None = None
    shell_url: str | None = None  # the URL variable the shell oracle's curl reads when gws does not reach it
    # shared surfaces, round 3
    guard: Guard | None = None  # the OAuth gate this service provides to every other (auth's)

    @property
    def name(self) -> str:
        return self.toolkit.name


# env0 face, round 3
@dataclass(frozen=True)
class Env0Routes:
    """Routes an env0 mock answers that the real API has not, kept so a package's own scripts still run: `pattern`
    the paths, `calls(method, path, request JSON)` the tool calls (usually one) that stand for a request, None when
    the path takes no such method."""

    pattern: re.Pattern[str]
    calls: Callable[[str, str, dict[str, Any]], list[tuple[str, dict[str, Any]]] | None]
