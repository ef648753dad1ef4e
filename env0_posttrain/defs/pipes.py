"""Training beyond the orchestrator's process: Dagster Pipes, and the Kubernetes configuration of deploy/.

Locally the `lora_adapter` asset launches `pipes_worker` with `PipesSubprocessClient`; in production
the same call with a `dagster_k8s.PipesK8sClient` starts the worker in a GPU pod built from
`deploy/k8s/training-pod.yaml`. Either way the worker's metadata, data version and check results
come back as one MaterializeResult, so the asset and its blocking check look the same in the UI.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import yaml

from env0_posttrain.util.cpu_time import cpu_seconds, step_usage
from env0_posttrain.util.parent_watch import PARENT_PID_ENV
from env0_posttrain.stages.pipes_worker import DEFAULT_STAGE, MODULE

REPO_ROOT = Path(__file__).resolve().parents[2]
DEPLOY_DIR = Path(os.environ.get("ENV0_DEPLOY_DIR") or REPO_ROOT / "deploy")
TRAINING_POD_SPEC = DEPLOY_DIR / "k8s" / "training-pod.yaml"
K8S_EXECUTOR_CONFIG = DEPLOY_DIR / "k8s" / "executor.yaml"
IMAGE_ENV = "ENV0_TRAINING_IMAGE"


def load_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping, got {type(data).__name__}")
    return data


def training_pod_spec(path: Path = TRAINING_POD_SPEC) -> dict[str, Any]:
    """The base pod spec of the training pod (camelCase, as kubectl writes it): GPU limits, data volume, secrets."""
    return load_yaml(path)["spec"]


def training_pod_meta(path: Path = TRAINING_POD_SPEC) -> dict[str, Any]:
    return load_yaml(path).get("metadata", {})


def run_training_via_pipes(
    context: dg.AssetExecutionContext,
    pipes_client: dg.PipesClient,
    run_id: str,
    data_root: str | Path,
    *,
    stage: str = DEFAULT_STAGE,
    image: str | None = None,
    namespace: str | None = None,
    env: Mapping[str, str] | None = None,
) -> dg.MaterializeResult:
    """Run `stage` (default: stages.train_adapter) for `run_id` in the worker; return what it reported.

    Secrets are never passed here: the subprocess inherits this process's environment, and the pod
    gets them from the Kubernetes Secret named in its pod spec (`envFrom`).
    """
    extras = {"run_id": run_id, "data_dir": str(data_root), "stage": stage}
    local_env = {PARENT_PID_ENV: str(os.getpid()), **(env or {})}  # the local worker dies with this process
    try:
        from dagster_k8s import PipesK8sClient
    except ImportError:  # dagster-k8s is optional for local use
        PipesK8sClient = None  # noqa: N806
    if PipesK8sClient is not None and isinstance(pipes_client, PipesK8sClient):
        invocation = pipes_client.run(
            context=context,
            extras=extras,
            image=image or os.environ.get(IMAGE_ENV),
            command=["python", "-m", MODULE],
            namespace=namespace,
            env=dict(env or {}),
            base_pod_meta=training_pod_meta(),
            base_pod_spec=training_pod_spec(),
        )
    else:
        cpu0 = cpu_seconds()
        invocation = pipes_client.run(
            context=context, extras=extras, command=[sys.executable, "-m", MODULE], env=local_env
        )
        result = invocation.get_materialize_result()  # the local worker is a waited-for child: its CPU is counted
        return result._replace(metadata={**(result.metadata or {}), **step_usage(cpu0)})
    return invocation.get_materialize_result()


def k8s_training_client(**kwargs: Any) -> dg.PipesClient:
    """The production Pipes client; in-cluster credentials unless a kubeconfig is given. Starts nothing."""
    from dagster_k8s import PipesK8sClient

    kwargs.setdefault("load_incluster_config", "kubeconfig_file" not in kwargs)
    return PipesK8sClient(**kwargs)


def k8s_executor_config(path: Path = K8S_EXECUTOR_CONFIG) -> dict[str, Any]:
    """The `execution.config` block of deploy/k8s/executor.yaml, checked against k8s_job_executor's schema."""
    from dagster._config import process_config
    from dagster_k8s import k8s_job_executor

    config = load_yaml(path)["execution"]["config"]
    result = process_config(k8s_job_executor.config_schema.config_type, config)
    if not result.success:
        raise ValueError(f"{path}: " + "; ".join(e.message for e in result.errors))
    return config


def k8s_executor(path: Path = K8S_EXECUTOR_CONFIG) -> dg.ExecutorDefinition:
    """`k8s_job_executor` configured from deploy/: one pod per step, GPU only where the config asks."""
    from dagster_k8s import k8s_job_executor

    return k8s_job_executor.configured(k8s_executor_config(path), name="env0_k8s")
