"""torch's thread count follows the cores free now: one per free core, at least one, at most the cores this
process may use; the idle time of those cores decides, the load average where /proc/stat is missing; every
process that loads a model sets it (here: the local student behind env0-local)."""

from __future__ import annotations

import pytest

from env0_posttrain import torch_threads
from env0_posttrain.torch_threads import choose_threads, free_cores, use_free_cores


@pytest.mark.parametrize("cores, free, threads", [(2, 0.0, 1), (2, 0.4, 1), (2, 1.2, 1), (2, 1.6, 2), (2, 2.0, 2),
                                                  (16, 7.6, 8), (16, 30.0, 16), (1, 0.0, 1)])
def test_one_thread_per_free_core_at_least_one_at_most_the_cores(cores, free, threads):
    assert choose_threads(cores, free) == threads


def test_free_cores_is_the_idle_share_of_the_allowed_cpus_over_the_sample(monkeypatch):
    samples = iter([(100, 1000), (100 + 150, 1000 + 1000)])  # 15 % idle over the sample
    monkeypatch.setattr(torch_threads, "_idle_jiffies", lambda cpus: next(samples))
    free, source = free_cores({0, 1}, sample_s=0.0)
    assert free == pytest.approx(0.3) and "idle" in source


def test_without_proc_stat_the_load_average_decides(monkeypatch):
    monkeypatch.setattr(torch_threads, "_idle_jiffies", lambda cpus: None)
    monkeypatch.setattr(torch_threads.os, "getloadavg", lambda: (3.5, 2.0, 1.0))
    assert free_cores({0, 1, 2, 3}, sample_s=0.0) == (pytest.approx(0.5), "1-min load 3.5")


def test_proc_stat_counts_only_the_cpus_this_process_may_use():
    idle_total = torch_threads._idle_jiffies({0})
    assert idle_total is None or (0 <= idle_total[0] <= idle_total[1])
    assert torch_threads._idle_jiffies({10_000}) is None  # no such cpu: nothing to go by


class FakeTorch:
    def __init__(self):
        self.threads = None

    def set_num_threads(self, n: int) -> None:
        self.threads = n


def test_the_choice_is_set_on_torch_and_the_environment_overrides_it(monkeypatch):
    monkeypatch.delenv(torch_threads.ENV, raising=False)
    monkeypatch.setattr(torch_threads, "free_cores", lambda cpus, sample_s=0.3: (0.2, "test"))
    fake = FakeTorch()
    assert use_free_cores(fake).threads == 1 == fake.threads
    monkeypatch.setenv(torch_threads.ENV, "3")
    assert use_free_cores(fake).threads == 3 == fake.threads
    monkeypatch.setenv(torch_threads.ENV, "zero")
    with pytest.raises(ValueError, match=torch_threads.ENV):
        use_free_cores(fake)


def test_loading_the_local_student_sets_torchs_threads_from_the_free_cores(monkeypatch, tmp_path):
    import torch

    from env0_posttrain.agent.local_model import LocalModel
    from env0_posttrain_tests.test_agent_support import build_tiny_student

    build_tiny_student(tmp_path)
    before = torch.get_num_threads()
    monkeypatch.delenv(torch_threads.ENV, raising=False)
    monkeypatch.setattr(torch_threads, "free_cores", lambda cpus, sample_s=0.3: (0.0, "test: all busy"))
    try:
        LocalModel("threads-test", tmp_path)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
