"""The blocking sanity probe: refuse to spend on evaluation when the adapter learned nothing.

The TITO seed lost days to an adapter that had silently learned nothing. Two cheap signals catch
it: the adapter's greedy output must differ from the base's on training prompts, and its loss on
training rows must be lower than the base's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from env0_posttrain.train.generation import first_call_prompt, greedy_completions, load_tokenizer_with_parser
from env0_posttrain.train.probe.verdict import ProbeResult, first_call_matches, probe_verdict
from env0_posttrain.train.rows import rows_to_dataset

__all__ = ["ProbeResult", "assistant_loss", "first_call_matches", "probe_verdict", "sanity_probe"]


def assistant_loss(model, tok, rows: Sequence[dict[str, Any]]) -> float:
    """Mean token loss on assistant tokens, masked by the training template's generation markers."""
    import torch
    from trl.chat_template_utils import get_training_chat_template

    template = get_training_chat_template(tok)
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for row in rows_to_dataset(rows, "probe_rows"):
            enc = tok.apply_chat_template(row["messages"], tools=row["tools"], chat_template=template, tokenize=True,
                                          return_dict=True, return_assistant_tokens_mask=True)
            ids = torch.tensor([enc["input_ids"]], device=model.device)
            labels = ids.clone()
            labels[0, torch.tensor(enc["assistant_masks"]) == 0] = -100
            n = int((labels[0, 1:] != -100).sum())
            if n == 0:
                continue
            loss = model(input_ids=ids, labels=labels).loss
            total += float(loss) * n
            count += n
    return total / max(count, 1)


def sanity_probe(base_path: str | Path, adapter_path: str | Path, rows: Sequence[dict[str, Any]], n: int = 8,
                 max_new_tokens: int = 96, device: str = "cpu") -> ProbeResult:
    """Compare base and adapter on the first `n` training rows; `passed` only if both signals agree. Runs on `device`:
    the one the adapter trained on (train_lora's result.device)."""
    from peft import PeftModel

    from env0_posttrain.util.devices import load_causal_lm

    rows = list(rows)[:n]
    if not rows:
        raise ValueError("sanity_probe: no rows to probe with")
    if "input_ids" in rows[0]:  # TITO rows: probe on the captured prompt ids
        from env0_posttrain.train.probe.token_rows import token_sanity_probe

        return token_sanity_probe(base_path, adapter_path, rows, n=n, max_new_tokens=max_new_tokens, device=device)
    tok = load_tokenizer_with_parser(base_path)
    prompts, expected = [], []
    for r in rows_to_dataset(rows, "probe_rows"):
        msgs, call = first_call_prompt(r)
        prompts.append((msgs, r["tools"]))
        expected.append(call)
    base = load_causal_lm(base_path, device)
    base_out = greedy_completions(base, tok, prompts, max_new_tokens)
    base_loss = assistant_loss(base, tok, rows)
    tuned = PeftModel.from_pretrained(base, str(adapter_path))
    tuned_out = greedy_completions(tuned, tok, prompts, max_new_tokens)
    tuned_loss = assistant_loss(tuned, tok, rows)
    return probe_verdict(tok, base_out, tuned_out, expected, base_loss, tuned_loss)
