"""The fast kernels a CUDA run has, checked before step 1 instead of discovered in the step times.

Without flash-linear-attention (`fla`) the Gated DeltaNet layers of Qwen3.5 take transformers' torch
fallback: correct, but about five times slower (`FLA_COST`). transformers imports `fla` once, when the
model's module is imported, and quietly falls back when the import fails, so the check imports the same
function it looks up. fla 0.6.0 raises in the first backward on Hopper with Triton 3.4 to < 3.7.1 (a
Triton miscompile in the gated `chunk_bwd_dqkwg`) unless tilelang is installed; that is caught here too.
Liger (fused RMSNorm, SwiGLU, rope) is on by default on CUDA. `lora.allow_slow_kernels: true` trains
without the missing kernels instead of stopping.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from pydantic import BaseModel, ConfigDict

from env0_posttrain.spec.runspec import LoraSpec

GPU_INSTALL = "pip install -c constraints.txt -e '.[gpu]'"
FLA_PACKAGE, LIGER_PACKAGE = "flash-linear-attention", "liger-kernel"
FLA_COST = ("measured on an H100 80GB, Qwen3.5-9B shape, seq 8192, batch 1 x grad-acc 8: 56.4 s/step without "
            "it, 11.4 s/step with it (300 steps: 4.70 h instead of 0.95 h)")
LIGER_GAIN = "on the same H100 run: 10.1 s/step with Liger, 11.4 s/step without (peak 22.5 vs 23.0 GiB)"
HOPPER_TRITON_BAD = ((3, 4, 0), (3, 7, 1))  # fla 0.6.0 refuses Triton in [3.4.0, 3.7.1) on Hopper


class KernelError(RuntimeError):
    """A CUDA run would be much slower than it needs to be, or would fail in its first backward."""


class KernelStatus(BaseModel):
    """What is importable and what the device is; probed once per run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cuda: bool
    device_name: str | None = None
    capability: tuple[int, int] | None = None
    fla: bool = False
    fla_error: str | None = None
    liger: bool = False
    flash_attn: bool = False
    causal_conv1d: bool = False
    tilelang: bool = False
    triton: str | None = None


class KernelChoice(BaseModel):
    """The kernels a run uses (recorded with the adapter)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cuda: bool
    linear_attention: bool
    fla: bool
    use_liger: bool
    flash_attn: bool
    causal_conv1d: bool = False
    notes: list[str] = []

    @property
    def keeps_rows_apart(self) -> bool:
        """Whether concatenated rows (padding-free, packing) stay apart in Gated DeltaNet layers: the delta rule
        needs fla (cu_seqlens) and the short convolution causal-conv1d (seq_idx); transformers raises otherwise."""
        return not self.linear_attention or (self.fla and self.causal_conv1d)

    @property
    def memory_kind(self) -> str:
        """Which measured kernel set the memory model should assume."""
        if self.linear_attention and not self.fla:
            return "torch"
        return "fla+liger" if self.use_liger else "fla"


def _fla_import_error() -> str | None:
    """None when transformers will find fla's gated delta rule; else why not."""
    try:
        module = importlib.import_module("fla.ops.gated_delta_rule")
        if getattr(module, "chunk_gated_delta_rule", None) is None:
            return "fla.ops.gated_delta_rule has no chunk_gated_delta_rule"
        return None
    except Exception as err:  # transformers catches every exception here too and falls back
        return f"{type(err).__name__}: {err}"


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def probe_kernels(cuda: bool | None = None) -> KernelStatus:
    import torch

    cuda = torch.cuda.is_available() if cuda is None else cuda
    name = capability = triton = None
    if cuda:
        try:
            name = torch.cuda.get_device_name()
            capability = tuple(torch.cuda.get_device_capability())
        except Exception:  # a monkeypatched or broken CUDA: the check still runs on what is importable
            pass
    if _has("triton"):
        from importlib.metadata import PackageNotFoundError, version

        try:
            triton = version("triton")
        except PackageNotFoundError:
            triton = None
    fla_error = _fla_import_error() if _has("fla") else f"{FLA_PACKAGE} is not installed"
    return KernelStatus(cuda=cuda, device_name=name, capability=capability, fla=fla_error is None, fla_error=fla_error,
                        liger=_has("liger_kernel"), flash_attn=_has("flash_attn"), causal_conv1d=_has("causal_conv1d"),
                        tilelang=_has("tilelang"), triton=triton)


def uses_linear_attention(config: Any) -> bool:
    """Gated DeltaNet (Qwen3.5, Qwen3-Next) layers: the ones fla accelerates."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return "linear_attention" in (getattr(text, "layer_types", None) or [])


def _version_tuple(v: str) -> tuple[int, ...]:
    parts = []
    for p in v.split("+")[0].split(".")[:3]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def check_kernels(lora: LoraSpec, status: KernelStatus, linear_attention: bool) -> KernelChoice:
    """Which kernels the run uses; raises KernelError before any weight is loaded when a CUDA run lacks one."""
    if not status.cuda:
        return KernelChoice(cuda=False, linear_attention=linear_attention, fla=status.fla, use_liger=False,
                            flash_attn=False)
    notes: list[str] = []
    if linear_attention and lora.packing and not (status.fla and status.causal_conv1d):
        # transformers itself raises in the first step: its torch paths cannot take cu_seqlens / seq_idx
        raise KernelError(
            f"`lora.packing: true` on a model with Gated DeltaNet layers needs {FLA_PACKAGE} and causal-conv1d to "
            f"keep the packed rows apart (fla: {status.fla_error or 'ok'}; causal-conv1d: "
            f"{'ok' if status.causal_conv1d else 'not installed; PyPI has no wheel, it builds from source with nvcc'})")
    if linear_attention and not status.fla:
        message = (f"this model's Gated DeltaNet layers need {FLA_PACKAGE} on CUDA ({status.fla_error}); without it "
                   f"they take transformers' torch fallback, {FLA_COST}")
        if not lora.allow_slow_kernels:
            raise KernelError(f"{message}. Install it with `{GPU_INSTALL}`, or set `lora.allow_slow_kernels: true` "
                              "to train slowly anyway.")
        notes.append(message)
    if linear_attention and status.fla and status.capability and status.capability[0] == 9 and status.triton:
        low, high = HOPPER_TRITON_BAD
        if low <= _version_tuple(status.triton) < high and not status.tilelang:
            raise KernelError(
                f"{FLA_PACKAGE} 0.6.0 raises in the first backward on Hopper ({status.device_name}) with Triton "
                f"{status.triton} (a Triton miscompile in the gated chunk_bwd_dqkwg; it needs Triton >= 3.7.1 or "
                f"tilelang). torch 2.13.0 brings Triton 3.7.1: `{GPU_INSTALL}`.")
    use_liger = lora.use_liger is not False
    if use_liger and not status.liger:
        message = f"Liger kernels ({LIGER_PACKAGE}) are not installed; {LIGER_GAIN}"
        if lora.use_liger is True:
            raise KernelError(f"the spec sets `lora.use_liger: true` but {message}. Install it with `{GPU_INSTALL}`.")
        if not lora.allow_slow_kernels:
            raise KernelError(f"{message}. Install it with `{GPU_INSTALL}`, set `lora.use_liger: false`, or set "
                              "`lora.allow_slow_kernels: true`.")
        notes.append(message)
        use_liger = False
    return KernelChoice(cuda=True, linear_attention=linear_attention, fla=status.fla, use_liger=use_liger,
                        flash_attn=status.flash_attn, causal_conv1d=status.causal_conv1d, notes=notes)
