"""Loss weights for token rows: first-turn upweighting without repeating rows, and per-token weights.

TRL's SFTTrainer trains pre-tokenised `input_ids`/`labels` rows but has no per-row weight. A row's
`weight` (TitoRow.weight, from `sft.upweight_mode: weight`; or a list, one per input id, as the on-policy
stage's `entity_weight` writes) is spread over its tokens by the collator, and the loss is the token sum of
`weight x cross-entropy` over the same denominator TRL uses (the batch's trained tokens), so weight w counts like w
copies of the row (or of the token) in the step.
"""

from __future__ import annotations

from typing import Any

import torch
from trl import SFTTrainer

WEIGHT_COLUMN = "weight"
TOKEN_WEIGHTS = "loss_weights"


class WeightedCollator:
    """Wraps TRL's collator: pads (or, padding-free, concatenates) each row's weight like its labels."""

    def __init__(self, inner: Any):
        self.inner = inner

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        weights = [e.get(WEIGHT_COLUMN, 1.0) for e in examples]
        batch = self.inner([{k: v for k, v in e.items() if k != WEIGHT_COLUMN} for e in examples])
        labels = batch["labels"]
        per_row = [torch.tensor(w, dtype=torch.float32)[: len(e["input_ids"])] if isinstance(w, list)
                   else torch.full((len(e["input_ids"]),), float(w)) for e, w in zip(examples, weights)]
        if labels.shape[0] == 1 and len(examples) > 1:  # padding-free: one flattened sequence
            per_row = [torch.cat(per_row)]
        out = torch.zeros(labels.shape, dtype=torch.float32)
        for i, w in enumerate(per_row):
            n = min(len(w), labels.shape[1])
            out[i, :n] = w[:n]
        batch[TOKEN_WEIGHTS] = out
        return batch


def weighted_token_loss(logits: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor,
                        num_items_in_batch: Any = None) -> torch.Tensor:
    """sum(weight x CE) over trained next-token positions / trained tokens (or `num_items_in_batch`)."""
    logits = logits[:, :-1, :].float()
    target = labels[:, 1:]
    w = weights[:, 1:].to(logits.device, logits.dtype)
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1),
                                           ignore_index=-100, reduction="none").view_as(target)
    mask = target != -100
    denom = mask.sum() if num_items_in_batch is None else num_items_in_batch
    return (ce * w * mask).sum() / torch.as_tensor(denom, device=ce.device).clamp(min=1)


class WeightedSFTTrainer(SFTTrainer):
    """SFTTrainer whose loss applies the rows' weights; batches without weights take TRL's own loss."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if self.args.packing:
            raise ValueError("per-turn loss weights (sft.upweight_mode 'weight') cannot be packed: "
                             "packing drops the weight column; set lora.packing false")
        self.data_collator = WeightedCollator(self.data_collator)

    def _set_signature_columns_if_needed(self) -> None:
        super()._set_signature_columns_if_needed()
        if WEIGHT_COLUMN not in self._signature_columns:
            self._signature_columns = [*self._signature_columns, WEIGHT_COLUMN]

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        weights = inputs.pop(TOKEN_WEIGHTS, None)
        if weights is None:
            return super().compute_loss(model, inputs, return_outputs=return_outputs,
                                        num_items_in_batch=num_items_in_batch)
        labels = inputs["labels"]
        outputs = model(**{k: v for k, v in inputs.items() if k != "labels"}, use_cache=False)
        loss = weighted_token_loss(outputs.logits, labels, weights, num_items_in_batch)
        if self.args.average_tokens_across_devices and num_items_in_batch is not None:
            loss = loss * self.accelerator.num_processes
        return (loss, outputs) if return_outputs else loss
