"""The adapter's model card (huggingface_hub ModelCard / ModelCardData) and the base the adapter names.

peft's `save_pretrained` names the base in adapter_config.json and in a README.md card by the path it
was loaded from: an absolute path into the data dir, which breaks once the data dir moves.
`finish_adapter_dir` rewrites both with the name the caller stores (for a base under the data dir,
its path relative to the data root, `Paths.rel`); `load_adapter` resolves that name against the data
root of the day and loads the base and the adapter through peft.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.util.fsutil import atomic_write_text
from env0_posttrain.util.markdown_table import md_table
from env0_posttrain.util.paths import Paths

TEMPLATE = Path(__file__).with_name("templates") / "adapter_card.md.jinja"
TAGS = ["lora", "sft", "trl", "env0-posttrain"]


class CardInfo(BaseModel):
    """What the model card says: where the adapter came from and how good it is."""

    model_config = ConfigDict(extra="forbid")

    base_model: str
    run_id: str = ""
    dataset_provenance: str = Field(default="", description="teacher, task set, filters: where the SFT rows came from")
    n_train_rows: int
    hyperparameters: dict[str, Any]
    eval_summary: dict[str, Any] = Field(default_factory=dict, description="metric -> value (base vs adapter)")
    train_summary: dict[str, Any] = Field(default_factory=dict)
    license: str = "apache-2.0"


def _table(d: dict[str, Any]) -> str:
    return md_table(["key", "value"], list(d.items()), "ll") if d else "_none recorded_"


def model_card(info: CardInfo, title: str, load_name: str):
    """A Hub model card (YAML metadata + Markdown) that PEFT and the Hub both understand."""
    from huggingface_hub import ModelCard, ModelCardData

    data = ModelCardData(base_model=info.base_model, library_name="peft", license=info.license, tags=TAGS)
    return ModelCard.from_template(
        data, template_path=str(TEMPLATE), title=title, load_name=load_name, run_id=info.run_id,
        dataset_provenance=info.dataset_provenance, n_train_rows=info.n_train_rows,
        hyperparameters_table=_table(info.hyperparameters), train_table=_table(info.train_summary),
        eval_table=_table(info.eval_summary))


def finish_adapter_dir(adapter_dir: Path, info: CardInfo) -> None:
    """Name the base as `info.base_model` in adapter_config.json and write README.md as this adapter's card."""
    adapter_dir = Path(adapter_dir)
    config_path = adapter_dir / "adapter_config.json"
    config = json.loads(config_path.read_text())
    config["base_model_name_or_path"] = info.base_model
    atomic_write_text(config_path, json.dumps(config, indent=2, sort_keys=True))
    card = model_card(info, f"{adapter_dir.parent.name} (LoRA adapter)", "<this adapter directory>")  # no absolute path
    atomic_write_text(adapter_dir / "README.md", str(card))


def base_of(adapter_dir: Path, paths: Paths | None = None) -> str:
    """The base named in adapter_config.json, resolved against the data root when it is a relative path there."""
    from peft import PeftConfig

    name = PeftConfig.from_pretrained(str(adapter_dir)).base_model_name_or_path
    return str(paths.model_ref(name)) if paths is not None else name


def load_adapter(adapter_dir: Path, paths: Paths | None = None, **model_kwargs: Any):
    """The base (found through the adapter's config, wherever the data dir now is) with the adapter on it."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(base_of(adapter_dir, paths), **model_kwargs)
    return PeftModel.from_pretrained(base, str(adapter_dir))
