"""Run the peers' own code on our rows: benchflow's TRL-SFT converter and its Prime-SFT / TRL-SFT validators,
and prime-rl's SFT loader (`SFTDataset._process`: messages -> renderer -> input ids and loss mask).

Runs OUTSIDE the project's imports, with the peers' sources on PYTHONPATH (bench/shell_rows.py prepares them:
the repositories' snapshots unpacked under /tmp/peers, prime-rl's extra dependencies installed with
`pip --target`, never into the project's venv). Only prime-rl's config classes are replaced by a stand-in
module: the real ones import prime-rl's whole orchestrator (verifiers, anthropic ...); LossMaskConfig keeps
prime-rl's defaults (only assistant turns are trained).

    python bench/peers_rows_check.py DIR TOKENIZER_DIR   # DIR/<surface>/{results,prime-sft}.jsonl; prints one JSON line
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path


def _stub(name: str, path: str | None = None, **attrs) -> types.ModuleType:
    mod = types.ModuleType(name)
    if path is not None:
        mod.__path__ = [path]
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


def load_benchflow(src: Path):
    """benchflow's trajectory exporters without its package __init__ (which starts its agent runtime)."""
    _stub("benchflow", str(src / "benchflow"))
    _stub("benchflow.trajectories", str(src / "benchflow" / "trajectories"))
    import benchflow.trajectories.export_prime_sft as prime
    import benchflow.trajectories.export_trl_sft as trl

    return prime, trl


def load_prime_rl_dataset():
    from pydantic import BaseModel

    class LossMaskConfig(BaseModel):  # prime-rl's defaults (configs/sft.py)
        system: bool = False
        user: bool = False
        assistant: bool = True
        tool: bool = False

    _stub("prime_rl.configs")
    _stub("prime_rl.configs.sft", LossMaskConfig=LossMaskConfig, DataConfig=object, SFTDataConfig=object)
    from prime_rl.trainer.sft import data

    return data, LossMaskConfig


def main(root: Path, tokenizer_dir: Path, benchflow_src: Path) -> dict:
    prime, trl = load_benchflow(benchflow_src)
    data, LossMaskConfig = load_prime_rl_dataset()
    from renderers.qwen3 import Qwen3Renderer  # the students are Qwen3-family (create_renderer's registry imports
    from transformers import AutoTokenizer      # every family's extras, e.g. openai_harmony, so it is bypassed)

    renderer = Qwen3Renderer(AutoTokenizer.from_pretrained(tokenizer_dir))
    ds = data.SFTDataset.__new__(data.SFTDataset)  # only _process is used: no dataset, world or workers
    ds.renderer, ds.loss_mask_config, ds.seq_len, ds.multimodal = renderer, LossMaskConfig(), 1 << 20, False
    ds.logger = __import__("logging").getLogger("prime_rl")  # prime-rl logs through loguru, not installed here
    out = {}
    for surface_dir in sorted(p for p in root.iterdir() if (p / "results.jsonl").is_file()):
        results, prime_rows = surface_dir / "results.jsonl", surface_dir / "prime-sft.jsonl"
        trl_out = surface_dir / "benchflow-trl.jsonl"
        stats = trl.export_trl_sft_jsonl(results, trl_out, row_mode="exchange")
        trl_report = trl.validate_trl_sft_jsonl(trl_out)
        prime_report = prime.validate_prime_sft_jsonl(prime_rows)
        samples = [ds._process(json.loads(line)) for line in prime_rows.read_text().splitlines() if line.strip()]
        out[surface_dir.name] = {
            "benchflow_trl_rows": stats.rows_written if hasattr(stats, "rows_written") else trl_report.get("rows"),
            "benchflow_trl_valid_rows": trl_report.get("rows"),
            "benchflow_prime_valid_rows": prime_report.get("rows") if isinstance(prime_report, dict) else prime_report,
            "prime_rl_samples": sum(s is not None for s in samples),
            "prime_rl_trained_tokens": sum(sum(s["loss_mask"]) for s in samples if s is not None),
            "rows": len(samples),
        }
    return out


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))))
