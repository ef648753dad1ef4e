"""A Ray node removed mid-round (`ray.cluster_utils.Cluster`, two worker nodes): its actor is restarted on the node
left, the jobs it held are sent again, and the round completes with every (task, trial) delivered once."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -c constraints.txt -e '.[ray]')")

from ray import ray_constants  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync  # noqa: E402
from env0_posttrain.agent.backends.ray import ACTOR_PREFIX, NAMESPACE  # noqa: E402
from env0_posttrain.spec.scale import ScaleSpec  # noqa: E402
from env0_posttrain_tests.support.agent import NotesEnv, notes_task  # noqa: E402

TASKS = [notes_task(i) for i in range(8)]


@pytest.fixture(scope="module")
def cluster():
    """A head that runs no episode and two worker nodes of 2 CPUs: either can take both actors (1 CPU each)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False, "object_store_memory": 80 * 2**20,
        "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 3}})
    workers = [c.add_node(num_cpus=2, object_store_memory=80 * 2**20) for _ in range(2)]
    ray.init(address=c.address, namespace=NAMESPACE, log_to_driver=False)
    c.wait_for_nodes()
    yield c, workers
    ray.shutdown()
    c.shutdown()


def raylet_pid(node) -> int:
    return node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid


def test_a_node_removed_mid_round_still_completes_the_round_once_per_episode(cluster):
    import psutil

    c, workers = cluster
    delivered: list = []
    removed: list = []

    def on_episode(ep):
        delivered.append(ep.key)
        if removed:
            return
        actor = ray.get_actor(sorted(a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                                     if a["name"].startswith(ACTOR_PREFIX))[0], namespace=NAMESPACE)
        _, _, pid = ray.get(actor.stats.remote(), timeout=60)
        (node,) = [n for n in workers if raylet_pid(n) == psutil.Process(pid).ppid()]
        c.remove_node(node, allow_graceful=False)  # its actor dies with it, holding a job the driver just sent
        removed.append(node)

    settings = AgentSettings(concurrency=4, processes=2, scale=ScaleSpec(backend="ray"))
    s = run_rollouts_sync(TASKS, "teacher", 2, oracle_endpoint(latency_s=0.3), settings, "node", set(), on_episode,
                          env=NotesEnv(), progress=False)
    assert removed and s.resent >= 1, s
    assert sorted(delivered) == sorted({("node", "teacher", t.id, k) for t in TASKS for k in range(2)})
    assert s.completed == s.played == 16 and s.passed == 16
