"""deploy/ray/: the KubeRay RayCluster that plays rollout rounds and its image load and validate against the
kubernetes models (no cluster is contacted), and agree with the project's pins and the run spec's scale section."""

from __future__ import annotations

import re
import tomllib

from dagster_k8s.models import k8s_model_from_dict, k8s_snake_case_dict
from kubernetes.client import V1PodTemplateSpec

from env0_posttrain.defs.pipes import DEPLOY_DIR, load_yaml
from env0_posttrain.spec.scale import ScaleSpec
from env0_posttrain_tests.support.paths import REPO as ROOT

CLUSTER = load_yaml(DEPLOY_DIR / "ray" / "raycluster.yaml")


def pinned_ray() -> str:
    (pin,) = [line.split("==")[1] for line in (ROOT / "constraints.txt").read_text().splitlines()
              if line.startswith("ray==")]
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["ray"]
    assert extra == [f"ray=={pin}"]
    return pin


def templates() -> tuple[V1PodTemplateSpec, V1PodTemplateSpec]:
    spec = CLUSTER["spec"]
    (workers,) = spec["workerGroupSpecs"]
    return tuple(k8s_model_from_dict(V1PodTemplateSpec, k8s_snake_case_dict(V1PodTemplateSpec, t))  # strict: unknown keys raise
                 for t in (spec["headGroupSpec"]["template"], workers["template"]))


def test_the_raycluster_is_kuberays_and_runs_the_pinned_ray_in_the_projects_image():
    assert (CLUSTER["apiVersion"], CLUSTER["kind"]) == ("ray.io/v1", "RayCluster")
    assert CLUSTER["spec"]["rayVersion"] == pinned_ray()
    head, worker = templates()
    images = {c.image for t in (head, worker) for c in t.spec.containers}
    assert len(images) == 1 and images.pop().endswith(f":{pinned_ray()}"), "one image: Ray Client needs the same Ray"


def test_the_step_reaches_the_head_at_an_address_scale_accepts():
    head, _ = templates()
    ports = {p.name: p.container_port for p in head.spec.containers[0].ports}
    address = f"ray://{CLUSTER['metadata']['name']}-head-svc:{ports['client']}"
    assert ScaleSpec(backend={"kind": "ray", "address": address}).backend.address == address
    assert address in (DEPLOY_DIR / "ray" / "raycluster.yaml").read_text()
    assert CLUSTER["spec"]["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0", "no episode on the head"


def test_workers_give_ray_their_cores_and_the_sandbox_what_it_needs():
    (group,) = CLUSTER["spec"]["workerGroupSpecs"]
    _, worker = templates()
    (c,) = worker.spec.containers
    assert group["rayStartParams"]["num-cpus"] == c.resources.requests["cpu"] == "16"
    assert group["replicas"] == group["minReplicas"] == group["maxReplicas"] == 10
    # bubblewrap: namespaces without privileges (a pod user namespace), a fresh /proc, no runtime seccomp profile
    # refusing unshare (the sandbox filters what it runs itself), no capabilities
    assert worker.spec.host_users is False and c.security_context.proc_mount == "Unmasked"
    assert c.security_context.seccomp_profile.type == "Unconfined" and c.security_context.capabilities.drop == ["ALL"]
    assert c.security_context.allow_privilege_escalation is False
    shm = {m.name for m in c.volume_mounts if m.mount_path == "/dev/shm"}
    assert [v.empty_dir.medium for v in worker.spec.volumes if v.name in shm] == ["Memory"]
    data = [m for m in c.volume_mounts if m.mount_path == "/data"]
    assert data and all(m.read_only for m in data), "the step process is the store's only writer"


def test_keys_reach_the_actors_only_from_the_secret():
    for t in templates():
        for c in t.spec.containers:
            literal = [e.name for e in c.env or [] if e.value is not None and re.search("KEY|TOKEN|SECRET|PASS", e.name)]
            assert literal == [], literal
    _, worker = templates()
    assert [e.secret_ref.name for e in worker.spec.containers[0].env_from] == ["env0-secrets"]


def test_the_image_has_the_sandbox_the_project_and_its_ray_extra():
    text = (DEPLOY_DIR / "ray" / "Dockerfile").read_text()
    python = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert re.search(r"^FROM python:3\.11-", text, re.M) and "3.11" in python
    apt = re.search(r"apt-get install [^\n]*", text).group(0)
    assert {"bubblewrap", "libseccomp2", "util-linux"} <= set(apt.split())
    assert "pip install --no-cache-dir -c constraints.txt '.[ray]'" in text
