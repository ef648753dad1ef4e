"""A rollout stopped by a failure no retry can fix, told in the run spec's terms.

The harness knows which ModelEndpoint field is wrong (`agent/fail_fast.py`); only the run spec knows
where that value came from for an arm: the teacher section, the student, or the hosting section.
The message names the cause, the spec field and the file, and says that the stored episodes stay.
"""

from __future__ import annotations

from env0_posttrain.spec.runspec import RunSpec


class RolloutStopped(RuntimeError):
    """A rollout aborted on a deterministic model failure; retrying the step cannot help."""

    def __init__(self, message: str, kind: str = "", spec_field: str = "") -> None:
        super().__init__(message)
        self.kind, self.spec_field = kind, spec_field

    def __reduce__(self) -> tuple:
        return (type(self), (str(self), self.kind, self.spec_field))


def spec_field(spec: RunSpec, arm: str, endpoint_field: str) -> str:
    """The run spec field that sets `endpoint_field` of the model playing `arm`."""
    if arm in ("teacher", "teacher_eval"):
        return f"teacher.{endpoint_field}"
    if endpoint_field == "sampling":
        return "eval.temperature / eval.max_tokens"
    if spec.hosting.kind == "openai_compatible":
        if endpoint_field in ("api_base", "api_key_env"):
            return "hosting.api_base"
        return "hosting.adapter_name_prefix" if arm == "sft" else "hosting.base_model_name"
    return "student.model"


def explain(spec: RunSpec, arm: str, kind: str, detail: str, stored: int, planned: int) -> RolloutStopped:
    from env0_posttrain.agent.fail_fast import fix_for  # here, not at import: the code location loads this module
    # in every step process, and the agent package brings litellm (seconds) that most steps never call

    cause, field = fix_for(kind)
    where = spec_field(spec, arm, field)
    return RolloutStopped(
        f"run {spec.run_id}: the {arm} rollout stopped: {cause}. Fix `{where}` in the run spec "
        f"(data/runs/{spec.run_id}.yaml). {stored} of {planned} episodes are stored and kept; a rerun resumes "
        f"from them. Error: {detail}", kind, where)
