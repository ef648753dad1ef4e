"""Which activation checkpointing fits a GPU memory budget: none, every k-th layer, or full + offloading.

Checkpointing trades speed for memory: on an H100 (Qwen3.5-9B shape, seq 8192, batch 1, fla + Liger)
a step took 7.2 s and 75.1 GiB without it, 10.1 s and 22.5 GiB with every layer checkpointed. The
plan takes the fastest option whose predicted peak fits `lora.gpu_memory_gb` (default: the device's),
from a model of the peak fitted to those two measurements (sizes in GiB, T = tokens per micro-batch,
h = hidden size, L = decoder layers, b = bytes per activation element):

    static  = base weights + LoRA weights, grads and Adam states (16 B per trainable parameter, fp32)
    input   = T * h * b              kept by a checkpointed layer (its input)
    layer   = c * T * h * b          kept by a layer that is not checkpointed; rebuilt once, for one
                                     layer at a time, in the backward of a checkpointed layer
    head    = c_head * T * h * b     final norm, TRL's chunked LM head and loss, allocator slack
    peak(n checkpointed) = static + n * input + (L - n) * layer + (n > 0) * layer + head
    offload = static + 5 * input + layer + head   (every layer checkpointed, their inputs in host
                                     memory through TRL's activation offloading, a stash of 5 kept)

Assumptions: activations grow linearly with tokens and hidden size (the 9B fit is scaled, not re-fitted,
for other shapes); every micro-batch is full length (batch x max_seq_length tokens); the layer factor is
an average over DeltaNet and attention layers. Without Liger the measured full-checkpointing peak was
0.5 GiB higher and without fla 2.6 GiB higher: the model adds that to every layer, which can only make
it choose more checkpointing than needed, never less. `HEADROOM_GIB` is left free for the CUDA context
and allocator fragmentation. Layers are picked as transformers' `every_n_layers` does (index % k == 0).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

GIB = 2**30
# The fit (see the module docstring): measured peaks 75.1 GiB (no checkpointing) and 22.5 GiB (every layer).
MEASURED_NO_CKPT_GIB, MEASURED_FULL_CKPT_GIB = 75.1, 22.5
LAYER_FACTOR = {"fla+liger": 28.2, "fla": 36.2, "torch": 69.8}  # hidden-sized tensors kept per token and layer
HEAD_FACTOR = 19.0
OFFLOAD_STASH = 5  # TRL's `max_fwd_stash_size`: checkpoint inputs kept on the GPU while offloading
HEADROOM_GIB = 2.0
OPTIMIZER_BYTES_PER_TRAINABLE = 16  # fp32 LoRA weight, grad, Adam m and v

Mode = Literal["none", "partial", "full", "offload"]


class ModelShape(BaseModel):
    """What the memory model needs to know about a model and its micro-batch."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_params: int
    trainable_params: int
    num_layers: int
    hidden_size: int
    tokens: int = Field(description="tokens per micro-batch: per-device batch x max_seq_length")
    bytes_per_element: int = Field(default=2, description="2 for bf16, 4 for fp32")
    kernels: Literal["fla+liger", "fla", "torch"] = "fla+liger"

    @classmethod
    def of(cls, model, tokens: int, bytes_per_element: int, kernels: str) -> "ModelShape":
        config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
        return cls(
            n_params=sum(p.numel() for p in model.parameters()),
            trainable_params=sum(p.numel() for p in model.parameters() if p.requires_grad),
            num_layers=config.num_hidden_layers, hidden_size=config.hidden_size, tokens=tokens,
            bytes_per_element=bytes_per_element, kernels=kernels,
        )


class MemoryPlan(BaseModel):
    """The checkpointing a run uses, why, and the predicted peaks it was chosen from (recorded with the adapter)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Mode
    every_n_layers: int | None = Field(description="checkpointed layers are those with index % k == 0; None = none")
    checkpointed_layers: int
    activation_offloading: bool
    predicted_peak_gib: float
    budget_gib: float | None
    fits: bool
    source: Literal["memory model", "spec"]
    options_gib: dict[str, float] = Field(default_factory=dict, description="predicted peak of every option tried")

    def describe(self) -> str:
        what = {"none": "no checkpointing", "full": "every layer checkpointed",
                "offload": "every layer checkpointed + activation offloading",
                "partial": f"every k-th layer checkpointed (k={self.every_n_layers}: {self.checkpointed_layers} layers)"}[self.mode]
        budget = f"{self.budget_gib:.1f}" if self.budget_gib is not None else "?"
        return f"{what}: predicted peak {self.predicted_peak_gib:.1f} of {budget} GiB ({self.source})"


def _static_gib(s: ModelShape) -> float:
    return (s.n_params * s.bytes_per_element + s.trainable_params * OPTIMIZER_BYTES_PER_TRAINABLE) / GIB


def _unit_gib(s: ModelShape) -> float:
    return s.tokens * s.hidden_size * s.bytes_per_element / GIB


def predicted_peak_gib(s: ModelShape, checkpointed: int, offload: bool = False) -> float:
    """Peak allocated memory of one training step with `checkpointed` of the model's layers checkpointed."""
    unit = _unit_gib(s)
    layer = LAYER_FACTOR[s.kernels] * unit
    head = HEAD_FACTOR * unit
    if offload:
        return _static_gib(s) + min(OFFLOAD_STASH, s.num_layers) * unit + layer + head
    kept = s.num_layers - checkpointed
    return _static_gib(s) + checkpointed * unit + kept * layer + (layer if checkpointed else 0.0) + head


def checkpointed_layers(num_layers: int, every_n_layers: int) -> int:
    """How many layers transformers checkpoints with `every_n_layers` (those with index % k == 0)."""
    return math.ceil(num_layers / every_n_layers)


def plan_option(s: ModelShape, k: int | None, offload: bool, budget: float | None, source: str = "spec",
                options: dict | None = None) -> MemoryPlan:
    """One option as a plan: `k` = every_n_layers (None: no checkpointing), `offload` with k = 1."""
    n = 0 if k is None else checkpointed_layers(s.num_layers, k)
    peak = predicted_peak_gib(s, n, offload)
    mode: Mode = "offload" if offload else "none" if k is None else "full" if k == 1 else "partial"
    fits = budget is None or peak <= budget - HEADROOM_GIB
    return MemoryPlan(mode=mode, every_n_layers=k, checkpointed_layers=n, activation_offloading=offload,
                      predicted_peak_gib=round(peak, 2), budget_gib=budget, fits=fits, source=source,
                      options_gib=options or {})


def plan_memory(s: ModelShape, budget_gib: float | None, forced: bool | None = None) -> MemoryPlan:
    """The fastest option that fits `budget_gib`: none, then every k-th layer (fewest layers first), then
    every layer, then every layer with offloading. `forced` (the spec's `gradient_checkpointing`) skips the
    choice: True = every layer, False = none. When nothing fits, offloading is chosen and `fits` is False."""
    candidates: list[tuple[int | None, bool]] = [(None, False)]
    seen = set()
    for k in range(s.num_layers, 0, -1):  # larger k: fewer layers checkpointed, faster
        n = checkpointed_layers(s.num_layers, k)
        if n not in seen:
            seen.add(n)
            candidates.append((k, False))
    candidates.append((1, True))
    options = {_label(s, k, off): round(predicted_peak_gib(
        s, 0 if k is None else checkpointed_layers(s.num_layers, k), off), 2) for k, off in candidates}
    if forced is not None:
        return plan_option(s, 1 if forced else None, False, budget_gib, "spec", options)
    for k, off in candidates:
        plan = plan_option(s, k, off, budget_gib, "memory model", options)
        if plan.fits:
            return plan
    return plan


def _label(s: ModelShape, k: int | None, offload: bool) -> str:
    if k is None:
        return "none"
    if offload:
        return "full+offload"
    return "full" if k == 1 else f"every_{k}({checkpointed_layers(s.num_layers, k)} layers)"


def checkpointing_settings(plan: MemoryPlan | None) -> dict:
    """The trainer arguments a plan stands for (`None`: CPU, nothing checkpointed)."""
    if plan is None or plan.mode == "none":
        return {"gradient_checkpointing": False, "gradient_checkpointing_kwargs": None, "activation_offloading": False}
    kwargs = {"use_reentrant": False}
    if plan.every_n_layers and plan.every_n_layers > 1:
        kwargs["every_n_layers"] = plan.every_n_layers
    return {"gradient_checkpointing": True, "gradient_checkpointing_kwargs": kwargs,
            "activation_offloading": plan.activation_offloading}


def device_memory_gib() -> float | None:
    """Total memory of the current CUDA device in GiB, or None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory / GIB
