"""TRL rows as a Hugging Face dataset: in memory, as parquet, and (opt-in) on the Hub.

`datasets` merges struct schemas across rows and fills missing keys with nulls, which changes
what the chat template renders (a tool schema gains `"required": null`, a call gains arguments
it never had). Declaring `messages`, `tools` and `source` as `Json()` stores each value as
JSON text, so every row comes back exactly as written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from env0_posttrain.sft.rows import TrlRow
from env0_posttrain.util.fsutil import atomic_target

PARQUET_NAME = "data/train-00000-of-00001.parquet"


def trl_features():
    from datasets import Features, Json

    return Features({"messages": Json(), "tools": Json(), "source": Json()})


def _as_trl(rows: Iterable[TrlRow | dict[str, Any]]) -> list[TrlRow]:
    return [r if isinstance(r, TrlRow) else TrlRow.from_stored(r) for r in rows]


def to_hf_dataset(rows: Iterable[TrlRow | dict[str, Any]]):
    """A `datasets.Dataset` SFTTrainer trains on as is (messages + tools, plus the source reference)."""
    from datasets import Dataset

    trl = _as_trl(rows)
    data = {
        "messages": [r.messages for r in trl],
        "tools": [r.tools for r in trl],
        "source": [r.source.model_dump(mode="json") for r in trl],
    }
    return Dataset.from_dict(data, features=trl_features())


def load_trl_jsonl(path: str | Path):
    """Read a TRL JSONL file written by `convert_file(..., fmt="trl")` with the schema-preserving features."""
    from datasets import load_dataset

    return load_dataset("json", data_files=str(path), split="train", features=trl_features())


def export_parquet(rows: Iterable[TrlRow | dict[str, Any]], out_dir: str | Path) -> Path:
    """Write the dataset as Hub-layout parquet under out_dir; the file appears whole or not at all."""
    out = Path(out_dir) / PARQUET_NAME
    ds = to_hf_dataset(rows)
    with atomic_target(out) as tmp:
        ds.to_parquet(str(tmp))
    return out


def load_parquet(out_dir: str | Path):
    from datasets import load_dataset

    return load_dataset("parquet", data_files=str(Path(out_dir) / PARQUET_NAME), split="train")


def push_to_hub(rows: Iterable[TrlRow | dict[str, Any]], repo_id: str, *, private: bool = True,
                split: str = "train") -> str:
    """Opt-in upload; the token comes only from the HF_TOKEN environment variable."""
    token = os.environ.get("HF_TOKEN")
    if not token:
        raise RuntimeError("push_to_hub needs the HF_TOKEN environment variable; no other token source is used")
    if not repo_id or repo_id.count("/") != 1:
        raise ValueError(f"repo_id must be 'owner/name', got {repo_id!r}")
    ds = to_hf_dataset(rows)
    ds.push_to_hub(repo_id, token=token, private=private, split=split)
    return repo_id

