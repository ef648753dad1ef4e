"""TRL rows in, a `datasets.Dataset` out, without the schema merging that silently changes prompts.

`datasets` merges struct schemas across rows and injects null keys into `tools` and tool-call
arguments (FIELD-NOTES), so both columns are stored as `Json()`. The Qwen3.5 template needs
tool-call arguments as dicts: JSON-string arguments (the agent records' wire shape) are decoded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


class RowError(ValueError):
    """A training row that cannot be used; the message names the source, the row and the field."""


def normalise_row(row: dict[str, Any], index: int, source: str = "rows") -> dict[str, Any]:
    where = f"{source}[{index}]"
    if not isinstance(row, dict):
        raise RowError(f"{where}: a row must be a mapping, got {type(row).__name__}")
    if "input_ids" in row:
        return _token_row(row, where)
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RowError(f"{where}.messages: a non-empty list of chat messages is required")
    tools = row.get("tools")
    if isinstance(tools, str):
        try:
            tools = json.loads(tools)
        except ValueError as err:
            raise RowError(f"{where}.tools: not valid JSON ({err})") from None
    if tools is not None and not isinstance(tools, list):
        raise RowError(f"{where}.tools: a list of OpenAI function tools is required")
    out_messages = []
    has_assistant = False
    for j, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in {"system", "user", "assistant", "tool"}:
            raise RowError(f"{where}.messages[{j}].role: must be one of system/user/assistant/tool")
        m = dict(m)
        if m["role"] == "assistant":
            has_assistant = True
            m["tool_calls"] = [_call(c, f"{where}.messages[{j}].tool_calls[{k}]") for k, c in enumerate(m.get("tool_calls") or [])] or None
            if m["tool_calls"] is None:
                m.pop("tool_calls")
        out_messages.append(m)
    if not has_assistant:
        raise RowError(f"{where}.messages: no assistant message to learn from")
    return {"messages": out_messages, "tools": tools}


def _call(call: dict[str, Any], where: str) -> dict[str, Any]:
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not fn.get("name"):
        raise RowError(f"{where}.function.name: missing")
    args = fn.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError as err:
            raise RowError(f"{where}.function.arguments: not valid JSON ({err})") from None
    if not isinstance(args, dict):
        raise RowError(f"{where}.function.arguments: must be an object, got {type(args).__name__}")
    return {**call, "type": "function", "function": {"name": fn["name"], "arguments": args}}


def _token_row(row: dict[str, Any], where: str) -> dict[str, Any]:
    """TITO rows: token ids exactly as sampled, with labels (-100 = ignore) or a completion mask, and the
    row's loss weight (TitoRow.weight, default 1), which train.weighted_loss applies to its tokens."""
    ids = row["input_ids"]
    if not isinstance(ids, list) or not ids or not all(isinstance(i, int) for i in ids):
        raise RowError(f"{where}.input_ids: a non-empty list of ints is required")
    weight = _weight(row.get("weight", 1.0), len(ids), where)
    if "labels" in row:
        if len(row["labels"]) != len(ids):
            raise RowError(f"{where}.labels: length {len(row['labels'])} != input_ids length {len(ids)}")
        return {"input_ids": ids, "labels": row["labels"], "weight": weight}
    mask = row.get("completion_mask") or row.get("assistant_masks")
    if mask is None or len(mask) != len(ids):
        raise RowError(f"{where}.completion_mask: required, same length as input_ids")
    return {"input_ids": ids, "labels": [t if m else -100 for t, m in zip(ids, mask)], "weight": weight}


def _positive(w: Any) -> bool:
    return not isinstance(w, bool) and isinstance(w, (int, float)) and w > 0 and w != float("inf")


def _weight(weight: Any, n: int, where: str) -> float | list[float]:
    """A row's loss weight: one number for all its tokens, or one per token (as long as input_ids)."""
    if isinstance(weight, list):
        if len(weight) != n or not all(_positive(w) for w in weight):
            raise RowError(f"{where}.weight: a per-token weight list needs {n} positive numbers (one per input id)")
        return [float(w) for w in weight]
    if not _positive(weight):
        raise RowError(f"{where}.weight: a positive number is required, got {weight!r}")
    return float(weight)


def rows_to_dataset(rows: Sequence[dict[str, Any]], source: str = "rows"):
    from datasets import Dataset, Features, Json, Value
    from datasets import Sequence as Seq

    norm = [normalise_row(r, i, source) for i, r in enumerate(rows)]
    if not norm:
        raise RowError(f"{source}: no rows")
    kinds = {"input_ids" in r for r in norm}
    if len(kinds) > 1:
        raise RowError(f"{source}: mixes message rows and token (TITO) rows")
    if "input_ids" in norm[0]:
        features = {"input_ids": Seq(Value("int64")), "labels": Seq(Value("int64"))}
        if any(isinstance(r["weight"], list) for r in norm):  # per-token weights: every row as a list
            features["weight"] = Seq(Value("float64"))
            norm = [r if isinstance(r["weight"], list) else {**r, "weight": [r["weight"]] * len(r["input_ids"])}
                    for r in norm]
        elif any(r["weight"] != 1.0 for r in norm):  # unweighted rows train through TRL's own loss, unchanged
            features["weight"] = Value("float64")
        else:
            norm = [{k: v for k, v in r.items() if k != "weight"} for r in norm]
        return Dataset.from_list(norm, features=Features(features))
    return Dataset.from_list(norm, features=Features({"messages": Json(), "tools": Json()}))
