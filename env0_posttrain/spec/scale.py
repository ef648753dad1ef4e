"""The run-spec section `scale`: where a rollout round's episodes run (one host's processes, or a Ray cluster)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from env0_posttrain.spec.section import Section

Backend = Literal["processes", "ray"]
RAY_CLIENT_ADDRESS = re.compile(r"^ray://[A-Za-z0-9._-]+:[0-9]{1,5}$")


class ScaleSpec(Section):
    """Every rollout round of the run (teacher, eval arms, suites) plays its episodes on this backend; the step process
    stays the store's only writer either way (agent/ray_backend.py, docs/RAY.md)."""

    backend: Backend = Field(default="processes", description="'processes': this host's worker processes (each arm's "
                             "`processes`); 'ray': as many Ray actors, each playing its share of the concurrency")
    ray_address: str | None = Field(default=None, description="backend ray only: None = a local Ray started for the "
                                    "round on the cores this process may use (and stopped after it); 'auto' = the "
                                    "cluster this machine belongs to; 'ray://host:port' = a cluster's Ray Client "
                                    "address (KubeRay's head service, deploy/ray/)")

    @field_validator("ray_address")
    @classmethod
    def _address(cls, v: str | None) -> str | None:
        if v is None or v == "auto" or RAY_CLIENT_ADDRESS.fullmatch(v):
            return v
        raise ValueError(f"ray_address {v!r}: use null (a local Ray), 'auto' or 'ray://host:port'")
