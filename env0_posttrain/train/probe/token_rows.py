"""The sanity probe on TITO rows: prompts are the captured prompt ids, so nothing is re-rendered.

Same two signals as the chat-row probe (outputs differ from the base, training loss lower), read
from token rows: the prompt is the row's unmasked prefix and the expected first call is parsed
from the row's completion ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from env0_posttrain.train.generation import TURN_END, load_tokenizer_with_parser, parse_tool_calls
from env0_posttrain.train.rows import rows_to_dataset


def _prompt_and_target(row: dict[str, Any]) -> tuple[list[int], list[int]]:
    labels = row["labels"]
    start = next((i for i, lab in enumerate(labels) if lab != -100), len(labels))
    return list(row["input_ids"][:start]), [t for t in labels[start:] if t != -100]


def greedy_from_ids(model, tok, prompts: list[list[int]], max_new_tokens: int) -> list[str]:
    import torch

    out = []
    model.eval()
    with torch.no_grad():
        for ids in prompts:
            enc = torch.tensor([ids], device=model.device)
            gen = model.generate(input_ids=enc, attention_mask=torch.ones_like(enc), max_new_tokens=max_new_tokens,
                                 do_sample=False, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
            text = tok.decode(gen[0, enc.shape[1]:], skip_special_tokens=False)
            out.append(text.split(TURN_END)[0] + TURN_END if TURN_END in text else text)
    return out


def token_loss(model, rows: Sequence[dict[str, Any]]) -> float:
    import torch

    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for r in rows:
            ids = torch.tensor([r["input_ids"]], device=model.device)
            labels = torch.tensor([r["labels"]], device=model.device)
            n = int((labels[0, 1:] != -100).sum())
            if n:
                total += float(model(input_ids=ids, labels=labels).loss) * n
                count += n
    return total / max(count, 1)


def token_sanity_probe(base_path: str | Path, adapter_path: str | Path, rows: Sequence[dict[str, Any]],
                       n: int = 8, max_new_tokens: int = 96, device: str = "cpu"):
    from peft import PeftModel

    from env0_posttrain.util.devices import load_causal_lm

    from env0_posttrain.train.probe.verdict import probe_verdict

    data = [dict(r) for r in rows_to_dataset(list(rows)[:n], "probe_rows")]
    tok = load_tokenizer_with_parser(base_path)
    prompts, expected = [], []
    for r in data:
        prompt, target = _prompt_and_target(r)
        prompts.append(prompt)
        calls = parse_tool_calls(tok, tok.decode(target, skip_special_tokens=False))
        expected.append(calls[0] if calls else None)
    base = load_causal_lm(base_path, device)
    base_out = greedy_from_ids(base, tok, prompts, max_new_tokens)
    base_loss = token_loss(base, data)
    tuned = PeftModel.from_pretrained(base, str(adapter_path))
    tuned_out = greedy_from_ids(tuned, tok, prompts, max_new_tokens)
    tuned_loss = token_loss(tuned, data)
    return probe_verdict(tok, base_out, tuned_out, expected, base_loss, tuned_loss)
