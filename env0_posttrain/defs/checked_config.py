"""Launchpad config checked before a run exists.

The Launchpad checks typed config against the job's schema as you type (types, enums, required fields), and on
Launch the webserver asks the code location for the execution plan before it creates the run; building that plan
processes the run config, which calls each config type's `post_process`. A `Shape` whose `post_process` runs the
project's own checks (the same `making/new_run.py` code `run new` uses) therefore refuses a bad override, teacher or
run id at Launch, in the project's words, and no run is created. Pydantic validators on a `dg.Config` do not run
there (they run in the step), hence this.

Dagster words the refusal itself: "Post processing at path root:ops:OP:config of original value {...} failed:", then
`dagster._config.errors.PostProcessingError: ` and the project's line (dagster/_config/errors.py,
create_failed_post_processing_error). Every other config error (enum, type, missing or unknown field) is worded by
Dagster the same way, and nothing else of the project runs at Launch before the run exists, so the project's line
cannot come first there; in a step it does (defs/assets.py `plain_errors`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dagster as dg
from dagster._config.errors import PostProcessingError
from dagster._config.field_utils import Shape
from dagster._config.pythonic_config.config import infer_schema_from_config_class


class CheckedShape(Shape):
    """A config dict checked as a whole by `check(value)` (raises ValueError with one plain line)."""

    def __new__(cls, fields, check: Callable[[dict], None], description: str):
        inst = object.__new__(cls)  # not Shape's memoized instances: this one carries its check
        inst._initialized = False
        return inst

    def __init__(self, fields, check: Callable[[dict], None], description: str):
        super().__init__(fields, description)
        self.check = check

    def post_process(self, value: Any) -> Any:
        try:
            self.check(dict(value))
        except ValueError as err:
            raise PostProcessingError(str(err)) from None
        return value


def checked_schema(config_cls: type[dg.Config], check: Callable[[dict], None]) -> dg.Field:
    """The op config schema of `config_cls` (fields, defaults, descriptions as the Launchpad shows them), checked
    by `check` when Dagster processes the run config: at Launch, before the run is created, and again in the step."""
    inferred = infer_schema_from_config_class(config_cls)
    description = f"{config_cls.__name__}, checked at launch ({config_cls.__doc__ or ''})".strip()
    return dg.Field(CheckedShape(inferred.config_type.fields, check, description))

