"""The run-spec section `scale`: where a rollout round's episodes run, as one settings model per backend.

`scale.backend` is a union discriminated by `kind` of each rollout backend's own settings (the Ray address is the
Ray backend's, not the section's). The backends live above the spec (agent/backends/, one module each, with its
settings beside its player), so the union is built from the entry points that name them (spec/plugins.py) when a
spec is validated or its schema is asked for; an unknown kind is refused at `scale.backend`, naming the kinds there
are. A bare kind (`backend: ray`) and the old shared `scale.ray_address` still read: the address moves into the Ray
settings, with a FutureWarning naming the new place.
"""

from __future__ import annotations

import warnings
from typing import Annotated, Any, Union

from pydantic import Discriminator, Field, GetCoreSchemaHandler, GetJsonSchemaHandler, Tag, TypeAdapter, model_validator
from pydantic_core import core_schema

from env0_posttrain.spec import plugins
from env0_posttrain.spec.section import Section

DEFAULT_BACKEND = "processes"


def backend_settings() -> dict[str, type[Section]]:
    """kind -> the settings section of each registered rollout backend (its player's `settings`)."""
    out = {}
    for kind, backend in plugins.load(plugins.ROLLOUT_BACKENDS).items():
        settings = getattr(backend, "settings", None)
        if not (isinstance(settings, type) and issubclass(settings, Section)):
            raise ValueError(f"rollout backend {kind!r}: its `settings` must be a spec Section (spec/section.py)")
        if settings.model_fields.get("kind") is None or settings.model_fields["kind"].default != kind:
            raise ValueError(f"rollout backend {kind!r}: its settings' `kind` must default to {kind!r}")
        out[kind] = settings
    return out


def _kind(value: Any) -> str | None:
    """A bare string is a kind with its defaults; a mapping without `kind` is the default backend's settings."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return value.get("kind", DEFAULT_BACKEND)
    return getattr(value, "kind", None)


_adapters: dict[tuple[tuple[str, type[Section]], ...], TypeAdapter] = {}


def _union() -> TypeAdapter:
    """The discriminated union of the registered settings (one adapter per registry state)."""
    key = tuple(sorted(backend_settings().items()))
    if key not in _adapters:
        members = tuple(Annotated[settings, Tag(kind)] for kind, settings in key)
        _adapters[key] = TypeAdapter(Annotated[Union[members], Discriminator(_kind)])  # noqa: UP007 - built at run time
    return _adapters[key]


def _dump(value: Section, info: core_schema.SerializationInfo) -> dict[str, Any]:
    """The settings as their own model dumps them, with the caller's mode and exclusions."""
    return value.model_dump(mode=info.mode, exclude_defaults=info.exclude_defaults, exclude_unset=info.exclude_unset,
                            exclude_none=info.exclude_none)


class _ByKind:
    """Pydantic hooks of `scale.backend`: validated, and shown in a JSON schema, through `_union()` at that time."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            lambda value: _union().validate_python({"kind": value} if isinstance(value, str) else value),
            serialization=core_schema.plain_serializer_function_ser_schema(_dump, info_arg=True))

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> Any:
        return handler(_union().core_schema)


BackendSettings = Annotated[Section, _ByKind]


def default_backend() -> Section:
    return _union().validate_python({"kind": DEFAULT_BACKEND})


class ScaleSpec(Section):
    """Every rollout round of the run (teacher, eval arms, suites) plays its episodes on this backend; the step process
    stays the store's only writer either way (agent/backends/, docs/RAY.md)."""

    backend: BackendSettings = Field(default_factory=default_backend, description="'processes': this host's worker "
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
