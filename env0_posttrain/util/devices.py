"""Which device a local student runs on, and in which dtype: one rule for every model a run loads.

`student.device` names it for the base pre-training's neighbours: LoRA training, the sanity probe, the
first-call checkpoint choice, the base / sft / rl eval arms and GRPO's policy all load the student here, so a
process never trains on one device and probes or serves on another. `auto` is CUDA when torch sees a GPU.
On CUDA models run in bf16 where the GPU has it (fp32 otherwise); on CPU in fp32, as they always did.
"""

from __future__ import annotations

from typing import Any, Literal

DeviceSetting = Literal["auto", "cpu", "cuda"]
DEVICE_DOC = ("where every local model of the run trains and runs (LoRA, the probe, the eval arms, GRPO): "
              "'auto' = CUDA when torch sees a GPU, else CPU")


class DeviceError(RuntimeError):
    """The spec names a device this machine does not have."""


def resolve_device(setting: str | None = "auto") -> str:
    """'cuda' or 'cpu' for a `student.device` setting; `cuda` on a machine without a GPU is refused by name."""
    import torch

    setting = setting or "auto"
    if setting == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if setting == "cuda" and not torch.cuda.is_available():
        raise DeviceError("student.device is 'cuda' but torch sees no CUDA GPU on this machine; set it to 'auto' or "
                          "'cpu'")
    if setting not in ("cpu", "cuda"):
        raise DeviceError(f"student.device must be 'auto', 'cpu' or 'cuda', got {setting!r}")
    return setting


def model_dtype(device: str) -> Any:
    """bf16 on a CUDA GPU that has it, else fp32 (CPU models keep the digits they always had)."""
    import torch

    if device.startswith("cuda") and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def device_label(device: str) -> str:
    """The device as a report names it: 'cpu (AVX512 kernels)', or 'cuda (NVIDIA H100 80GB HBM3)'.

    On CPU the kernels torch dispatches to (AVX2, AVX512, ...: the machine's vector ISA, or ATEN_CPU_CAPABILITY)
    add floats in a different order, so the same spec and seed train to other weights on another CPU family: the
    tiny student's pre-training loss differs in the fourth digit within 200 steps, and the demo's adapter passes
    a few eval episodes more or fewer. A report names them so that two runs' digits are compared like for like."""
    import torch

    if not device.startswith("cuda"):
        return f"{device} ({torch.backends.cpu.get_cpu_capability()} kernels)"
    try:
        return f"{device} ({torch.cuda.get_device_name()})"
    except Exception:  # a device that went away between the run and the report still has its kind
        return device


def load_causal_lm(path: Any, device: str, adapter: Any = None, trainable: bool = False):
    """A base (and optionally a PEFT adapter on it) loaded straight onto `device` in `model_dtype(device)`."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=model_dtype(device)).to(device)
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter), is_trainable=trainable).to(device)
    return model
