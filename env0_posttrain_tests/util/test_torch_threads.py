"""torch's thread count is the run's: the spec's `torch_threads`, else the cores this process may use, never the cores
that happen to be free; a stage sets it for its process and its workers, and training at that count gives the same
weights on a quiet and on a loaded machine."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess
import sys

import pytest

from env0_posttrain.util import torch_threads
from env0_posttrain.util.torch_threads import ENV, allowed_cores, resolve


def _spin() -> None:
    while True:
        pass


class Busy:
    """`n` processes spinning on the CPU: the machine's load while the block runs."""

    def __init__(self, n: int):
        self.procs = [mp.get_context("spawn").Process(target=_spin, daemon=True) for _ in range(n)]

    def __enter__(self):
        for p in self.procs:
            p.start()
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()  # not terminate: a runner that ignores SIGTERM hands that to its children
            p.join()


def test_the_count_is_the_specs_else_the_cores_allowed_whatever_the_load():
    assert resolve(3).threads == 3 and "spec" in resolve(3).source
    quiet = resolve(None)
    assert quiet.threads == len(os.sched_getaffinity(0)) == allowed_cores()
    with Busy(2):
        assert resolve(None) == quiet


def test_a_stage_sets_the_runs_count_for_its_process_and_the_processes_it_starts(tmp_path, monkeypatch):
    import torch

    from env0_posttrain.util.paths import Paths
    from env0_posttrain.stages.context import StageContext
    from env0_posttrain.spec.runspec import RunSpec, write_spec

    monkeypatch.delenv(ENV, raising=False)
    paths = Paths.from_env(tmp_path)
    paths.runs.mkdir(parents=True)
    before = torch.get_num_threads()
    child = [sys.executable, "-c", "import torch; from env0_posttrain.util import torch_threads; "
                                   "print(torch_threads.apply(torch).threads, torch.get_num_threads())"]
    try:
        write_spec(RunSpec(run_id="one", torch_threads=1), paths.runs)
        StageContext.load("one", paths)
        assert torch.get_num_threads() == 1 and os.environ[ENV] == "1"
        assert subprocess.run(child, capture_output=True, text=True, check=True).stdout.split() == ["1", "1"]
        write_spec(RunSpec(run_id="two"), paths.runs)
        StageContext.load("two", paths)
        assert torch.get_num_threads() == allowed_cores() and os.environ[ENV] == str(allowed_cores())
    finally:
        from env0_posttrain.util.process_env import export

        export(ENV, None)
        torch.set_num_threads(before)


def test_a_bad_thread_variable_is_named(monkeypatch):
    monkeypatch.setenv(ENV, "zero")
    with pytest.raises(ValueError, match=ENV):
        torch_threads.current()
    monkeypatch.setenv(ENV, "2")
    assert torch_threads.current().threads == 2


def test_importing_the_package_chooses_how_threads_wait_once_per_run_unless_told_otherwise():
    from env0_posttrain import DECIDED, _wait_policy

    assert _wait_policy(0.8, 2) == "BOUNDED" and _wait_policy(1.0, 2) == "PASSIVE" and _wait_policy(5.0, 2) == "PASSIVE"
    code = "import os, env0_posttrain; print(os.environ.get('ENV0_OMP_WAIT'), os.environ.get('OMP_WAIT_POLICY'))"
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", DECIDED)}

    def run(env: dict) -> str:
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.strip()

    assert run(env) in ("BOUNDED None", "PASSIVE PASSIVE")  # which one depends on the load at import, by design
    assert run({**env, DECIDED: "BOUNDED"}) == "BOUNDED None"  # a child keeps its run's choice, whatever the load
    assert run({**env, "OMP_WAIT_POLICY": "ACTIVE"}) == "None ACTIVE"  # the user's setting stands


TRAIN = r"""
import json, sys
import torch
from transformers import AutoModelForCausalLM
from env0_posttrain.util import torch_threads
from env0_posttrain.train.tiny_student.build import TinyStudentConfig, build_model_config
threads = torch_threads.apply(torch).threads
c = TinyStudentConfig()
cfg = build_model_config(c, vocab_size=2000)
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(cfg)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randint(0, 2000, (8, 128), generator=torch.Generator().manual_seed(1))
for _ in range(3):
    loss = model(input_ids=x, labels=x).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad()
print(json.dumps({"threads": threads, "weights": [p.detach().flatten()[:64].tolist() for p in model.parameters()],
                  "loss": loss.item()}))
"""


def _train(threads: int) -> dict:
    env = {**os.environ, ENV: str(threads)}
    out = subprocess.run([sys.executable, "-c", TRAIN], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_training_at_the_runs_count_gives_the_same_weights_on_a_quiet_and_a_loaded_machine():
    """Three steps of the tiny student's shape at the run's count (2), alone and beside two busy processes: the
    weights and the loss are the same to the last bit. Before, the count followed the free cores (2 quiet, 1 here)."""
    quiet = _train(2)
    with Busy(2):
        loaded = _train(2)
    assert quiet["threads"] == loaded["threads"] == 2
    assert loaded["weights"] == quiet["weights"] and loaded["loss"] == quiet["loss"]
