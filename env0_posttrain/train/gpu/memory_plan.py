"""Which activation checkpointing fills a GPU memory budget: any k of the n decoder layers, optionally with the
checkpointed layers' inputs held in host memory (offloading).

Checkpointing trades speed for memory. On an H100 (Qwen3.5-9B shape, seq 8192, batch 1 x grad-acc 8, fla +
Liger) a step took 7.22 s and 75.1 GiB with no layer checkpointed, 7.98 s / 62.1 GiB with 8, 8.67 s / 48.1 GiB
with 16 and 10.21 s / 22.5 GiB with all 32. The plan takes the fastest option whose predicted peak fits
`lora.gpu_memory_gb` (default: the device's) less a headroom (`headroom_gib`: 8 % of the budget, at least 2 GiB),
from two models fitted to those runs. The headroom covers what torch's allocated-memory count leaves out (the
CUDA context, the caching allocator's fragmentation, Triton's autotuning buffers): no checkpointing, predicted at
74.9 GiB, ran out of memory on a whole 79.2 GiB H100 in two runs, the second alone in its process.

Memory (GiB; T = tokens per micro-batch, h = hidden size, L = decoder layers, b = bytes per activation element,
n = checkpointed layers):

    static  = base weights + LoRA weights, grads and Adam states (16 B per trainable parameter, fp32)
    input   = T * h * b              kept by a checkpointed layer (its input), on the GPU unless offloaded
    layer   = c * T * h * b          kept by a layer that is not checkpointed; rebuilt once, for one
                                     layer at a time, in the backward of a checkpointed layer
    head    = c_head * T * h * b     final norm, TRL's chunked LM head and loss, allocator slack
    peak(n, offload) = static + (0 if offload else n * input) + (L - n) * layer + (n > 0) * layer + head

fitted on the none and all-32 runs, it predicts 63.4 GiB for 8 layers (measured 62.1) and 49.8 for 16 (48.1):
within 2-4 %, on the safe side.

Time (per micro-batch, seconds): the forward + backward of the model, plus the recompute of each checkpointed
layer, plus the copies offloading makes (the inputs out in the forward, back in the backward, on the compute
stream, as transformers' `offload` does):

    base        = 4 * parameters * T / LORA_THROUGHPUT    (forward 2, backward through the frozen weights 2)
    step(n, offload) = base * (1 + RECOMPUTE_SHARE * n / L) + (2 * n * input / HOST_LINK_GIBPS if offload)

RECOMPUTE_SHARE = 0.414 (a layer's recompute costs 41 % of its forward + backward) fits the all-32 run and
predicts 7.97 s for 8 layers (7.98) and 8.71 s for 16 (8.67). LORA_THROUGHPUT is the no-checkpointing run's
(324 TFLOP/s on the H100). HOST_LINK_GIBPS (pinned host copies) is assumed, not measured here: offloading is
chosen only where it is the fastest option that fits, so a wrong value can make the plan pick it too late, not
pick a slower plan that does not fit.

Assumptions: activations grow linearly with tokens and hidden size (the 9B fit is scaled, not re-fitted, for
other shapes); every micro-batch is full length (batch x max_seq_length tokens); the layer factor is an average
over DeltaNet and attention layers; the checkpointed layers are spread evenly (`checkpointed_indices`). Without
Liger the measured full-checkpointing peak was 0.5 GiB higher and without fla 2.6 GiB higher: the model adds
that to every layer, which can only make it choose more checkpointing than needed, never less.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

GIB = 2**30
# The fit (see the module docstring): measured peaks 75.1 GiB (no checkpointing) and 22.5 GiB (every layer).
MEASURED_NO_CKPT_GIB, MEASURED_FULL_CKPT_GIB = 75.1, 22.5
LAYER_FACTOR = {"fla+liger": 28.2, "fla": 36.2, "torch": 69.8}  # hidden-sized tensors kept per token and layer
HEAD_FACTOR = 19.0
HEADROOM_GIB, HEADROOM_SHARE = 2.0, 0.08  # see the module docstring: what allocated memory does not count
OPTIMIZER_BYTES_PER_TRAINABLE = 16  # fp32 LoRA weight, grad, Adam m and v
RECOMPUTE_SHARE = 0.414  # 10.21 s (all 32 layers) / 7.22 s (none) = 1 + 0.414
LORA_THROUGHPUT_TFLOPS = 324.0  # 4 x 8.95e9 parameters x 65,536 tokens / 7.22 s on the H100
HOST_LINK_GIBPS = 20.0  # assumed pinned device<->host copy rate for offloading (not measured)

Mode = Literal["none", "partial", "full"]


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
    num_layers: int
    checkpointed_layers: int
    layers: list[int] = Field(description="indices of the checkpointed decoder layers (spread evenly)")
    offload: bool = Field(description="the checkpointed layers' inputs wait in pinned host memory")
    predicted_peak_gib: float
    predicted_microbatch_s: float = Field(description="time model: one micro-batch's forward + backward")
    slowdown: float = Field(description="predicted time over the no-checkpointing time")
    budget_gib: float | None
    fits: bool
    source: Literal["memory model", "spec"]
    options_gib: dict[str, float] = Field(default_factory=dict, description="predicted peak of every option tried")

    def describe(self) -> str:
        what = {"none": "no checkpointing", "full": "every layer checkpointed",
                "partial": f"{self.checkpointed_layers} of {self.num_layers} layers checkpointed"}[self.mode]
        if self.offload:
            what += " + their inputs offloaded to host memory"
        budget = f"{self.budget_gib:.1f}" if self.budget_gib is not None else "?"
        return (f"{what}: predicted peak {self.predicted_peak_gib:.1f} of {budget} GiB, "
                f"{self.slowdown:.2f}x the step time without checkpointing ({self.source})")


def _static_gib(s: ModelShape) -> float:
    return (s.n_params * s.bytes_per_element + s.trainable_params * OPTIMIZER_BYTES_PER_TRAINABLE) / GIB


def _unit_gib(s: ModelShape) -> float:
    return s.tokens * s.hidden_size * s.bytes_per_element / GIB


def headroom_gib(budget_gib: float) -> float:
    """What a plan leaves free of its budget: memory the device uses that torch's allocated peak does not show."""
    return max(HEADROOM_GIB, HEADROOM_SHARE * budget_gib)


def predicted_peak_gib(s: ModelShape, checkpointed: int, offload: bool = False) -> float:
    """Peak allocated memory of one training step with `checkpointed` of the model's layers checkpointed."""
    unit = _unit_gib(s)
    layer = LAYER_FACTOR[s.kernels] * unit
    head = HEAD_FACTOR * unit
    inputs = 0.0 if offload else checkpointed * unit
    kept = s.num_layers - checkpointed
    return _static_gib(s) + inputs + kept * layer + (layer if checkpointed else 0.0) + head


def predicted_microbatch_s(s: ModelShape, checkpointed: int, offload: bool = False) -> float:
    """Seconds for one micro-batch's forward + backward on an H100-class GPU (the fitted time model)."""
    base = 4 * s.n_params * s.tokens / (LORA_THROUGHPUT_TFLOPS * 1e12)
    copies = 2 * checkpointed * _unit_gib(s) / HOST_LINK_GIBPS if offload else 0.0
    return base * (1 + RECOMPUTE_SHARE * checkpointed / s.num_layers) + copies


def checkpointed_indices(num_layers: int, n: int) -> list[int]:
    """`n` of `num_layers` layer indices, spread evenly from layer 0 (n = L/k gives transformers' every k-th)."""
    return sorted({i * num_layers // n for i in range(n)}) if n else []


def option_label(s: ModelShape, n: int, offload: bool) -> str:
    what = "none" if n == 0 else "full" if n == s.num_layers else f"{n}/{s.num_layers} layers"
    return what + ("+offload" if offload else "")


def plan_option(s: ModelShape, n: int, offload: bool, budget: float | None, source: str = "spec",
                options: dict | None = None) -> MemoryPlan:
    """One option as a plan: `n` layers checkpointed (0: none), their inputs offloaded or not."""
    offload = offload and n > 0
    peak = predicted_peak_gib(s, n, offload)
    seconds = predicted_microbatch_s(s, n, offload)
    mode: Mode = "none" if n == 0 else "full" if n == s.num_layers else "partial"
    fits = budget is None or peak <= budget - headroom_gib(budget)
    return MemoryPlan(mode=mode, num_layers=s.num_layers, checkpointed_layers=n, layers=checkpointed_indices(s.num_layers, n), offload=offload,
                      predicted_peak_gib=round(peak, 2), predicted_microbatch_s=float(f"{seconds:.4g}"),
                      slowdown=round(seconds / predicted_microbatch_s(s, 0), 3), budget_gib=budget, fits=fits,
                      source=source, options_gib=options or {})


def plan_memory(s: ModelShape, budget_gib: float | None, forced: bool | None = None) -> MemoryPlan:
    """The fastest option that fits `budget_gib` (predicted peak + `headroom_gib`), over every number of checkpointed
    layers with and without offloading; ties go to the smaller peak. `forced` (the spec's `gradient_checkpointing`)
    skips the choice: True = every layer, False = none. When nothing fits: the smallest peak, `fits` False."""
    candidates = [(n, off) for n in range(s.num_layers + 1) for off in ((False, True) if n else (False,))]
    options = {option_label(s, n, off): round(predicted_peak_gib(s, n, off), 2) for n, off in candidates}
    if forced is not None:
        return plan_option(s, s.num_layers if forced else 0, False, budget_gib, "spec", options)
    def fits(n: int, off: bool) -> bool:
        return budget_gib is None or predicted_peak_gib(s, n, off) <= budget_gib - headroom_gib(budget_gib)

    def speed(c: tuple[int, bool]) -> tuple[float, float]:
        return predicted_microbatch_s(s, *c), predicted_peak_gib(s, *c)

    fitting = [c for c in candidates if fits(*c)]
    n, off = min(fitting, key=speed) if fitting else min(candidates, key=lambda c: speed(c)[::-1])
    return plan_option(s, n, off, budget_gib, "memory model", options)


def checkpointing_settings(plan: MemoryPlan | None) -> dict:
    """The trainer arguments a plan stands for (`None`: CPU, nothing checkpointed). Transformers enables
    checkpointing on every layer; `LayerCheckpointing` (layer_checkpointing.py) then keeps it on the plan's layers."""
    if plan is None or plan.mode == "none":
        return {"gradient_checkpointing": False, "gradient_checkpointing_kwargs": None, "checkpoint_layers": None}
    kwargs = {"use_reentrant": False, **({"offload": True} if plan.offload else {})}
    return {"gradient_checkpointing": True, "gradient_checkpointing_kwargs": kwargs,
            "checkpoint_layers": list(plan.layers) if plan.mode == "partial" else None}


def device_memory_gib() -> float | None:
    """Total memory of the current CUDA device in GiB, or None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory / GIB


def memory_budget_gib(requested: float | None, device_gib: float | None) -> float | None:
    """The budget the plan fills: the spec's `gpu_memory_gb`, never more than the device holds (an "80 GB" H100
    has 79.2 GiB: a plan for 80 would leave no headroom), else the device's memory."""
    if requested is None:
        return device_gib
    return min(requested, device_gib) if device_gib is not None else requested
