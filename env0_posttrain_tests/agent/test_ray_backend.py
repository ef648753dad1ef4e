"""scale.backend ray: Ray actors play whole episodes, this process stays the store's only writer; the same rows as
worker processes, every (task, trial) stored once through actor deaths, Ctrl-C and a SIGKILLed driver; Ray and its
actors started once per process and reused by its later rounds, nothing of them left after a failed round or
`shutdown_ray`. One local Ray (2 CPUs) serves the module; tests that need a Ray of their own start it in a
subprocess."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from env0_posttrain_tests.support.paths import REPO as ROOT

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -c constraints.txt -e '.[ray]')")

from env0_posttrain.agent import AgentSettings, FatalModelError, oracle_endpoint, run_rollouts, run_rollouts_sync  # noqa: E402
from env0_posttrain.agent.backends.ray import ACTOR_PREFIX, NAMESPACE, shutdown_ray  # noqa: E402
from env0_posttrain.spec.scale import ScaleSpec  # noqa: E402
from env0_posttrain_tests.support.agent import NotesEnv, notes_task, read_jsonl_episodes, resume_worker  # noqa: E402

RAY = ScaleSpec(backend="ray")
TASKS = [notes_task(i, answer=i % 3 == 0) for i in range(8)]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=100 * 2**20, namespace=NAMESPACE,
             log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def no_idle_actors():
    """Each test starts without the idle actors an earlier test's rounds left for reuse."""
    shutdown_ray()  # the module's Ray is its caller's: only this process's idle actors are killed
    yield
    shutdown_ray()


def rollout_actors() -> list[str]:
    return [a["name"] for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith(ACTOR_PREFIX)]


def no_actor_left() -> bool:
    """True once no rollout actor is alive (ray.kill is asynchronous: the GCS marks the actor dead soon after)."""
    deadline = time.time() + 60  # a hang guard, not a timing claim
    while rollout_actors() and time.time() < deadline:
        time.sleep(0.1)
    return rollout_actors() == []


def settings(**kw) -> AgentSettings:
    return AgentSettings(concurrency=4, processes=2, backoff_base_s=0.001, backoff_max_s=0.002, scale=RAY, **kw)


def comparable(ep) -> dict:
    d = ep.model_dump(exclude={"started_at", "duration_s"})
    for ex in d["exchanges"]:
        ex.pop("latency_s")
    return d


def test_a_round_stores_the_same_episodes_on_ray_as_in_worker_processes(tmp_path: Path):
    """The run spec's scale section through the teacher stage's round, into two stores: the same rows."""
    from env0_posttrain.spec.runspec import parse_spec
    from env0_posttrain.stages import rounds
    from env0_posttrain.stages.arms import rollout_settings, teacher_endpoint
    from env0_posttrain.stages.context import StageContext, load_tasks
    from env0_posttrain.stages.task_set import build_task_set
    from env0_posttrain.store import Store
    from env0_posttrain.util.paths import Paths

    stored, rewards, summaries = {}, {}, {}
    for backend in ("processes", "ray"):
        spec = parse_spec({"run_id": "same", "tasks": {"families": ["calendar", "mail"], "n_train": 4, "n_eval": 1,
                                                       "seed": 5},
                           "teacher": {"skill": 0.6, "trials": 2, "concurrency": 4, "processes": 2},
                           "scale": {"backend": backend}})
        paths = Paths(tmp_path / backend)
        store = Store(paths.db)
        store.upsert_run(spec)
        ctx = StageContext(spec.run_id, spec, store, paths, logging.getLogger("test"))
        build_task_set(ctx)
        tasks = load_tasks(ctx, ("train",))
        round_id, episodes, summary = rounds.rollout(ctx, "teacher", tasks, 2, teacher_endpoint(spec),
                                                     rollout_settings(spec, "teacher"))
        assert [r["status"] for r in store.rounds("same", "teacher")] == ["finished"]
        episodes = store.load_episodes(round_id)
        stored[backend] = {(e.task_id, e.trial): comparable(e) for e in episodes}
        rewards[backend] = sorted((e.task_id, e.trial, e.reward) for e in episodes)
        summaries[backend] = summary
    assert summaries["ray"]["backend"] == "ray" and summaries["processes"]["backend"] == "processes"
    assert summaries["ray"]["processes"] == 2 and summaries["ray"]["worker_cpu_s"] > 0
    assert len(stored["ray"]) == 8 and stored["ray"] == stored["processes"]
    assert rewards["ray"] == rewards["processes"] and len({r for *_, r in rewards["ray"]}) > 1, "a skill of 0.6 must give mixed rewards, or the comparison proves little"
    for k in ("played", "completed", "passed", "stop_conditions", "mean_reward", "model_calls"):
        assert summaries["ray"][k] == summaries["processes"][k], k
    assert len(rollout_actors()) == 2, "the round's actors wait for the step's next round"
    shutdown_ray()
    assert no_actor_left(), "no actor outlives its step"


def _actor_pids(names: list[str]) -> list[int]:
    return sorted(ray.get([ray.get_actor(n, namespace=NAMESPACE).stats.remote() for n in names], timeout=60)[i][2]
                  for i in range(len(names)))


def test_later_rounds_of_a_process_reuse_its_actors_each_with_its_own_settings_and_counts():
    """Two rounds (other arm, run, trials) on the same two actor processes; each round's own episodes, FailFast and
    CPU; a round that needs more slots per actor than the idle ones have replaces them (their CPUs freed first)."""
    got: dict[str, list] = {"a": [], "b": [], "c": []}
    s1 = run_rollouts_sync(TASKS, "teacher", 1, oracle_endpoint(latency_s=0.05), settings(), "a", set(),
                           got["a"].append, env=NotesEnv(), progress=False)
    first = sorted(rollout_actors())
    pids = _actor_pids(first)
    s2 = run_rollouts_sync(TASKS[:4], "base", 2, oracle_endpoint(latency_s=0.05, name="second"), settings(), "b",
                           set(), got["b"].append, env=NotesEnv(), progress=False)
    assert sorted(rollout_actors()) == first and _actor_pids(first) == pids, "the same actors played both rounds"
    assert s1.backend == s2.backend == "ray" and s2.processes == 2
    assert s1.completed == s1.passed == 8 and {e.key[:2] for e in got["a"]} == {("a", "teacher")}
    assert {e.model for e in got["a"]} == {"env0-oracle/oracle"}
    assert s2.completed == s2.passed == 8 and {e.key[:2] for e in got["b"]} == {("b", "base")}
    assert {e.model for e in got["b"]} == {"env0-oracle/second"}, "the second round's settings reached the actors"
    assert s1.worker_cpu_s > 0 and s2.worker_cpu_s > 0

    wider = AgentSettings(concurrency=8, processes=2, backoff_base_s=0.001, backoff_max_s=0.002, scale=RAY)
    s3 = run_rollouts_sync(TASKS[:4], "teacher", 1, oracle_endpoint(latency_s=0.05), wider, "c", set(),
                           got["c"].append, env=NotesEnv(), progress=False)
    assert s3.completed == 4 and len(rollout_actors()) == 2 and not set(rollout_actors()) & set(first)
    shutdown_ray()
    assert no_actor_left()


def test_a_process_starts_its_local_ray_once_for_all_its_rounds_and_stops_it_at_shutdown(tmp_path):
    """No Ray up: the first round starts one, the second finds it (the same session), `shutdown_ray` stops it."""
    code = ("import json, ray; from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync; "
            "from env0_posttrain.agent.backends.ray import shutdown_ray; from env0_posttrain.spec.scale import ScaleSpec; "
            "from env0_posttrain_tests.support.agent import NotesEnv, notes_task; "
            "tasks = [notes_task(i) for i in range(4)]; sessions = []; "
            "s = AgentSettings(concurrency=2, processes=2, scale=ScaleSpec(backend='ray')); "
            "[(run_rollouts_sync(tasks, 'teacher', 1, oracle_endpoint(), s, f'r{k}', set(), None, env=NotesEnv(), "
            "progress=False), sessions.append(ray.get_runtime_context().get_session_name())) for k in range(2)]; "
            "shutdown_ray(); print(json.dumps({'sessions': sessions, 'after': ray.is_initialized()}))")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    import json

    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(got["sessions"]) == 2 and got["sessions"][0] == got["sessions"][1], got
    assert got["after"] is False, "shutdown_ray stops the Ray this process started"


def test_an_actor_killed_mid_round_is_restarted_and_every_episode_is_delivered_once():
    delivered: list = []
    killed: list = []

    def on_episode(ep):
        delivered.append(ep.key)
        if not killed:  # the driver refills both actors before it writes: the victim holds a job now
            victim = sorted(rollout_actors())[0]
            ray.kill(ray.get_actor(victim, namespace=NAMESPACE), no_restart=False)
            killed.append(victim)

    endpoint = oracle_endpoint(skill=1.0, latency_s=0.3)
    s = run_rollouts_sync(TASKS, "teacher", 2, endpoint, settings(), "kill", set(), on_episode, env=NotesEnv(),
                          progress=False)
    assert killed and s.resent >= 1, s
    assert sorted(delivered) == sorted({("kill", "teacher", t.id, k) for t in TASKS for k in range(2)})
    assert s.played == s.completed == 16 and s.passed == 16
    assert no_actor_left()


def test_a_cancelled_round_ctrl_c_in_asyncio_kills_its_actors():
    async def main():
        first = asyncio.Event()
        job = asyncio.ensure_future(run_rollouts(TASKS, "teacher", 2, oracle_endpoint(latency_s=0.3), settings(),
                                                 "cancel", set(), lambda ep: first.set(), env=NotesEnv(),
                                                 progress=False))
        await asyncio.wait_for(first.wait(), timeout=120)
        assert len(rollout_actors()) == 2
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(main())
    assert no_actor_left()


def test_the_key_is_read_where_the_actor_runs_never_sent(monkeypatch):
    """The driver has the key, the cluster's nodes do not (it was set after Ray started): the actor says so."""
    monkeypatch.setenv("ENV0_RAY_TEST_KEY", "s3cr3t-value")
    endpoint = oracle_endpoint().model_copy(update={"api_key_env": "ENV0_RAY_TEST_KEY"})
    run = {"endpoint": endpoint, "settings": settings(), "arm": "teacher", "run_id": "k", "env": NotesEnv()}
    assert b"s3cr3t-value" not in ray.cloudpickle.dumps((run, TASKS))
    with pytest.raises(FatalModelError, match="ENV0_RAY_TEST_KEY is not set on Ray node") as err:
        run_rollouts_sync(TASKS[:2], "teacher", 1, endpoint, settings(), "k", set(), None, env=NotesEnv(),
                          progress=False)
    assert err.value.kind == "missing_key"
    assert no_actor_left()


def test_a_model_served_by_this_process_only_runs_here_with_a_warning(caplog):
    """The tiny student (env0-local) lives in this process: no actor can call it, so its rounds stay here."""
    from env0_posttrain.agent.llm import register_provider
    from env0_posttrain.agent.providers.base import Env0Provider, fill_response

    class Here(Env0Provider):
        async def respond(self, model, messages, options, meta, model_response):
            return fill_response(model_response, model, {"role": "assistant", "content": "done"})

    register_provider("env0-rayhere", Here())
    endpoint = oracle_endpoint().model_copy(update={"model": "env0-rayhere/x", "extra": {}})
    with caplog.at_level(logging.WARNING, logger="env0_posttrain.agent"):
        s = run_rollouts_sync(TASKS[:2], "teacher", 1, endpoint, settings(), "here", set(), None, env=NotesEnv(),
                              progress=False)
    assert s.backend == "this process" and s.completed == 2
    assert "running in this process only: model env0-rayhere/x is served by a provider registered" in caplog.text


# A driver as a terminal starts it: SIGINT neither blocked nor ignored. A child inherits both from this process,
# where Ray's threads may hold SIGINT blocked (its own processes are started with it blocked).
AS_FROM_A_TERMINAL = ("import signal; signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
                      "signal.signal(signal.SIGINT, signal.default_int_handler); ")


def _driver(code: str, log: Path) -> subprocess.Popen:
    code = AS_FROM_A_TERMINAL + code
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}
    with open(log, "w") as sink:
        return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _wait_for_episodes(out: Path, proc: subprocess.Popen, n: int) -> None:
    deadline = time.time() + 240
    while time.time() < deadline and len(read_jsonl_episodes(out)) < n and proc.poll() is None:
        time.sleep(0.05)


def _gone(pids: list[int], timeout: float = 60.0) -> list[int]:
    import psutil

    deadline = time.time() + timeout
    while time.time() < deadline:
        alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return []
        time.sleep(0.2)
    return alive


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_a_driver_stopped_mid_round_leaves_no_ray_behind_and_a_rerun_plays_only_the_missing(tmp_path, sig):
    """A driver with a local Ray of its own: Ctrl-C stops its actors and its Ray; SIGKILL takes the actors, the
    raylet and the GCS down with it (Ray's processes share the fate of the driver that started them; Ray's two agents
    follow about a minute later, when their last report to the dead GCS times out, and are not waited for). The rerun (on this module's Ray) plays only
    the episodes not stored, none twice, and leaves those stored before untouched."""
    import psutil

    out = tmp_path / "episodes.jsonl"
    proc = _driver(f"from env0_posttrain_tests.support.agent import resume_worker; "
                   f"resume_worker({str(out)!r}, backend='ray')", tmp_path / "driver.log")
    try:
        _wait_for_episodes(out, proc, 3)
        family = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)
                  if sig == signal.SIGINT or "Agent" not in " ".join(p.cmdline())]
        assert family, "the driver's local Ray runs as its children"
        os.kill(proc.pid, sig)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert _gone(family) == [], "a Ray process outlived its driver"
    before = {tuple(r["key"]): r["episode"] for r in read_jsonl_episodes(out)}
    assert 3 <= len(before) < 12, f"the stop must land mid-round (rc {proc.returncode}): " + "".join(
        (tmp_path / "driver.log").read_text().splitlines(keepends=True)[-15:])

    stats = resume_worker(str(out), backend="ray")
    after = read_jsonl_episodes(out)
    keys = [tuple(r["key"]) for r in after]
    assert len(keys) == len(set(keys)) == 12, "nothing lost, nothing duplicated"
    assert stats == {"skipped": len(before), "completed": 12 - len(before)}
    assert all(r["episode"] == before[tuple(r["key"])] for r in after if tuple(r["key"]) in before)
