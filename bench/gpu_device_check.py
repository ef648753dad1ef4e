"""One command on a lent GPU machine: does the GPU path work end to end, and how fast is it? One table out.

Parts, in order, each in its own process with its own time box (a hang or a crash in one leaves the others'
rows; the whole run keeps within `--budget-s`):

  env       device, versions, which kernels import (fla, Liger, flash-attn, causal-conv1d)
  demo      `env0-posttrain demo` on CUDA with the gpu extra's kernels (Liger on): wall time, step timings,
            the headline, where training and each eval arm ran (the report's lineage)
  bench9b   bench/gpu_lora_bench.py's 9B shape, the memory plan's chosen mode at a 40 and an 80 GiB budget
  mid       a Qwen3.5-0.8B-shaped student built from its config (random weights; the demo tokenizer's
            vocabulary) through `train_lora` and one eval arm (`register_local_model` on CUDA, the demo's
            eval tasks through the harness), with its generation throughput at batch 1, 16 and 64; and fla's
            gated delta rule (forward + backward) against transformers' torch reference

fla 0.6.0 refuses its gated backward on Hopper with Triton < 3.7.1 (a Triton miscompile); the image's Triton is
3.6 and Triton 3.7.1's wheel is too big to carry. On such a machine the check turns that guard (and the
project's own) off for the Qwen3.5 parts and says so: their timings stand, their gradients are only as right as
the `fla vs torch` row shows.

    PYTHONPATH=/tmp/pack/site-packages:$PWD python3 bench/gpu_device_check.py --out "$OUT"   # on the lent H100
    python bench/gpu_device_check.py --cpu-tiny --out /tmp/check                  # the code path, here (seconds)

Writes device_check.md and device_check.json to --out and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("env", "demo", "bench9b", "mid")  # in order of what a short lease must not miss
BOX_S = {"env": 60, "demo": 170, "bench9b": 240, "mid": 170}  # GPU; --cpu-tiny: CPU_BOX_S
CPU_BOX_S = {"env": 120, "demo": 240, "mid": 240, "bench9b": 240}
# Qwen3.5-0.8B's text tower (hub config), vocabulary aside: the demo tokenizer's ids are the model's.
QWEN3_5_0_8B = dict(hidden_size=1024, intermediate_size=3584, num_hidden_layers=24, num_attention_heads=8,
                    num_key_value_heads=2, head_dim=256, linear_num_key_heads=16, linear_num_value_heads=16,
                    linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4,
                    max_position_embeddings=32768, tie_word_embeddings=True,
                    layer_types=["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(24)])
TINY_QWEN3_5 = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4,
                    linear_key_head_dim=16, linear_value_head_dim=16, linear_conv_kernel_dim=4,
                    max_position_embeddings=2048, tie_word_embeddings=True,
                    layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"])


# -- helpers shared by the parts ------------------------------------------------------------------------
def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def fla_guard_note() -> str | None:
    """Turn fla's (and the project's) Hopper + Triton < 3.7.1 guard off in this process; the note says so.
    None when the machine needs no such thing."""
    from env0_posttrain.train.gpu import kernels as gpu_kernels

    status = gpu_kernels.probe_kernels()
    low, high = gpu_kernels.HOPPER_TRITON_BAD
    if not (status.cuda and status.fla and status.capability and status.capability[0] == 9 and status.triton
            and low <= gpu_kernels._version_tuple(status.triton) < high and not status.tilelang):
        return None
    import fla.ops.common.chunk_o as chunk_o

    chunk_o.TRITON_ABOVE_3_7_1 = True
    gpu_kernels.HOPPER_TRITON_BAD = ((0, 0, 0), (0, 0, 0))
    return (f"fla's Hopper guard turned off (Triton {status.triton} < 3.7.1): timings only; "
            "see fla_vs_torch for the gated backward's error")


def _peak_gib() -> float | None:
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**30, 2) if torch.cuda.is_available() else None


# -- parts: each returns {"figures": {...}, "notes": [...]} -----------------------------------------------
def part_env(tiny: bool) -> dict:
    import torch
    import transformers
    import trl

    from env0_posttrain.train.gpu.kernels import probe_kernels

    status = probe_kernels()
    figures = {"device": torch.cuda.get_device_name() if status.cuda else "cpu", "python": sys.version.split()[0],
               "torch": torch.__version__, "triton": status.triton, "transformers": transformers.__version__,
               "trl": trl.__version__, "fla": status.fla_error or "ok", "liger": status.liger,
               "flash_attn": status.flash_attn, "causal_conv1d": status.causal_conv1d,
               "capability": ".".join(map(str, status.capability)) if status.capability else None}
    if status.cuda:
        figures["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    return {"figures": figures, "notes": []}


def part_demo(tiny: bool) -> dict:
    """GPU: the README's `env0-posttrain demo` in a fresh data dir. CPU: the adapter stage's path (train, then probe
    in the same process: the one that crashed on CUDA) on a tiny student."""
    if tiny:
        return _demo_tiny()
    from env0_posttrain.util.paths import Paths
    from env0_posttrain.store import Store

    data = Path(tempfile.mkdtemp(prefix="env0-demo-"))
    env = dict(os.environ, ENV0_DATA_DIR=str(data), DAGSTER_DISABLE_TELEMETRY="1", LITELLM_LOCAL_MODEL_COST_MAP="True",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    t0 = time.time()
    run = subprocess.run([sys.executable, "-c", "from env0_posttrain.cli.main import app; app()", "demo", "--data-dir",
                          str(data)], env=env, capture_output=True, text=True)
    wall = time.time() - t0
    tail = (run.stdout + run.stderr)[-1500:]
    if run.returncode != 0:
        raise RuntimeError(f"demo exited {run.returncode}: {tail}")
    store = Store(Paths.from_env(data).db, read_only=True)
    headline = store.query("SELECT headline FROM reports WHERE run_id = 'demo' ORDER BY created_at DESC LIMIT 1")
    training = store.latest_training("demo") or {}
    result = training.get("result", {})
    timings = {line.split()[0]: float(line.split()[-1]) for line in run.stdout.splitlines()
               if line.startswith("  ") and len(line.split()) == 2 and line.split()[-1].replace(".", "").isdigit()}
    devices = {}
    for arm in ("base", "sft"):
        rid = store.latest_round("demo", arm)
        rows = store.query("SELECT summary_json FROM eval_results WHERE round_id = ?", [rid]) if rid else []
        devices[arm] = json.loads(rows[0][0] or "{}").get("device") if rows else None
    return {"figures": {"wall_s": round(wall, 1), "headline": headline[0][0] if headline else None,
                        "lora_steps": result.get("steps"), "lora_runtime_s": round(result.get("runtime_s") or 0, 1),
                        "train_device": result.get("device"), "eval_devices": devices,
                        "slowest_steps_s": dict(sorted(timings.items(), key=lambda kv: -kv[1])[:5])},
            "notes": []}


def _demo_tiny() -> dict:
    from env0_posttrain.spec.runspec import LoraSpec
    from env0_posttrain.train import lora_sft, sanity_probe
    from env0_posttrain.train.synthetic_rows import make_synthetic_set
    from env0_posttrain.train.tiny_student.build import TinyStudentConfig, ensure_tiny_student
    from env0_posttrain.train.tracking.trackers import event_files

    work = Path(tempfile.mkdtemp(prefix="env0-check-"))
    data = make_synthetic_set(8, 2, seed=1)
    student = TinyStudentConfig(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                                vocab_size=320, pretrain_steps=2, pretrain_batch_size=2, pretrain_seq_len=32)
    base = ensure_tiny_student(work / "models", data.corpus, data.entities, student)
    lora = LoraSpec(r=4, alpha=8, dropout=0.0, max_seq_length=512, per_device_batch_size=2, grad_accumulation=1,
                    max_steps=2, save_steps=10, logging_steps=1, eval_fraction=0.0)
    t0 = time.time()
    result = lora_sft.train_lora(data.train, [], lora, base, work / "adapter")
    probe = sanity_probe(base, result.adapter_dir, data.train, n=2, max_new_tokens=4, device=result.device)
    return {"figures": {"wall_s": round(time.time() - t0, 1), "train_device": result.device, "probe_prompts": probe.n_prompts,
                        "tensorboard_files": len(event_files(result.tensorboard_dir))},
            "notes": ["CPU: the adapter stage's train-then-probe path on a tiny student, not the whole demo"]}


def _fla_vs_torch(tiny: bool) -> dict:
    """fla's chunk_gated_delta_rule against transformers' torch path, forward and backward (the gated backward is
    what fla refuses on Hopper with Triton < 3.7.1)."""
    import torch
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    from transformers.models.qwen3_5.modeling_qwen3_5 import torch_chunk_gated_delta_rule

    reference = getattr(torch_chunk_gated_delta_rule, "__wrapped__", torch_chunk_gated_delta_rule)
    g = torch.Generator(device="cuda").manual_seed(0)
    B, T, H, K = 1, 512, 4, 128
    q, k, v = (torch.randn(B, T, H, K, device="cuda", generator=g, dtype=torch.bfloat16) for _ in range(3))
    gate = -torch.rand(B, T, H, device="cuda", generator=g).float() * 0.5
    beta = torch.rand(B, T, H, device="cuda", generator=g, dtype=torch.bfloat16).sigmoid()
    do = torch.randn(B, T, H, K, device="cuda", generator=g, dtype=torch.bfloat16)
    grads = {}
    for name, fn in (("fla", chunk_gated_delta_rule), ("torch", reference)):
        leaves = [t.clone().requires_grad_(True) for t in (q, k, v, gate, beta)]
        out = fn(*leaves[:3], g=leaves[3], beta=leaves[4], use_qk_l2norm_in_kernel=True)[0]
        (out.float() * do.float()).sum().backward()
        grads[name] = [out.float()] + [t.grad.float() for t in leaves]
    names = ("out", "dq", "dk", "dv", "dg", "dbeta")
    rel = {n: round(float((a - b).norm() / b.norm().clamp_min(1e-12)), 4)
           for n, a, b in zip(names, grads["fla"], grads["torch"])}
    return rel


def _phase(name: str, figures: dict, notes: list, result_file: Path | None) -> None:
    """Say which phase starts (a time-out's log tail names it) and keep the figures so far (a time-out keeps them)."""
    print(f"[{time.strftime('%H:%M:%S')}] mid: {name}", flush=True)
    if result_file is not None:
        result_file.write_text(json.dumps({"figures": figures, "notes": notes}, default=str))


def part_mid(tiny: bool, result_file: Path | None = None) -> dict:
    import asyncio

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from env0_posttrain.agent import AgentSettings, ModelEndpoint, register_local_model, run_episode
    from env0_posttrain.agent.providers.local_model import GenRequest, local_model
    from env0_posttrain.making.presets import preset_data
    from env0_posttrain.spec.runspec import EvalSpec, LoraSpec, TaskSelection
    from env0_posttrain.tasks import make_task_set
    from env0_posttrain.train import lora_sft
    from env0_posttrain.train.generation import first_call_prompt
    from env0_posttrain.train.synthetic_rows import make_synthetic_set
    from env0_posttrain.train.tiny_student.build import TinyStudentConfig, ensure_tiny_student

    cuda = _cuda()
    notes = [n for n in [fla_guard_note()] if n]
    figures: dict[str, Any] = {}
    _phase("build the student", figures, notes, result_file)
    work = Path(tempfile.mkdtemp(prefix="env0-mid-"))
    data = make_synthetic_set(64 if not tiny else 8, 4, seed=3)
    tok_source = ensure_tiny_student(work / "tok", data.corpus, data.entities, TinyStudentConfig(
        hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64, pretrain_steps=0))
    tok = AutoTokenizer.from_pretrained(str(tok_source))
    shape = TINY_QWEN3_5 if tiny else QWEN3_5_0_8B
    config = AutoConfig.for_model("qwen3_5_text", **shape, vocab_size=len(tok), pad_token_id=tok.pad_token_id,
                                  eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    model.generation_config.pad_token_id, model.generation_config.eos_token_id = tok.pad_token_id, tok.eos_token_id
    base = work / "base"
    model.save_pretrained(base)
    tok.save_pretrained(base)
    figures["params_m"] = round(sum(p.numel() for p in model.parameters()) / 1e6, 1)
    del model
    steps = 2 if tiny else 30
    lora = LoraSpec(r=16, alpha=32, dropout=0.0, max_seq_length=2048, per_device_batch_size=2 if tiny else 8,
                    grad_accumulation=1, max_steps=steps, save_steps=10**6, logging_steps=1, eval_fraction=0.0,
                    report_to=[])
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    _phase("train_lora", figures, notes, result_file)
    result = lora_sft.train_lora(data.train, [], lora, base, work / "run")
    steady = [m["tokens_per_s"] for m in result.metrics if m.get("tokens_per_s")][len(result.metrics) // 2:]
    figures |= {"lora_steps": result.steps, "lora_s_per_step": round(result.runtime_s / max(result.steps, 1), 3),
                "lora_tokens_per_s_steady": round(sorted(steady)[len(steady) // 2]) if steady else None,
                "lora_peak_gib": _peak_gib(),
                "train_device": result.device, "kernels": {k: result.kernels[k] for k in ("fla", "use_liger")}}
    # one eval arm, as stages/arms.py registers it (the student's device; batch 64 on CUDA)
    from env0_posttrain.stages.arms import CPU_BATCH, CUDA_BATCH

    alias = register_local_model("check-sft", base, adapter_path=result.adapter_dir, device="auto",
                                 max_batch_size=CUDA_BATCH if cuda else CPU_BATCH).split("/", 1)[1]
    lm = local_model(alias)
    prompts = [first_call_prompt(r) for r in data.train]
    new_tokens = 8 if tiny else 128
    throughput = figures["generate_tokens_per_s"] = {}
    _phase("generation throughput", figures, notes, result_file)
    for batch in (1, 4) if tiny else (1, 16, 64):
        requests = [GenRequest(messages=prompts[i % len(prompts)][0], tools=data.train[i % len(prompts)]["tools"],
                               temperature=0.0, top_p=1.0, max_tokens=new_tokens) for i in range(batch)]
        lm.generate_batch(requests[:1])  # warm
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = lm.generate_batch(requests)
        if cuda:
            torch.cuda.synchronize()
        throughput[f"batch_{batch}"] = round(sum(len(r.completion_ids) for r in out) / (time.perf_counter() - t0), 1)
    _phase("one eval arm", figures, notes, result_file)
    demo_tasks = preset_data("demo", "x")["tasks"] | {"n_train": 4, "n_eval": 4 if tiny else 60}
    tasks = make_task_set(TaskSelection(**demo_tasks)).split("eval")
    eval_spec = EvalSpec(max_steps=4, max_tokens=16 if tiny else 96, temperature=0.0)
    endpoint = ModelEndpoint(model=f"env0-local/{alias}", temperature=0.0, max_tokens=eval_spec.max_tokens)
    settings = AgentSettings.for_eval(eval_spec, max_steps=eval_spec.max_steps)

    async def arm():
        return await asyncio.gather(*[run_episode(t, endpoint, settings, "sft", 0, "check") for t in tasks])

    t0 = time.perf_counter()
    episodes = asyncio.run(arm())
    seconds = time.perf_counter() - t0
    calls = sum(len(e.exchanges) for e in episodes)
    figures["eval_arm"] = {"episodes": len(episodes), "model_calls": calls, "seconds": round(seconds, 2),
                           "calls_per_s": round(calls / seconds, 2), "mean_batch": round(
                               sum(lm.batch_sizes) / max(len(lm.batch_sizes), 1), 1), "device": lm.device}
    notes.append("random weights: pass rates mean nothing here; the eval arm measures the harness on this device")
    if cuda:  # last: a correctness row, and fla's kernels compile for a while on first use
        _phase("fla vs torch", figures, notes, result_file)
        try:
            rel = _fla_vs_torch(tiny)
            figures["fla_vs_torch_rel_err"] = rel
            notes.append(f"fla gated delta rule vs torch: max relative error {max(rel.values()):.3g} "
                         f"({'agrees' if max(rel.values()) < 0.05 else 'DISAGREES: gradients unreliable here'})")
        except Exception as err:  # fla missing or refusing: the row says why, the part goes on
            figures["fla_vs_torch_rel_err"] = f"{type(err).__name__}: {str(err)[:120]}"
    return {"figures": figures, "notes": notes}


def part_bench9b(tiny: bool, result_file: Path | None = None, budgets: tuple[float, ...] = (40.0, 80.0)) -> dict:
    """The 9B LoRA step (bench/gpu_lora_bench.py), the mode the memory plan chooses at 40 and at 80 GiB, each budget
    in a process of its own (a row's model, trainer and kernel caches cannot crowd the next). Each row is written to
    the result file as soon as it is measured, so a time-out keeps the rows before it."""
    notes = [n for n in [fla_guard_note()] if n]
    rows: dict[str, Any] = {}
    if len(budgets) > 1:
        for budget in budgets:
            sub = (result_file or Path(tempfile.mkdtemp())).with_suffix(f".{budget:.0f}.json")
            no_site = ["-S"] if sys.flags.no_site else []
            cmd = [sys.executable, *no_site, str(Path(__file__).resolve()), "--part", "bench9b", "--budget-gib",
                   str(budget), "--result", str(sub)] + (["--cpu-tiny"] if tiny else [])
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            got = json.loads(sub.read_text()) if sub.exists() else {}
            rows |= got.get("figures", {}) or {f"{budget:.0f}GiB": {
                "error": got.get("error") or f"exit {done.returncode}: {done.stdout[-300:]}"}}
            if result_file is not None:
                result_file.write_text(json.dumps({"figures": rows, "notes": notes}, default=str))
        if tiny:
            notes.append("CPU: the tiny shape; the plan has no budget to fill here (no GPU memory)")
        return {"figures": rows, "notes": notes}
    sys.path.insert(0, str(ROOT / "bench"))
    import gpu_lora_bench as bench

    from env0_posttrain.train.gpu.kernels import probe_kernels

    status = probe_kernels()
    if status.cuda and not status.fla:  # the torch fallback takes ~56 s a step: no row would finish in its box
        return {"figures": {"skipped": f"fla unavailable ({status.fla_error})"}, "notes": notes}
    budget = budgets[0]
    args = argparse.Namespace(seq=64 if tiny else 8192, steps=2 if tiny else 3, grad_acc=1 if tiny else 8,
                              batch=1, gpu_memory_gb=budget)
    try:
        r = bench.run_row(args, bench.TINY if tiny else bench.QWEN3_5_9B, True, "chosen", "padded", status)
        rows[f"{budget:.0f}GiB"] = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()
                                    if k in ("checkpointing", "step_s", "model_step_s", "steps_300_min", "peak_gib",
                                             "model_gib", "tokens_per_s", "mfu", "first_step_s")}
    except Exception as err:  # the budget's failure (e.g. OOM, naming the plan) is its row
        rows[f"{budget:.0f}GiB"] = {"error": f"{type(err).__name__}: {str(err)[:400]}"}
    return {"figures": rows, "notes": notes}


# -- the driver --------------------------------------------------------------------------------------------
def run_part(name: str, tiny: bool, box_s: float, work: Path, cmd: list[str] | None = None) -> dict:
    """Run one part in its own process group (`cmd`: this script's `--part NAME`), killed after `box_s`; its row
    either way, with what the part wrote to its result file before it ended."""
    result = work / f"{name}.json"
    result.unlink(missing_ok=True)
    no_site = ["-S"] if sys.flags.no_site else []  # a rehearsal's `python3 -S` holds for its parts too
    cmd = cmd or [sys.executable, *no_site, str(Path(__file__).resolve()), "--part", name, "--result", str(result)] + (
        ["--cpu-tiny"] if tiny else [])
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=box_s)
        status = "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        status = f"timed out after {box_s:.0f} s"
    row = {"part": name, "status": status, "seconds": round(time.time() - t0, 1), "figures": {}, "notes": []}
    if result.exists():
        row |= {k: v for k, v in json.loads(result.read_text()).items() if k in ("figures", "notes", "error")}
    if status != "ok":
        row["log_tail"] = (output or "")[-1200:]
    return row


def table(rows: list[dict]) -> str:
    lines = ["| part | status | s | figures |", "|---|---|---|---|"]
    for r in rows:
        figures = "; ".join(f"{k}: {json.dumps(v, default=str) if isinstance(v, (dict, list)) else v}"
                            for k, v in r.get("figures", {}).items())
        if r.get("error"):
            figures = f"error: {r['error']}" + (f"; {figures}" if figures else "")
        lines.append(f"| {r['part']} | {r['status']} | {r['seconds']} | {figures.replace('|', '/')} |")
    notes = [f"- {r['part']}: {n}" for r in rows for n in r.get("notes", [])]
    return "\n".join(lines + ([""] + notes if notes else []))


def run_check(out: Path, tiny: bool, parts: list[str], budget_s: float, box_s: dict[str, float] | None = None,
              ) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    boxes = (CPU_BOX_S if tiny else BOX_S) | (box_s or {})
    deadline = time.time() + budget_s
    rows = []
    with tempfile.TemporaryDirectory(prefix="env0-check-") as work:
        for name in parts:
            left = deadline - time.time()
            if left < 10:
                rows.append({"part": name, "status": "not run: the time budget was spent", "seconds": 0.0})
                continue
            rows.append(run_part(name, tiny, min(boxes[name], left), Path(work)))
            print(f"{name}: {rows[-1]['status']} in {rows[-1]['seconds']} s", flush=True)
    text = table(rows)
    (out / "device_check.md").write_text(text + "\n")
    (out / "device_check.json").write_text(json.dumps({"cpu_tiny": tiny, "rows": rows}, indent=2, default=str))
    print(text, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu-tiny", action="store_true", help="tiny shapes on CPU: the code path, not the figures")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "device-check-out")))
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma list of {', '.join(PARTS)}")
    ap.add_argument("--budget-s", type=float, default=460.0, help="the whole check's wall-clock budget")
    ap.add_argument("--box", action="append", default=[], metavar="PART=S",
                    help="a part's own time box in seconds, e.g. mid=320 when it runs alone")
    ap.add_argument("--budget-gib", type=float, help=argparse.SUPPRESS)  # internal: bench9b's one budget
    ap.add_argument("--part", help=argparse.SUPPRESS)  # internal: run one part in this process
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if args.part:
        tempfile.tempdir = str(args.result.parent)  # a part's scratch lives in the driver's folder, removed with it
        fn = {"env": part_env, "demo": part_demo, "mid": part_mid, "bench9b": part_bench9b}[args.part]
        try:
            if args.part == "bench9b" and args.budget_gib is not None:
                row = part_bench9b(args.cpu_tiny, args.result, (args.budget_gib,))
            else:
                row = fn(args.cpu_tiny, args.result) if args.part in ("bench9b", "mid") else fn(args.cpu_tiny)
        except Exception as err:
            import traceback

            traceback.print_exc()
            previous = json.loads(args.result.read_text()) if args.result.exists() else {}
            args.result.write_text(json.dumps(previous | {"error": f"{type(err).__name__}: {str(err)[:300]}"},
                                              default=str))
            raise SystemExit(1)
        args.result.write_text(json.dumps(row, default=str))
        return
    unknown = set(args.parts.split(",")) - set(PARTS)
    if unknown:
        raise SystemExit(f"unknown parts {sorted(unknown)}; known: {', '.join(PARTS)}")
    try:
        boxes = {k: float(v) for k, v in (b.split("=", 1) for b in args.box)}
    except ValueError:
        raise SystemExit(f"--box wants PART=SECONDS, got {args.box}") from None
    if unknown := set(boxes) - set(PARTS):
        raise SystemExit(f"--box names unknown parts {sorted(unknown)}; known: {', '.join(PARTS)}")
    run_check(args.out, args.cpu_tiny, [p for p in PARTS if p in args.parts.split(",")], args.budget_s, boxes)


if __name__ == "__main__":
    main()
