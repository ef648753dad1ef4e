"""Rows from both surfaces through the peers' own code: benchflow's converter and validators, prime-rl's SFT loader.

    .venv/bin/python bench/shell_rows.py [--tasks N] [--skill S] [--out DIR] [--peers /tmp/peers]

The oracle teacher (skill S, so failures and mistakes are in the rows too) plays N built-in tasks on the `tools`
and on the `shell` surface; each surface's episodes become results.jsonl and Prime-SFT rows (our conversion), and
bench/peers_rows_check.py runs the peers' code on them in a separate process whose PYTHONPATH holds only the
peers' sources (outside the project). Prepare them once:

    mkdir -p /tmp/peers/benchflow /tmp/peers/prime-rl
    git --git-dir=<benchflow mirror> archive HEAD src | tar -x -C /tmp/peers/benchflow
    git --git-dir=<prime-rl mirror> archive HEAD src | tar -x -C /tmp/peers/prime-rl
    pip install --target /tmp/peers/site --no-deps jaxtyping==0.3.11 torchdata==0.11.0 renderers==0.1.12 \\
        wadler_lindig prime-pydantic-config
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from env0_posttrain.agent import AgentSettings, oracle_endpoint, run_rollouts_sync  # noqa: E402
from env0_posttrain.spec.runspec import SFTDataPolicy  # noqa: E402
from env0_posttrain.sft import convert_rows, results_row  # noqa: E402
from env0_posttrain.sft.jsonl_io import write_jsonl_atomic  # noqa: E402
from env0_posttrain.tasks import generate_tasks  # noqa: E402


def student_tokenizer(rows_text: list[str], out: Path) -> Path:
    """A tokenizer built as the tiny student's is (Qwen3 specials and chat template), saved for the peers."""
    from env0_posttrain.train.tiny_student.tokenizer import build_tokenizer

    build_tokenizer(rows_text, [], vocab_size=2000).save_pretrained(out)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=24)
    ap.add_argument("--skill", type=float, default=0.8)
    ap.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="shell-rows-")))
    ap.add_argument("--peers", type=Path, default=Path("/tmp/peers"))
    args = ap.parse_args()
    tasks = generate_tasks(0, per_template=1)[: args.tasks]
    by_id = {t.id: t for t in tasks}
    texts: list[str] = []
    for surface in ("tools", "shell"):
        eps: list = []
        settings = AgentSettings(max_steps=40, concurrency=4, surface=surface)
        run_rollouts_sync(tasks, "teacher", 1, oracle_endpoint(skill=args.skill), settings, f"rows-{surface}", set(),
                          eps.append, progress=False)
        rows = [results_row(e, by_id[e.task_id]).model_dump(mode="json") for e in eps]
        prime, report = convert_rows(rows, SFTDataPolicy())
        d = args.out / surface
        d.mkdir(parents=True, exist_ok=True)
        write_jsonl_atomic(rows, d / "results.jsonl")
        write_jsonl_atomic(prime, d / "prime-sft.jsonl")
        texts += [json.dumps(r["prompt"] + r["completion"]) for r in rows]
        print(f"{surface}: {len(eps)} episodes, {sum(e.passed for e in eps)} passed, {len(rows)} results rows, "
              f"{len(prime)} Prime-SFT rows (ours)")
    tok = student_tokenizer(texts, args.out / "tokenizer")
    env = {**os.environ, "PYTHONPATH": f"{args.peers / 'site'}:{args.peers / 'prime-rl' / 'src'}"}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "peers_rows_check.py"), str(args.out), str(tok),
                           str(args.peers / "benchflow" / "src")], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr[-3000:])
        return 1
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    cols = ["rows", "benchflow_trl_rows", "benchflow_trl_valid_rows", "benchflow_prime_valid_rows",
            "prime_rl_samples", "prime_rl_trained_tokens"]
    print("\n| surface | " + " | ".join(cols) + " |\n|---|" + "---|" * len(cols))
    for surface, r in sorted(result.items()):
        if surface == "tokenizer":
            continue
        print(f"| {surface} | " + " | ".join(str(r.get(c)) for c in cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
