"""The fields of an env0 package's task.toml (or task.md front matter) that the harness reads, as a contract.

Everything else in the file is env0's own and passes through (extra keys allowed). A value of the
wrong type becomes an error naming the line and the field (the loader adds the file: Env0Error),
not an AttributeError from deep inside the loader, so a corpus import drops that one package and
keeps the rest.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class TaskTable(_Open):
    name: str | None = None


class TimeoutTable(_Open):
    timeout_sec: float | None = Field(default=None, gt=0)


class EnvironmentTable(_Open):
    services: list[str] | None = None
    build_timeout_sec: float | None = Field(default=None, gt=0)  # env0 seeds the needles while building the image


class PackageMeta(_Open):
    task: TaskTable = TaskTable()
    agent: TimeoutTable = TimeoutTable()
    verifier: TimeoutTable = TimeoutTable()
    environment: EnvironmentTable = EnvironmentTable()


class MetaError(ValueError):
    """Every bad field of the metadata, each with its line where found."""


def parse_meta(data: object, line_of: Callable[[tuple], int | None]) -> PackageMeta:
    """Validate the metadata; `line_of(loc)` finds a field's line in the file for the message."""
    if not isinstance(data, dict):
        raise MetaError(f"the metadata must be a table of fields, got {type(data).__name__}")
    data = {k: v for k, v in data.items() if not (v is None and k in PackageMeta.model_fields)}  # `agent:` left empty
    try:
        return PackageMeta.model_validate(data)
    except ValidationError as err:
        problems = []
        for e in err.errors():
            field = ".".join(str(p) for p in e["loc"]) or "(root)"
            line = line_of(tuple(e["loc"]))
            problems.append(f"{f'line {line}, ' if line else ''}field {field}: {e['msg']}")
        raise MetaError("; ".join(problems)) from None
