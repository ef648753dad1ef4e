"""The one agent harness for teacher, base and adapter: every model call through litellm.

Offline models are litellm custom providers: `env0-oracle/<name>` (oracle teacher),
`env0-faulty/<inner model>` (fault injection) and `env0-local/<alias>` (a local transformers
student, see `register_local_model`). Importing litellm takes seconds, so this package loads its
modules on first use: `from env0_posttrain.agent.records import Episode` stays cheap for the store
and the CLI, and the providers are installed the first time the harness itself is touched.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "DEFAULT_SYSTEM_PROMPT": "endpoint", "AgentSettings": "endpoint", "ModelEndpoint": "endpoint",
    "oracle_endpoint": "endpoint", "TaskEnv": "environment", "WorkspaceEnv": "environment",
    "FAULT_KINDS": "providers.faulty", "injected_faults": "providers.faulty", "install_faulty": "providers.faulty",
    "FatalModelError": "llm", "classify_exception": "llm", "run_episode": "loop", "template_messages": "messages",
    "install_oracle": "providers.oracle", "plan_episode": "providers.oracle", "Episode": "records", "Exchange": "records",
    "TokenUsage": "records", "RolloutSummary": "rollouts", "run_rollouts": "rollouts",
    "run_rollouts_sync": "rollouts", "serve_tasks": "task_registry",
}
_LIGHT = {"records", "endpoint"}  # no litellm behind these
_installed = False


def _install_providers() -> None:
    global _installed
    if not _installed:
        importlib.import_module(f"{__name__}.providers.oracle").install_oracle()
        importlib.import_module(f"{__name__}.providers.faulty").install_faulty()
        _installed = True


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module not in _LIGHT:
        _install_providers()
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def register_local_model(alias: str, base_path, adapter_path=None, device: str = "cpu", **kwargs):
    """Serve a local HF model (optionally with a PEFT adapter) as `env0-local/<alias>`."""
    _install_providers()
    from .providers.local_model import register_local_model as _register

    return _register(alias, base_path, adapter_path=adapter_path, device=device, **kwargs)


__all__ = sorted([*_EXPORTS, "register_local_model"])
