"""Opt-in Hub publishing of an adapter, with a model card, and a serving name per adapter revision.

A served adapter name that hot-reload never swapped cost the TITO seed days: the name is
versioned by the adapter's content revision, so a new adapter is a new name.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from env0_posttrain.util.digests import files_digest
from env0_posttrain.train.model_card import CardInfo, model_card

TOKEN_ENV = "HF_TOKEN"
_NAME_OK = re.compile(r"[^A-Za-z0-9._-]+")


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


def render_model_card(info: CardInfo, repo_id: str) -> str:
    """The Hub card for `repo_id` (huggingface_hub ModelCard: YAML metadata + Markdown)."""
    return str(model_card(info, repo_id, repo_id))


def push_adapter(adapter_dir: Path, repo_id: str, card_info: CardInfo, private: bool = True) -> str:
    """Upload the adapter and its card; returns the Hub commit id. The token comes only from HF_TOKEN."""
    token = os.environ.get(TOKEN_ENV)
    if not token:
        raise PublishError(f"push_adapter: {TOKEN_ENV} is not set; refusing to push {adapter_dir} to {repo_id}")
    adapter_dir = Path(adapter_dir)
    if not (adapter_dir / "adapter_config.json").exists():
        raise PublishError(f"push_adapter: {adapter_dir} is not a PEFT adapter directory (no adapter_config.json)")
    from huggingface_hub import HfApi

    model_card(card_info, repo_id, repo_id).save(adapter_dir / "README.md")
    api = HfApi(token=token)
    api.create_repo(repo_id, private=private, exist_ok=True, repo_type="model")
    commit = api.upload_folder(
        repo_id=repo_id, folder_path=str(adapter_dir), repo_type="model",
        commit_message=f"env0-posttrain run {card_info.run_id}: adapter {adapter_revision(adapter_dir)}",
        ignore_patterns=["checkpoint-*", "*.tmp"],
    )
    return commit.oid
