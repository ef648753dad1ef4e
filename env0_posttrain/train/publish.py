"""Opt-in Hub publishing of an adapter, with a model card, and a serving name per adapter revision.

A served adapter name that hot-reload never swapped cost the TITO seed days: the name is
versioned by the adapter's content revision, so a new adapter is a new name.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from env0_posttrain.digests import files_digest

TOKEN_ENV = "HF_TOKEN"
_NAME_OK = re.compile(r"[^A-Za-z0-9._-]+")


class CardInfo(BaseModel):
    """What the model card says: where the adapter came from and how good it is."""

    model_config = ConfigDict(extra="forbid")

    base_model: str
    run_id: str
    dataset_provenance: str = Field(description="teacher, task set, filters: where the SFT rows came from")
    n_train_rows: int
    hyperparameters: dict[str, Any]
    eval_summary: dict[str, Any] = Field(default_factory=dict, description="metric -> value (base vs adapter)")
    train_summary: dict[str, Any] = Field(default_factory=dict)
    license: str = "apache-2.0"


class PublishError(RuntimeError):
    pass


def adapter_revision(adapter_dir: Path) -> str:
    """Content hash of the adapter weights and config: a new adapter always gets a new revision."""
    adapter_dir = Path(adapter_dir)
    return files_digest(sorted((p for p in adapter_dir.iterdir() if p.name.startswith("adapter_")), key=lambda p: p.name),
                        adapter_dir)


def adapter_serving_name(prefix: str, revision: str) -> str:
    """`<prefix>-<revision>`: the name vLLM / SGLang serve the adapter under (a LoRA module name)."""
    if not revision:
        raise ValueError("adapter_serving_name: empty revision")
    name = f"{prefix}-{revision}"
    clean = _NAME_OK.sub("-", name).strip("-")
    if not clean:
        raise ValueError(f"adapter_serving_name: {name!r} has no usable characters")
    return clean


def _table(d: dict[str, Any]) -> str:
    if not d:
        return "_none recorded_\n"
    rows = "\n".join(f"| {k} | {v} |" for k, v in d.items())
    return f"| key | value |\n|---|---|\n{rows}\n"


def render_model_card(info: CardInfo, repo_id: str) -> str:
    """A Hub model card (YAML front matter + Markdown) that PEFT and the Hub both understand."""
    return (
        "---\n"
        f"base_model: {info.base_model}\n"
        "library_name: peft\n"
        f"license: {info.license}\n"
        "tags:\n- lora\n- sft\n- trl\n- env0-posttrain\n"
        "---\n\n"
        f"# {repo_id}\n\n"
        f"LoRA adapter for `{info.base_model}`, trained with TRL SFTTrainer + PEFT by env0-posttrain run `{info.run_id}`.\n\n"
        "## Data provenance\n\n"
        f"{info.dataset_provenance}\n\n"
        f"Training rows: {info.n_train_rows}.\n\n"
        f"## Hyperparameters\n\n{_table(info.hyperparameters)}\n"
        f"## Training\n\n{_table(info.train_summary)}\n"
        f"## Evaluation\n\n{_table(info.eval_summary)}\n"
        "## Use\n\n"
        "```python\nfrom peft import PeftModel\nfrom transformers import AutoModelForCausalLM\n"
        f"base = AutoModelForCausalLM.from_pretrained(\"{info.base_model}\")\n"
        f"model = PeftModel.from_pretrained(base, \"{repo_id}\")\n```\n"
    )


def push_adapter(adapter_dir: Path, repo_id: str, card_info: CardInfo, private: bool = True) -> str:
    """Upload the adapter and its card; returns the Hub commit id. The token comes only from HF_TOKEN."""
    token = os.environ.get(TOKEN_ENV)
    if not token:
        raise PublishError(f"push_adapter: {TOKEN_ENV} is not set; refusing to push {adapter_dir} to {repo_id}")
    adapter_dir = Path(adapter_dir)
    if not (adapter_dir / "adapter_config.json").exists():
        raise PublishError(f"push_adapter: {adapter_dir} is not a PEFT adapter directory (no adapter_config.json)")
    from huggingface_hub import HfApi

    (adapter_dir / "README.md").write_text(render_model_card(card_info, repo_id))
    api = HfApi(token=token)
    api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
    commit = api.upload_folder(
        repo_id=repo_id, folder_path=str(adapter_dir), repo_type="model",
        commit_message=f"env0-posttrain run {card_info.run_id}: adapter {adapter_revision(adapter_dir)}",
        ignore_patterns=["checkpoint-*", "*.tmp"],
    )
    return commit.oid
