"""What a person running the CLI sees: the project's INFO lines, written around the progress bars.

The harness logs one line per finished episode (task, arm, reward, steps, seconds) and one summary
per rollout on the `env0_posttrain` logger; without a handler Python drops INFO. `show_logs` adds
one handler that writes through `tqdm.write`, so a line never tears a progress bar apart. Inside a
Dagster run the instance captures these loggers (dagster.yaml `python_logs`) into the step's event
log (the UI shows them) and its console logger prints them; this handler then skips them.
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


def _ours_and_not_captured(record: logging.LogRecord) -> bool:
    # A record a Dagster run captured carries `dagster_meta` by the time it propagates up here: that run's
    # console logger prints it already.
    return record.name.split(".")[0] == LOGGER and not hasattr(record, "dagster_meta")


def show_logs(verbose: bool = False) -> logging.Logger:
    """Send `env0_posttrain` records at INFO (DEBUG when verbose) to stderr, once per process.

    The handler sits on the root logger, so it sees a record after Dagster's capturing handler (on
    `env0_posttrain` during a run) has marked it, and prints only the records no run captured."""
    logger = logging.getLogger(LOGGER)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    root = logging.getLogger()
    if not any(h.get_name() == _HANDLER_NAME for h in root.handlers):
        handler = TqdmHandler()
        handler.set_name(_HANDLER_NAME)
        handler.addFilter(_ours_and_not_captured)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
        root.addHandler(handler)
    return logger


def dagster_log_level(verbose: bool) -> str:
    """Dagster logs every event (step start, output, materialization) at DEBUG; INFO keeps the stages' own lines."""
    return "DEBUG" if verbose else "INFO"
