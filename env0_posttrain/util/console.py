"""What a person running the CLI sees: the project's INFO lines, written around the progress bars.

The harness logs one line per finished episode (task, arm, reward, steps, seconds) and one summary
per rollout on the `env0_posttrain` logger; without a handler Python drops INFO. `show_logs` adds
one handler that writes through `tqdm.write`, so a line never tears a progress bar apart. Inside a
Dagster run the instance captures these loggers (dagster.yaml `python_logs`) into the step's event
log (the UI shows them) and its console logger prints them; this handler then skips them.
Dagster's own events are the CLI's business (`dagster_log_level`): DEBUG only with `--verbose`.

A line can carry what a task package or a model wrote (a script's stderr in an error, a tool result): control
characters are shown escaped (`\x1b`, `\x07`, `\x0d`), never sent to the terminal, so no text can move the
cursor, rewrite a line, ring, retitle the window or hide what follows.
"""

from __future__ import annotations

import logging
import re
import sys

from tqdm.auto import tqdm

LOGGER = "env0_posttrain"
_HANDLER_NAME = "env0-console"


# C0 controls but tab and line feed, DEL, C1 controls (the 8-bit CSI among them), and the bidirectional overrides
# and isolates that make a terminal show text in another order than it is.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with every control character but tab and line feed written as its escape (`\x1b`, `\u202e`)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        text)


class EscapeControls(logging.Filter):
    """For a handler whose formatter adds its own escapes (colours): the record's message and traceback escaped
    before it is formatted."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = printable(record.getMessage()), None
        if record.exc_info:
            record.exc_text = printable(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


class TqdmHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(printable(self.format(record)), file=sys.stderr)
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
