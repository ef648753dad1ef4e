"""Every RunSpec field changes what the graph does, or it does not exist.

The test walks RunSpec recursively. Each leaf field must have a registered proof: a new value and
an observer that returns what the graph produces from the spec (a request the harness would send,
the settings a rollout runs under, the tasks drawn, the training rows written, the trainer's config,
a stored value). The proof passes only if the observation changes. A field with no proof fails
the test: prove it, or remove the field. PENDING lists fields whose proof is not written
yet; it is empty when every field is proven.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from env0_posttrain.stages import arms as models
from env0_posttrain.stages import rounds
from env0_posttrain.stages.context import StageContext, content_hash
from env0_posttrain.stages.eval_trajectories import evaluate_arm
from env0_posttrain.stages.teacher_trajectories import collect_teacher
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import RunSpec, parse_spec
from env0_posttrain.store import Store
from env0_posttrain_tests.sft.test_support import make_episode, make_task, tiny_tokenizer
from env0_posttrain_tests.support.paths import FIXTURES

BASE = {"run_id": "r", "tasks": {"n_train": 4, "n_eval": 2}}
HOSTED = {"hosting": {"kind": "openai_compatible", "api_base": "http://127.0.0.1:9/v1", "base_model_name": "b"}}
PENDING: dict[str, str] = {"onpolicy.kind": "reverse_kl, the other kind, is refused at validation until its training "
                                             "core (branch opd-kl) is wired in; relabel is the only value that runs"}


def leaf_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        optional = [a for a in getattr(ann, "__args__", ()) if isinstance(a, type) and issubclass(a, BaseModel)]
        if name == "onpolicy":  # a union by kind: the kind that runs (relabel) proves each of its fields
            from env0_posttrain.spec.onpolicy import RelabelSpec

            out.append(prefix + name)
            out += leaf_paths(RelabelSpec, f"{prefix}{name}.")
            continue
        if prefix == "scale." and name == "backend":  # a union by kind: the kind with settings (ray) proves its own
            from env0_posttrain.agent.backends.ray import RaySettings

            out.append(prefix + name)
            out += leaf_paths(RaySettings, f"{prefix}{name}.")
            continue
        if optional and type(None) in ann.__args__:  # an optional section (rl): each of its fields needs a proof
            out.append(prefix + name)
            out += leaf_paths(optional[0], f"{prefix}{name}.")
        elif isinstance(ann, type) and issubclass(ann, BaseModel):
            out += leaf_paths(ann, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


def with_value(data: dict, path: str, value: Any) -> dict:
    data = json.loads(json.dumps(data))
    node = data
    *parents, last = path.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = value
    return data


# observers: what the graph does with a spec ----------------------------------------------------
class FakeStore:
    def __init__(self, spec: RunSpec):
        from env0_posttrain.stages.context import env0_root
        from env0_posttrain.tasks import make_task_set

        self.ts = make_task_set(spec.tasks, env0_root=env0_root(spec), env0_now=spec.env0.pinned_now())
        self.recorded: list = []

    def load_tasks(self, run_id, split):
        return [(t.id, t.model_dump_json()) for t in self.ts.split(split)]

    def latest_training(self, run_id):
        return {"revision": "abc123", "adapter_path": "/adapter"}

    def record_eval_result(self, *args):
        self.recorded.append(args)

    def start_training(self, key):
        return "t1"

    def finish_training(self, *args):
        pass


@pytest.fixture
def patched(monkeypatch, tmp_path):
    """Heavy steps replaced by recorders: no model is built, loaded or called."""
    built: list = []
    monkeypatch.setattr(models, "register_local_model", lambda alias, base, adapter_path=None, **kw:
                        f"env0-local/{alias}|{base}|{adapter_path}|{kw.get('device')}|{kw.get('max_batch_size')}|"
                        f"{kw.get('repetition_window')}")

    def fake_tiny(models_dir, corpus, entities, config, report_to=()):
        built.append((content_hash(corpus, sorted(map(str, entities))), config.model_dump(mode="json"), list(report_to)))
        return tmp_path / f"tiny-{len(built)}"

    import env0_posttrain.train as train_pkg
    monkeypatch.setattr(train_pkg, "ensure_tiny_student", fake_tiny)
    from env0_posttrain.stages import base_model as bm  # the base_model stage's builder stands in for its record

    monkeypatch.setattr(bm, "base_student", bm.ensure_base_student)
    monkeypatch.setattr(models, "base_student", bm.ensure_base_student)
    rollouts: list = []

    def fake_rollout(ctx, arm, tasks, trials, endpoint, settings):
        rollouts.append((arm, trials))
        return "round", [], {}

    monkeypatch.setattr(rounds, "rollout", fake_rollout)
    import env0_posttrain.store.base_eval_reuse as reuse  # no store here to reuse a base eval from: always run it

    monkeypatch.setattr(reuse, "rollout_or_reuse", lambda *args: args[-1]())
    return {"built": built, "rollouts": rollouts, "tmp": tmp_path}


def requests(spec: RunSpec, env) -> Any:
    store = FakeStore(spec)
    out = {"teacher": models.teacher_endpoint(spec).model_dump(mode="json"),
           "teacher_settings": models.rollout_settings(spec, "teacher").model_dump(mode="json"),
           "eval_settings": models.rollout_settings(spec, "base").model_dump(mode="json")}
    for arm in ("base", "sft"):
        out[arm] = models.arm_endpoint(spec, arm, store, spec.run_id, Paths.from_env(env["tmp"])).model_dump(mode="json")
    return out


def local_devices(spec: RunSpec, env) -> Any:
    """On a machine with a GPU: the device and batch size each local eval arm is registered with."""
    import torch

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch.cuda, "is_available", lambda: True)
        return requests(spec, env)


def student(spec: RunSpec, env) -> Any:
    store = FakeStore(spec)
    paths = Paths.from_env(env["tmp"])
    source = models.student_tokenizer_source(spec, store, spec.run_id, paths)
    return str(source), list(env["built"])


def task_set(spec: RunSpec, env) -> Any:
    with pytest.MonkeyPatch.context() as mp:  # the fixture packages' env0 checkout (gcal seed packs, default Slack)
        mp.setenv("ENV0_ROOT", str(FIXTURES / "env0_root"))
        ts = FakeStore(spec).ts
    return sorted((t.id, ts.splits[t.id]) for t in ts.tasks)


def results_rows() -> list[dict]:
    from env0_posttrain.sft import results_row

    eps = [make_episode(0, reward=1.0, steering=True, think=True), make_episode(0, trial=1, reward=0.5),
           make_episode(1, reward=1.0), make_episode(2, reward=1.0, long_text=4000)]
    rows = [results_row(e, make_task(int(e.task_id[-1]))).model_dump(mode="json") for e in eps]
    rows.append(rows[2])  # the same task and trial twice
    return rows


def sft_rows(spec: RunSpec, env) -> Any:
    from env0_posttrain.sft import convert_rows

    trl, report = convert_rows(results_rows(), spec.sft, fmt="trl", tokenizer=tiny_tokenizer(),
                               max_seq_length=spec.lora.max_seq_length)
    return [r.to_jsonl_dict() for r in trl], dict(report.skipped)


def tito(spec: RunSpec, env) -> Any:
    """TITO rows (weights, turns, lengths), the ids asked of a vLLM teacher, and whether drift would block."""
    from env0_posttrain.sft.tito import build_tito_rows
    from env0_posttrain.stages.sft_tito import drift_gate

    tok = tiny_tokenizer()
    rows: Any = "chat rows"
    if spec.sft.format == "tito":
        out, _ = build_tito_rows(results_rows(), spec.sft, tokenizer=tok, max_seq_length=spec.lora.max_seq_length)
        rows = [(r.weight, r.turn, len(r.input_ids), len(r.output_ids)) for r in out]
    path = env["tmp"] / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in results_rows()))
    gate = drift_gate(spec, path, tok)
    return models.token_capture_kwargs(spec), rows, gate.metadata["blocking"]


def tokenizer_template(spec: RunSpec, env) -> Any:
    saved = env["tmp"] / "tok"
    if not saved.is_dir():
        tiny_tokenizer().save_pretrained(saved)
    spec = spec.model_copy(update={"student": spec.student.model_copy(update={"tokenizer": str(saved)})})
    return models.load_student_tokenizer(spec, FakeStore(spec), spec.run_id, Paths.from_env(env["tmp"])).chat_template


def gpu_plan(spec: RunSpec, env) -> Any:
    """On a fake H100 without fla: whether training may start, and the checkpointing chosen for a 9B shape."""
    import torch

    from env0_posttrain.train.gpu.kernels import KernelError, KernelStatus, check_kernels
    from env0_posttrain.train.lora_sft import apply_memory_plan

    status = KernelStatus(cuda=True, device_name="NVIDIA H100 80GB HBM3", capability=(9, 0), triton="3.7.1")
    try:
        kernels: Any = check_kernels(spec.lora, status, linear_attention=True)
    except KernelError as err:
        return "refused", str(err)[:40]

    class NineB:  # parameters on the meta device: sizes without memory
        config = type("C", (), {"num_hidden_layers": 32, "hidden_size": 4096})()

        def parameters(self):
            yield torch.nn.Parameter(torch.empty(9_000_000_000, device="meta"), requires_grad=False)
            yield torch.nn.Parameter(torch.empty(50_000_000, device="meta"))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("env0_posttrain.train.lora_sft.device_memory_gib", lambda: 79.2)
        plan = apply_memory_plan(spec.lora, {"use_cpu": False, "bf16": True}, NineB(), kernels)
    return kernels.model_dump(mode="json"), plan.model_dump(mode="json") if plan else None


def trainer(spec: RunSpec, env) -> Any:
    from env0_posttrain.train.lora_sft import build_lora_config, build_sft_config, resolve_device_settings, split_eval

    import torch
    with pytest.MonkeyPatch.context() as mp:  # the GPU settings only act on a GPU
        mp.setattr(torch.cuda, "is_available", lambda: True)
        mp.setattr(torch.cuda, "is_bf16_supported", lambda: True)
        from env0_posttrain.train.gpu.kernels import KernelStatus, check_kernels

        status = KernelStatus(cuda=True, device_name="NVIDIA H100 80GB HBM3", capability=(9, 0), liger=True)
        gpu = resolve_device_settings(spec.lora, check_kernels(spec.lora, status, linear_attention=False))
    cfg = build_sft_config(spec.lora, Path("/out"), True, resolve_device_settings(spec.lora)).to_dict()
    lora = build_lora_config(spec.lora).to_dict()
    rows = [{"messages": [i], "source": json.dumps({"episode_key": f"e{i // 2}"})} for i in range(40)]
    train, held = split_eval(rows, None, spec.lora)
    return json.dumps([cfg, lora, gpu, [len(train), [r["messages"] for r in held]]], sort_keys=True, default=str)


def stage_runs(spec: RunSpec, env) -> Any:
    ctx = StageContext(spec.run_id, spec, FakeStore(spec), Paths.from_env(env["tmp"] / "d"),
                              logging.getLogger("t"))
    teacher = collect_teacher(ctx)
    evaluate_arm(ctx, "base")
    return list(env["rollouts"]), [(c.name, c.passed) for c in teacher.checks]


def stored(spec: RunSpec, env) -> Any:
    store = Store(env["tmp"] / f"db-{len(list(env['tmp'].glob('db-*')))}.duckdb")
    store.upsert_run(spec)
    return store.query("SELECT run_id, spec_json FROM runs")


def nightly(spec: RunSpec, env) -> Any:
    from env0_posttrain.defs.schedules import nightly_run_ids
    from env0_posttrain.spec.runspec import write_spec

    paths = Paths.from_env(env["tmp"] / f"n-{len(list(env['tmp'].glob('n-*')))}")
    paths.runs.mkdir(parents=True, exist_ok=True)
    write_spec(spec, paths.runs)
    return nightly_run_ids(type("R", (), {"paths": lambda self: paths})())


def rl_stage(spec: RunSpec, env) -> Any:
    """What the RL stage hands GRPO (the RL section and the budget its episodes play under), or its skip."""
    import env0_posttrain.train.grpo as grpo
    from env0_posttrain.stages import rl_adapter as rl_stages

    seen: list = []

    class Handed(Exception):
        pass

    def record(tasks, rl, eval_spec, *args, **kwargs):
        seen.append((rl.model_dump(mode="json"), eval_spec.model_dump(mode="json"), len(tasks)))
        raise Handed

    ctx = StageContext(spec.run_id, spec, FakeStore(spec), Paths.from_env(env["tmp"] / "rl"), logging.getLogger("t"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grpo, "train_rl", record)
        try:
            return rl_stages.train_rl_adapter(ctx).metadata
        except Handed:
            return seen


def onpolicy_stage(spec: RunSpec, env) -> Any:
    """What the on-policy stage does with its section: the tasks, trials, decoding and step limit of each round's
    play, the relabel teacher and its request limit, and the training settings of each round (or its skip)."""
    from types import SimpleNamespace

    import env0_posttrain.agent as agent
    import env0_posttrain.agent.rollouts as rollouts
    import env0_posttrain.train.onpolicy_relabel as relabel
    from env0_posttrain.stages import onpolicy_adapter as stage

    seen: list = []
    adapter = env["tmp"] / "op-adapter"
    adapter.mkdir(exist_ok=True)
    (adapter / "adapter_model.safetensors").write_bytes(b"w")

    def play(tasks, arm, trials, endpoint, settings, run_id, **kw):
        seen.append(("play", [t.id for t in tasks], trials, endpoint.temperature, settings.max_steps))

    def relabel_rows(episodes, tasks, endpoint, settings, run_id, tokenizer, concurrency, drop_agreeing=False,
                     entity_swaps=0, entity_weight=1.0, **kw):
        seen.append(("relabel", endpoint.model, endpoint.extra, concurrency, drop_agreeing, entity_swaps,
                     entity_weight))
        return [{"input_ids": [1, 2], "completion_mask": [0, 1]}], [], relabel.RelabelStats(turns=1, rows=1)

    def train(rows, lora, base, init_adapter, out_dir, tokenizer, on_log=None, **kw):
        seen.append(("train", len(rows), lora.model_dump(mode="json")))
        return SimpleNamespace(adapter_dir=adapter, steps=lora.max_steps, train_tokens=1, first_train_loss=None,
                               final_train_loss=None, runtime_s=0.0, device="cpu")

    ctx = StageContext(spec.run_id, spec, FakeStore(spec), Paths.from_env(env["tmp"] / "op"), logging.getLogger("t"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rollouts, "run_rollouts_sync", play)
        mp.setattr(agent, "register_local_model", lambda alias, *a, **kw: f"env0-local/{alias}")
        mp.setattr(relabel, "relabel_rows", relabel_rows)
        mp.setattr(relabel, "train_relabel_round", train)
        mp.setattr(relabel, "sft_token_rows", lambda rows, tok: [{"input_ids": [3], "completion_mask": [1]}])
        mp.setattr(models, "load_student_tokenizer", lambda *a: None)
        ctx.store.load_sft_rows = lambda run_id: []
        meta = stage.train_onpolicy_adapter(ctx).metadata
    return seen, sorted(k for k in meta if k in ("skipped", "tensorboard"))


def suites_drawn(spec: RunSpec, env) -> Any:
    """The eval suites the arms play and the tasks each one draws (the eval_suites stage's builder)."""
    from env0_posttrain.spec.suites import eval_suite_names
    from env0_posttrain.tasks.suites import build_suite

    train = FakeStore(spec).ts.train
    drawn = [(s.name, [t.id for t in build_suite(s, train=train, families=spec.tasks.families,
                                                  templates=spec.tasks.templates, source=None, anchor=None,
                                                  cache_dir=None).tasks]) for s in spec.suites]
    return eval_suite_names(spec), drawn


def env0_checkout(spec: RunSpec, env) -> Any:
    """The env0 checkout the stages hand to whatever builds, judges or sandboxes a task (and to their workers)."""
    from env0_posttrain.stages.context import task_paths

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("ENV0_ROOT", raising=False)
        return task_paths(spec).env0_root


def env0_clock(spec: RunSpec, env) -> Any:
    """The clock the imported packages' episodes are frozen at (their recipes' `now`)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ENV0_ROOT", str(FIXTURES / "env0_root"))
        return sorted({t.recipe.items["now"][:10] for t in FakeStore(spec).ts.tasks})


def run_threads(spec: RunSpec, env) -> Any:
    """The torch thread count a stage of the run works at (set when its context loads) and passes to its workers."""
    import os

    import torch

    from env0_posttrain.util.process_env import export
    from env0_posttrain.util.torch_threads import ENV, use_run_threads

    before = torch.get_num_threads()
    try:
        use_run_threads(spec.torch_threads)
        return torch.get_num_threads(), os.environ.get(ENV)
    finally:
        export(ENV, None)
        torch.set_num_threads(before)


# proofs: path -> (new value, observer, base overrides) ------------------------------------------
P = {}
for path, value in {"run_id": "other", "description": "a note"}.items():
    P[path] = (value, stored, {})
for path, value in {"families": ["mail"], "templates": ["calendar_create_event"], "n_train": 3, "n_eval": 3, "n_heldout": 1, "seed": 1,
                    "split_by_template": True}.items():
    P[f"tasks.{path}"] = (value, task_set, {})
for path, value in {"model": "openai/gpt-x", "api_base": "http://h/v1", "api_key_env": "K", "skill": 0.5,
                    "steering_prompt": "be careful", "concurrency": 3, "processes": 2, "max_steps": 5,
                    "sampling.temperature": 0.7, "sampling.top_p": 0.5, "sampling.max_tokens": 99}.items():
    P[f"teacher.{path}"] = (value, requests, {})
P["teacher.trials"] = (2, stage_runs, {})
P["teacher.min_pass_rate"] = (0.0, stage_runs, {})
P["teacher.fault_rate"] = (0.5, requests, {"teacher": {"model": "env0-faulty/env0-oracle/oracle"}})
for path, value in {"model": "tiny-qwen3_5", "pretrain_steps": 3, "tokenizer": "/some/tokenizer"}.items():
    P[f"student.{path}"] = (value, student, {})
for path in ("request_repeats", "short_repeats", "copy_drills", "repeat_drills", "directory_repeats",
             "practice_calls", "seed"):
    P[f"student.corpus.{path}"] = (7, student, {})
for path, value in {"min_reward": 1.0, "max_rows_per_task": 1, "canonical_only": False, "strip_think": False,
                    "strip_steering": False, "first_turn_weight": 3, "first_turns": 2, "overlength": "window"}.items():
    P[f"sft.{path}"] = (value, sft_rows, {"lora": {"max_seq_length": 2048}})
P["sft.first_turns"] = (2, sft_rows, {"lora": {"max_seq_length": 2048}, "sft": {"first_turn_weight": 2}})
for path, value in {"r": 4, "alpha": 8, "dropout": 0.2, "target_modules": ["q_proj"], "modules_to_save": ["lm_head"],
                    "learning_rate": 0.5, "max_seq_length": 256, "per_device_batch_size": 2, "grad_accumulation": 2, "max_steps": 9,
                    "epochs": 2.0, "warmup_ratio": 0.5, "eval_fraction": 0.3, "save_steps": 7, "logging_steps": 3,
                    "bf16": False, "gradient_checkpointing": False, "packing": True, "group_by_length": True,
                    "use_liger": False, "seed": 5, "checkpoint_choice": "first_call"}.items():
    P[f"lora.{path}"] = (value, trainer, {})
for path, value in {"temperature": 0.5, "max_steps": 4, "max_tokens": 77, "concurrency": 5, "processes": 2,
                    "stuck_after": 5}.items():
    P[f"eval.{path}"] = (value, requests, {})
P["eval.repetition_window"] = (128, requests, {})
P["eval.trials"] = (1, stage_runs, {})
P["eval.nightly"] = (True, nightly, {})
P["hosting.kind"] = ("openai_compatible", requests, {"hosting": {"api_base": "http://127.0.0.1:9/v1"}})
for path, value in {"api_base": "http://10.0.0.1:8000/v1", "base_model_name": "other", "adapter_name_prefix": "x"}.items():
    P[f"hosting.{path}"] = (value, requests, HOSTED)
for path, value in {"max_steps": 6, "max_tokens": 55}.items():
    P[f"budget.{path}"] = (value, requests, {})
P["tasks.source"] = (str(FIXTURES), task_set, {"tasks": {"n_train": 1, "n_eval": 1}})
P["student.chat_template"] = (str(Path(__import__("trl").__file__).parent / "chat_templates" / "qwen3.jinja"),
                              tokenizer_template, {})
P["hosting.api_key_env"] = ("SERVED_KEY", requests, HOSTED)
P["sft.format"] = ("tito", tito, {"teacher": {"model": "hosted_vllm/q"}})
P["sft.tito_source"] = ("retokenise", tito, {"teacher": {"model": "hosted_vllm/q"}, "sft": {"format": "tito"}})
P["sft.upweight_mode"] = ("weight", tito, {"sft": {"format": "tito", "first_turn_weight": 3},
                                           "lora": {"max_seq_length": 4096}})
P["sft.drift_check"] = (False, tito, {"sft": {"format": "tito"}})
P["lora.allow_slow_kernels"] = (True, gpu_plan, {"lora": {"use_liger": False}})
P["lora.gpu_memory_gb"] = (40.0, gpu_plan, {"lora": {"allow_slow_kernels": True}})
P["rl"] = ({}, rl_stage, {})
P["student.device"] = ("cpu", local_devices, {})
P["student.report_to"] = ([], student, {})
P["lora.report_to"] = ([], trainer, {})
P["rl.report_to"] = ([], rl_stage, {"rl": {}})
for path, value in {"learning_rate": 0.5, "max_steps": 3, "prompts_per_step": 3, "num_generations": 3, "temperature": 0.3,
                    "beta": 0.5, "loss_type": "grpo", "max_steps_per_episode": 3, "logging_steps": 3, "seed": 9}.items():
    P[f"rl.{path}"] = (value, rl_stage, {"rl": {}})
P["onpolicy"] = ({}, onpolicy_stage, {})
for path, value in {"rounds": 3, "tasks_per_round": 2, "trials_per_round": 2, "temperature": 0.7,
                    "max_steps_per_episode": 2, "learning_rate": 0.5, "steps_per_round": 7, "per_device_batch_size": 3,
                    "logging_steps": 3, "report_to": [], "seed": 9, "teacher_model": "env0-oracle/oracle@0.5",
                    "teacher_concurrency": 3, "keep_sft_rows": True, "agreeing_turns": "drop",
                    "entity_swaps": 3, "entity_weight": 4.0}.items():
    P[f"onpolicy.{path}"] = (value, onpolicy_stage, {"onpolicy": {"tasks_per_round": 1}})
P["onpolicy.fresh_tasks"] = (2, onpolicy_stage, {"onpolicy": {}})  # every task plays: two more, new ones
for path, value in {"timeout_s": 5.0, "max_timeout_s": 30.0, "output_cap": 500, "max_processes": 32,
                    "max_memory_mb": 512, "max_writable_mb": 64, "max_writable_files": 2000}.items():
    P[f"shell.{path}"] = (value, requests, {})
P["teacher.surface"] = ("shell", requests, {"compare_across_surfaces": True})
P["eval.surface"] = ("shell", requests, {"compare_across_surfaces": True})
P["torch_threads"] = (13, run_threads, {})
P["scale.backend"] = ("ray", requests, {})  # the settings every round runs under (agent/test_ray_backend.py: where it plays)
P["scale.backend.kind"] = ("ray", requests, {})
P["scale.backend.address"] = ("ray://head:10001", requests, {"scale": {"backend": {"kind": "ray"}}})


def mixed_surfaces(spec: RunSpec, env) -> Any:
    """Whether a spec whose teacher acts through the shell and whose students act through tools is accepted."""
    try:
        return parse_spec(with_value(spec.model_dump(mode="json"), "teacher.surface", "shell")).surface_line()
    except Exception as err:  # noqa: BLE001 - the refusal is the observation
        return type(err).__name__


P["compare_across_surfaces"] = (True, mixed_surfaces, {})
P["suites"] = ([{"name": "seen2", "kind": "seen", "sample": 2}], suites_drawn, {})
P["env0.root"] = (str(FIXTURES / "env0_root"), env0_checkout, {})
P["env0.clock"] = ("frozen@2031-05-04T12:00:00Z", env0_clock, {"tasks": {"source": str(FIXTURES), "n_train": 1,
                                                                           "n_eval": 1}})
PROOFS = P

FIELDS = leaf_paths(RunSpec)


@pytest.mark.parametrize("path", FIELDS)
def test_every_field_changes_what_the_graph_does(path, patched):
    if path in PENDING:
        pytest.xfail(f"{path}: made to act by another branch ({PENDING[path]}); register its proof at merge")
    assert path in PROOFS, f"RunSpec.{path} has no registered proof that it changes the graph: add one or remove it"
    value, observe, overrides = PROOFS[path]
    base = parse_spec({**json.loads(json.dumps(BASE)), **overrides})
    changed = parse_spec(with_value(base.model_dump(mode="json"), path, value))
    assert changed != base, f"{path}={value!r} is the base value; pick another"
    patched["built"].clear(), patched["rollouts"].clear()
    before = observe(base, patched)
    patched["built"].clear(), patched["rollouts"].clear()
    after = observe(changed, patched)
    assert before != after, f"RunSpec.{path} = {value!r} changed nothing that {observe.__name__} observes"


def test_proofs_name_only_fields_that_exist():
    assert set(PROOFS) - set(FIELDS) == set() and set(PENDING) - set(FIELDS) == set()
