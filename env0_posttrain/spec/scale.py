"""The run-spec section `scale`: where a rollout round's episodes run, as one settings model per backend.

`scale.backend` is a union discriminated by `kind`, so each backend declares its own knobs (the Ray address is the Ray
backend's, not the section's) and the agent looks its player up by that kind (agent/backends/). A bare kind
(`backend: ray`) and the old shared `scale.ray_address` still read: the address moves into the Ray settings, with a
FutureWarning naming the new place.
"""

from __future__ import annotations

import re
import warnings
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from env0_posttrain.spec.section import Section

RAY_CLIENT_ADDRESS = re.compile(r"^ray://[A-Za-z0-9._-]+:[0-9]{1,5}$")


class ProcessesBackend(Section):
    """This host's worker processes: each arm's `processes` of them share its concurrency (agent/workers.py)."""

    kind: Literal["processes"] = "processes"


class RayBackend(Section):
    """Ray actors, `processes` of them, each playing its share of the concurrency (agent/backends/ray.py)."""

    kind: Literal["ray"] = "ray"
    address: str | None = Field(default=None, description="None = a local Ray started for the round on the cores this "
                                "process may use (and stopped after it); 'auto' = the cluster this machine belongs to; "
                                "'ray://host:port' = a cluster's Ray Client address (KubeRay's head service, deploy/ray/)")

    @field_validator("address")
    @classmethod
    def _address(cls, v: str | None) -> str | None:
        if v is None or v == "auto" or RAY_CLIENT_ADDRESS.fullmatch(v):
            return v
        raise ValueError(f"ray address {v!r}: use null (a local Ray), 'auto' or 'ray://host:port'")


def _kind(value: Any) -> str | None:
    """A bare string is a kind with its defaults; a mapping without `kind` is the default backend's settings."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return value.get("kind", "processes")
    return getattr(value, "kind", None)


BackendSettings = Annotated[Annotated[ProcessesBackend, Tag("processes")] | Annotated[RayBackend, Tag("ray")],
                            Discriminator(_kind)]


class ScaleSpec(Section):
    """Every rollout round of the run (teacher, eval arms, suites) plays its episodes on this backend; the step process
    stays the store's only writer either way (agent/backends/, docs/RAY.md)."""

    backend: BackendSettings = Field(default_factory=ProcessesBackend, description="'processes': this host's worker "
                                     "processes (each arm's `processes`); 'ray': as many Ray actors, each playing its "
                                     "share of the concurrency; a kind alone or `{kind: ..., <its settings>}`")

    @model_validator(mode="before")
    @classmethod
    def _old_shape(cls, data: Any) -> Any:
        """`backend: <kind>` reads as that kind's defaults; the old shared `ray_address` moves into the Ray settings."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if isinstance(data.get("backend"), str):
            data["backend"] = {"kind": data["backend"]}
        if "ray_address" in data:
            address = data.pop("ray_address")
            if address is not None:
                backend = data.get("backend")
                if not (isinstance(backend, dict) and backend.get("kind") == "ray"):
                    raise ValueError("scale.ray_address is the Ray backend's setting: write "
                                     "scale.backend: {kind: ray, address: ...}")
                warnings.warn("scale.ray_address is deprecated: write scale.backend: {kind: ray, address: "
                              f"{address!r}}} (read as that here)", FutureWarning, stacklevel=2)
                data["backend"] = {**backend, "address": backend.get("address", address)}
        return data
