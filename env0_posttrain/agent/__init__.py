"""The one agent harness for teacher, base and adapter: every model call through litellm.

Offline models are litellm custom providers installed on import:
`env0-oracle/<name>` (oracle teacher), `env0-faulty/<inner model>` (fault injection), and
`env0-local/<alias>` (a local transformers student, see `register_local_model`).
"""

from pathlib import Path

from .endpoint import DEFAULT_SYSTEM_PROMPT, AgentSettings, ModelEndpoint, oracle_endpoint
from .environment import TaskEnv, WorkspaceEnv
from .faulty import FAULT_KINDS, injected_faults, install_faulty
from .llm import FatalModelError, classify_exception
from .loop import run_episode
from .messages import template_messages
from .oracle import install_oracle, plan_episode
from .records import Episode, Exchange, TokenUsage
from .rollouts import RolloutSummary, run_rollouts, run_rollouts_sync
from .task_registry import register_tasks

install_oracle()
install_faulty()


def register_local_model(alias: str, base_path: str | Path, adapter_path: str | Path | None = None, device: str = "cpu",
                         *, max_batch_size: int = 16, gather_ms: float = 5.0) -> str:
    """Serve a local HF model (optionally with a PEFT adapter) as `env0-local/<alias>`; returns that model id.

    transformers and torch are imported only here, so the harness stays light for remote models.
    """
    from .local_model import register_local_model as _register

    return _register(alias, base_path, adapter_path, device, max_batch_size=max_batch_size, gather_ms=gather_ms)


__all__ = [
    "DEFAULT_SYSTEM_PROMPT", "AgentSettings", "Episode", "Exchange", "FAULT_KINDS", "FatalModelError", "ModelEndpoint",
    "RolloutSummary", "TaskEnv", "TokenUsage", "WorkspaceEnv", "classify_exception", "injected_faults",
    "oracle_endpoint", "plan_episode", "register_local_model", "register_tasks", "run_episode", "run_rollouts",
    "run_rollouts_sync", "template_messages",
]
