"""What a person running the CLI sees: the project's INFO lines, written around the progress bars.

The harness logs one line per finished episode (task, arm, reward, steps, seconds) and one summary
per rollout on the `env0_posttrain` logger; without a handler Python drops INFO. `show_logs` adds
one handler that writes through `tqdm.write`, so a line never tears a progress bar apart.
Dagster's own events are the CLI's business (`dagster_log_level`): DEBUG only with `--verbose`.
"""

from __future__ import annotations

import logging
import sys

from tqdm.auto import tqdm

LOGGER = "env0_posttrain"
_HANDLER_NAME = "env0-console"


class TqdmHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)


def show_logs(verbose: bool = False) -> logging.Logger:
    """Send `env0_posttrain` records at INFO (DEBUG when verbose) to stderr, once per process."""
    logger = logging.getLogger(LOGGER)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    if not any(h.get_name() == _HANDLER_NAME for h in logger.handlers):
        handler = TqdmHandler()
        handler.set_name(_HANDLER_NAME)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
        logger.addHandler(handler)
    return logger


def dagster_log_level(verbose: bool) -> str:
    """Dagster logs every event (step start, output, materialization) at DEBUG; INFO keeps the stages' own lines."""
    return "DEBUG" if verbose else "INFO"
