"""Checkpoint exactly the decoder layers a memory plan names, not only every k-th.

transformers checkpoints the layers it counts as `GradientCheckpointingLayer`s, all of them or every k-th
(`every_n_layers`), and does it when `Trainer.train()` starts. Any k of n layers fills a memory budget more
closely (23 of 32 at 40 GiB on the 9B shape, where every-k-th can only choose 32 or 16), so the trainer
enables checkpointing on every layer and this callback, at the start of training, turns it off on the layers
the plan keeps. A layer that is not checkpointed keeps its activations: same loss and gradients, more memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from transformers import TrainerCallback


def decoder_layers(model: Any) -> list[Any]:
    """The layers transformers counts for checkpointing, in its order (`_set_gradient_checkpointing`)."""
    from transformers.modeling_layers import GradientCheckpointingLayer

    return [m for m in model.modules() if isinstance(m, GradientCheckpointingLayer)]


def set_checkpointed_layers(model: Any, layers: Iterable[int]) -> list[bool]:
    """Checkpoint exactly `layers` (indices into `decoder_layers`); checkpointing must already be enabled (it set
    every layer's checkpoint function). Returns every layer's flag."""
    chosen = set(layers)
    found = decoder_layers(model)
    missing = sorted(i for i in chosen if i >= len(found))
    if missing:
        raise ValueError(f"the memory plan names layers {missing}, but the model has {len(found)} decoder layers")
    for i, layer in enumerate(found):
        if i in chosen and not hasattr(layer, "_gradient_checkpointing_func"):
            raise RuntimeError("set_checkpointed_layers: enable activation checkpointing on the model first")
        layer.gradient_checkpointing = i in chosen
    return [layer.gradient_checkpointing for layer in found]


class LayerCheckpointing(TrainerCallback):
    """At the start of training, after the trainer enabled checkpointing on every layer: keep it on `layers` only."""

    def __init__(self, layers: Iterable[int]):
        self.layers = sorted(set(layers))
        self.flags: list[bool] = []

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if model is not None:
            self.flags = set_checkpointed_layers(model, self.layers)
