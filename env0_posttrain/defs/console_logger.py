"""Dagster's console for `run materialize` and `demo`: one short line per log call, no stack traces.

Dagster's default console logger prints each event with job, run id, pid and step, and a failed
step's stack trace twice (step and run failure). The CLI shows this compact logger instead, at INFO
(the stages' own lines, warnings, failures); `--verbose` brings back the default one at DEBUG.
A failed step's reason is printed once by the CLI at the end. Both print control characters escaped
(util/console.py): a step's message can carry what a package's script or a model wrote.
"""

from __future__ import annotations

import logging

import dagster as dg

from env0_posttrain.util.console import EscapeControls, TqdmHandler


STEP_ERROR_TAG = "step error: "  # the plain line a failed step logs first for the UI (defs/assets.plain_errors)


class WithoutStepErrors(logging.Filter):
    """The CLI prints each failed step's reason once, at the end: the plain line logged for the UI would repeat it."""

    def filter(self, record: logging.LogRecord) -> bool:
        meta = getattr(record, "dagster_meta", None) or {}
        return not str(meta.get("orig_message") or record.getMessage()).startswith(STEP_ERROR_TAG)


class CompactFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        meta = getattr(record, "dagster_meta", None) or {}
        message = meta.get("orig_message") or record.getMessage()
        step = meta.get("step_key")
        return f"{self.formatTime(record, '%H:%M:%S')} {record.levelname} {step + ': ' if step else ''}{message}"


@dg.logger(config_schema={"log_level": dg.Field(str, is_required=False, default_value="INFO")},
           description="one line per log call, no stack traces (the CLI's default)")
def compact_console_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    level = init_context.logger_config["log_level"].upper()
    logger = logging.Logger("env0_posttrain.dagster_console", level=logging.getLevelName(level))
    handler = TqdmHandler()
    handler.setFormatter(CompactFormatter())
    handler.addFilter(WithoutStepErrors())
    logger.addHandler(handler)
    return logger


@dg.logger(config_schema=dg.colored_console_logger.config_schema,
           description="Dagster's colored console logger, control characters escaped (`--verbose`)")
def verbose_console_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    logger = dg.colored_console_logger.logger_fn(init_context)
    for handler in logger.handlers:
        handler.addFilter(EscapeControls())
    return logger
