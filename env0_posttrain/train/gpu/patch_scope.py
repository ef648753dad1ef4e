"""Kernel patches stay with the model they were applied to, never with the process.

Liger's `apply_liger_kernel_to_<arch>(model=...)` swaps the instance's modules, but also rebinds names in
transformers' modeling module (`Qwen3RMSNorm`, `Qwen3_5MLP`, `apply_rotary_pos_emb`) and may patch a class's
`forward` or `torch.nn.functional.cross_entropy`. Every model built later in the same process then runs the
Triton kernels too: on CPU they raise (`Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)`),
on CUDA they silently change what the probe or an eval arm computes. `kernel_patches_undone` snapshots those
namespaces before the trainer applies its kernels and puts every rebound name back when training ends; the
trained instance keeps its own swapped modules.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

WATCHED_PREFIXES = ("transformers.models.", "transformers.loss.", "transformers.integrations.")
WATCHED_MODULES = ("torch.nn.functional", "torch.nn.modules.loss")
_MISSING = object()


def _watched() -> list[ModuleType]:
    mods = [m for name, m in list(sys.modules.items())
            if isinstance(m, ModuleType) and (name.startswith(WATCHED_PREFIXES) or name in WATCHED_MODULES)]
    return mods


def _classes_of(module: ModuleType) -> list[type]:
    return [v for v in list(vars(module).values()) if isinstance(v, type) and v.__module__ == module.__name__]


def _snapshot(namespaces: list[Any]) -> list[tuple[Any, dict[str, Any]]]:
    return [(ns, dict(vars(ns))) for ns in namespaces]


def _restore(saved: list[tuple[Any, dict[str, Any]]]) -> list[str]:
    """Rebind every name that the block rebound; returns 'namespace.name' for each. Names the block added (a lazy
    import's submodule, a cache) stay: no kernel library adds names, it rebinds existing ones."""
    undone = []
    for ns, before in saved:
        now = vars(ns)
        for key, value in before.items():
            if key.startswith("__") or now.get(key, _MISSING) is value:
                continue
            try:
                setattr(ns, key, value)
            except (AttributeError, TypeError):
                continue
            undone.append(f"{getattr(ns, '__module__', '')}.{getattr(ns, '__name__', ns)}.{key}".lstrip("."))
    return undone


@contextmanager
def kernel_patches_undone(log: Any = None) -> Iterator[list[str]]:
    """Inside: patch freely. After: transformers' modeling modules, their classes and torch's loss functions are
    as they were before the block. The yielded list is filled with what was put back (for the log)."""
    modules = _watched()
    classes = [c for m in modules for c in _classes_of(m)]
    saved = _snapshot(modules) + _snapshot(classes)
    undone: list[str] = []
    try:
        yield undone
    finally:
        undone.extend(_restore(saved))
        if undone and log is not None:
            log.info("kernel patches undone after training: %s", ", ".join(sorted(set(undone))))
