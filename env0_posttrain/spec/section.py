"""The base of every run-spec section: unknown fields are refused (a typo fails loudly, naming the field), a parsed
spec cannot change under a running stage, and numbers must be finite."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
