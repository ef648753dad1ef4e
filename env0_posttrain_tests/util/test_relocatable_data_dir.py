"""A data dir moved elsewhere works once ENV0_DATA_DIR points at it: the store's paths, the adapter's base
and its model card name places relative to the data root, resolved on read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import LoraSpec
from env0_posttrain.store import Store
from env0_posttrain.train import train_lora
from env0_posttrain.train.model_card import base_of, load_adapter
from env0_posttrain.train.synthetic_rows import make_synthetic_set
from env0_posttrain.train.tiny_student.build import TinyStudentConfig, ensure_tiny_student

STUDENT = TinyStudentConfig(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                            vocab_size=300, pretrain_steps=0)
LORA = LoraSpec(r=4, alpha=8, dropout=0.0, max_seq_length=512, per_device_batch_size=4, grad_accumulation=1,
                max_steps=1, save_steps=1, logging_steps=1, warmup_ratio=0.0, eval_fraction=0.0)


def _logits(model, ids):
    import torch

    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits


def test_paths_are_stored_relative_to_the_root_and_resolved_against_todays_root(tmp_path):
    paths = Paths.from_env(tmp_path / "data")
    inside = paths.models / "tiny-x"
    assert paths.rel(inside) == "models/tiny-x" and paths.resolve("models/tiny-x") == inside
    assert paths.rel("/elsewhere/base") == "/elsewhere/base" and paths.resolve("/elsewhere/base") == Path("/elsewhere/base")
    assert paths.rel("Qwen/Qwen3-0.6B") == "Qwen/Qwen3-0.6B" == paths.model_ref("Qwen/Qwen3-0.6B")  # a hub id stays
    inside.mkdir(parents=True)
    assert paths.model_ref("models/tiny-x") == str(inside)


def test_a_moved_data_dir_reads_back_store_rows_and_loads_the_adapter_on_its_base(tmp_path, monkeypatch):
    old = Paths.from_env(tmp_path / "data")
    data = make_synthetic_set(8, 2, seed=2)
    base = ensure_tiny_student(old.models, data.corpus, data.entities, STUDENT)
    result = train_lora(data.train, [], LORA, base, old.artifacts("r1") / "adapter" / "t1", base_ref=old.rel(base))
    store = Store(old.db)
    train_id = store.start_training("r1")
    store.finish_training(train_id, "finished", str(result.adapter_dir), "rev1", result.model_dump(mode="json", exclude={"metrics"}))
    report_dir = old.artifacts("r1") / "report" / "20260101T000000"
    report_dir.mkdir(parents=True)
    (report_dir / "report.md").write_text("# report\n")
    store.record_report("r1", "headline", "# report\n", str(report_dir), {"n": 1})
    ids = [1, 5, 9, 13]
    before = _logits(load_adapter(result.adapter_dir, old), ids)

    # nothing written names the old place
    stored = store.query("SELECT adapter_path, result_json FROM training_runs") + store.query("SELECT report_dir FROM reports")
    written = [(result.adapter_dir / f).read_text() for f in ("adapter_config.json", "README.md", "training_summary.json")]
    assert not [v for v in [*(c for row in stored for c in row), *written] if str(tmp_path) in str(v)]
    assert json.loads(written[0])["base_model_name_or_path"] == old.rel(base) == f"models/{base.name}"

    new_root = tmp_path / "moved" / "data"
    shutil.move(str(old.root), str(new_root))
    monkeypatch.setenv("ENV0_DATA_DIR", str(new_root))
    new = Paths.from_env()
    training = Store(new.db).latest_training("r1")
    adapter = Path(training["adapter_path"])
    assert adapter == new.root / "artifacts" / "r1" / "adapter" / "t1" / "adapter" and adapter.is_dir()
    assert training["result"]["base_path"] == str(new.models / base.name) == base_of(adapter, new)
    report = Store(new.db).latest_report("r1")
    assert (Path(report["report_dir"]) / "report.md").read_text() == "# report\n"

    moved = load_adapter(adapter, new)  # peft reads the base from the adapter's config, found under the new root
    assert type(moved).__name__ == "PeftModelForCausalLM"
    assert moved.peft_config["default"].base_model_name_or_path == f"models/{base.name}"
    assert _logits(moved, ids).allclose(before), "the same base and adapter weights, from the new place"
