"""What a failed run says on the command line: each failed step's own error and its causes, from the event log.

The step's failure event holds the exact message (a spec's field and line, a missing file), which a list of failed
step names and a pointer to the UI would leave unsaid. Dagster wraps user errors in its own
DagsterExecutionStepExecutionError ("Error occurred while executing op ..."): that wrapper says nothing the
step key does not, so it is skipped and the user's exception and its causes are printed instead. A step's error
can quote a package's script or a model: its control characters come back escaped (util/console.printable).
"""

from __future__ import annotations

from dataclasses import dataclass

import dagster as dg

from env0_posttrain.util.console import printable

_WRAPPERS = {"DagsterExecutionStepExecutionError", "DagsterUserCodeExecutionError"}
MAX_LINES = 25  # a Pipes worker's error can carry its whole stderr: the end says what broke


@dataclass(frozen=True)
class StepFailure:
    step_key: str
    lines: list[str]


def _chain(error) -> list[str]:
    """'Type: message' for the error and each cause / context under it, Dagster's wrappers left out."""
    out, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if error.cls_name not in _WRAPPERS:
            msg = error.message.strip()
            head, sep, rest = msg.partition(": ")
            if sep and head.rsplit(".", 1)[-1] == error.cls_name:  # "env0_posttrain.spec.runspec.SpecError: ..."
                msg = f"{error.cls_name}: {rest}"
            if msg not in out and "caused by " + msg not in out:  # Pipes and retries repeat the same error
                out.append(msg if not out else "caused by " + msg)
        error = error.cause or error.context
    return out


def step_failures(result: dg.ExecuteInProcessResult) -> list[StepFailure]:
    failures = []
    for event in result.all_events:
        if event.event_type_value != "STEP_FAILURE":
            continue
        data = event.step_failure_data
        lines: list[str] = []
        if data and data.user_failure_data and data.user_failure_data.description:
            lines.append(data.user_failure_data.description)  # a stage's own refusal: the message to act on
        elif data and data.error:
            lines = "\n".join(_chain(data.error)).splitlines()
        if len(lines) > MAX_LINES:
            lines = ["...", *lines[-MAX_LINES:]]
        failures.append(StepFailure(event.step_key or "?", [printable(x) for x in lines] or ["(no error recorded)"]))
    return failures


def run_failure_message(result: dg.ExecuteInProcessResult) -> str | None:
    """The run's own failure message when no step failed (a run stopped before any step could start)."""
    for event in result.all_events:
        if event.event_type_value == "RUN_FAILURE" and event.message:
            return printable(event.message)
    return None
