"""deploy/: the Kubernetes instance (K8sRunLauncher), the k8s_job_executor config and the GPU training pod
load and validate against dagster / dagster-k8s / kubernetes models. No cluster is contacted."""

import shutil
from pathlib import Path

import dagster as dg
import pytest
from dagster._config import process_config
from dagster._core.instance.config import dagster_instance_config
from dagster_k8s import K8sRunLauncher, PipesK8sClient
from dagster_k8s.pipes import build_pod_body

from env0_posttrain.defs.assets import RUN_ASSETS
from env0_posttrain.defs.pipes import (
    DEPLOY_DIR,
    k8s_executor,
    k8s_executor_config,
    k8s_training_client,
    load_yaml,
    training_pod_meta,
    training_pod_spec,
)
from env0_posttrain.defs.resources import Env0Resource

ASSET_NAMES = {a.key.to_user_string() for a in RUN_ASSETS}
PG_ENV = {"DAGSTER_PG_HOST": "pg", "DAGSTER_PG_USERNAME": "dagster", "DAGSTER_PG_PASSWORD": "pw", "DAGSTER_PG_DB": "dagster"}
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: not-a-real-token}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: env0}}]
current-context: x
"""


@pytest.fixture
def kubeconfig(tmp_path: Path) -> str:
    p = tmp_path / "kubeconfig"
    p.write_text(KUBECONFIG)
    return str(p)


def test_instance_yaml_validates_and_builds_a_k8s_run_launcher(tmp_path: Path, monkeypatch, kubeconfig: str):
    for k, v in PG_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("DAGSTER_K8S_NAMESPACE", "env0")
    shutil.copy(DEPLOY_DIR / "dagster.yaml", tmp_path / "dagster.yaml")
    config, _ = dagster_instance_config(str(tmp_path))  # raises on any schema error
    assert config["telemetry"]["enabled"] is False
    launcher_cfg = config["run_launcher"]
    assert (launcher_cfg["module"], launcher_cfg["class"]) == ("dagster_k8s", "K8sRunLauncher")

    processed = process_config(K8sRunLauncher.config_type(), launcher_cfg["config"])
    assert processed.success, processed.errors
    value = dict(processed.value)
    assert value["job_namespace"] == "env0" and value["env_secrets"] == ["env0-secrets"]
    # build it for real, against a kubeconfig instead of the in-cluster service account
    value.update(load_incluster_config=False, kubeconfig_file=kubeconfig)
    launcher = K8sRunLauncher(**value)
    assert launcher.job_namespace == "env0" and launcher.env_secrets == ["env0-secrets"]
    assert launcher.volume_mounts[0]["mountPath"] == "/data"


def test_executor_config_validates_and_the_graph_loads_with_it():
    cfg = k8s_executor_config()
    assert set(cfg["per_step_k8s_config"]) <= ASSET_NAMES  # step keys of asset jobs are asset names
    executor = k8s_executor()
    assert executor.name == "env0_k8s"
    defs = dg.Definitions(assets=RUN_ASSETS, executor=executor,
                          resources={"env0": Env0Resource(), "pipes_client": k8s_training_client()})
    dg.Definitions.validate_loadable(defs)
    assert defs.resolve_implicit_global_asset_job_def().executor_def.name == "env0_k8s"


def test_a_bad_executor_config_names_the_file_and_field(tmp_path: Path):
    bad = tmp_path / "executor.yaml"
    bad.write_text("execution:\n  config:\n    max_concurrent: many\n    no_such_field: 1\n")
    with pytest.raises(ValueError, match=r"executor\.yaml.*(max_concurrent|no_such_field)"):
        k8s_executor_config(bad)


def test_training_pod_asks_for_a_gpu_and_takes_secrets_from_a_secret(kubeconfig: str):
    pod = build_pod_body(
        pod_name="train-demo",
        image="registry.example/env0-posttrain:1",
        command=["python", "-m", "env0_posttrain.stages.pipes_worker"],
        env_vars={"DAGSTER_PIPES_CONTEXT": "e30="},
        base_pod_meta=training_pod_meta(),
        base_pod_spec=training_pod_spec(),
    )
    (container,) = pod.spec.containers
    assert container.resources.limits["nvidia.com/gpu"] == "1"
    assert container.resources.requests["nvidia.com/gpu"] == "1"
    assert container.image == "registry.example/env0-posttrain:1"
    assert container.command[-1] == "env0_posttrain.stages.pipes_worker"
    assert [e.secret_ref.name for e in container.env_from] == ["env0-secrets"]
    assert {e.name for e in container.env} == {"ENV0_DATA_DIR", "DAGSTER_PIPES_CONTEXT"}
    assert pod.spec.restart_policy == "Never" and pod.spec.tolerations[0].key == "nvidia.com/gpu"
    assert pod.metadata.labels["env0/stage"] == "lora_adapter"

    client = k8s_training_client(kubeconfig_file=kubeconfig)
    assert isinstance(client, PipesK8sClient) and client.kubeconfig_file == kubeconfig
    assert not client.load_incluster_config


def test_no_literal_secret_values_in_deploy():
    """Keys reach pods through Secrets and env vars only; no manifest carries a credential."""
    for path in DEPLOY_DIR.rglob("*.yaml"):
        text = path.read_text().lower()
        load_yaml(path)
        for word in ("api_key:", "token:", "password: "):
            assert word not in text, f"{path}: {word}"
