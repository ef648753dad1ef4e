"""How fast and how briefly the command line refuses bad input: each case runs as a subprocess in a fresh data dir,
N times; the table gives the median wall seconds, the exit status and how many lines it printed.

    python bench/cli_refusals_bench.py [--repeat 5]

The CLI run is `python -m env0_posttrain.cli.main` of whatever `env0_posttrain` the interpreter imports (PYTHONPATH can
point it at another checkout, to compare two versions on the same machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPECS = {  # data/runs/<file> written before the command
    "malformed": ("r1.yaml", "run_id: r1\nlora: [1,\n"),
    "unknown field": ("r1.yaml", "run_id: r1\nlora:\n  rank: 4\n"),
    "infinite value": ("r1.yaml", "run_id: r1\nlora:\n  learning_rate: .inf\n"),
}
CASES = [
    ("run new .", ["run", "new", "."], None),
    ("run new .. ", ["run", "new", ".."], None),
    ("run new --set lora.learning_rate=.inf", ["run", "new", "x", "--set", "lora.learning_rate=.inf"], None),
    ("run new --set lora.max_steps=10**23", ["run", "new", "x", "--set", f"lora.max_steps={10**23}"], None),
    ("run materialize: no spec", ["run", "materialize", "r1"], None),
    ("run materialize: malformed YAML", ["run", "materialize", "r1"], "malformed"),
    ("run materialize: unknown field", ["run", "materialize", "r1"], "unknown field"),
    ("run materialize: learning_rate .inf", ["run", "materialize", "r1"], "infinite value"),
]


def one(args: list[str], spec: str | None) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as root:
        if spec is not None:
            name, text = SPECS[spec]
            (Path(root) / "runs").mkdir()
            (Path(root) / "runs" / name).write_text(text)
        env = dict(os.environ, DAGSTER_DISABLE_TELEMETRY="1", LITELLM_LOCAL_MODEL_COST_MAP="True",
                   HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "env0_posttrain.cli.main", *args, "--data-dir", root], env=env,
                              capture_output=True, text=True, timeout=600)
        wall = time.perf_counter() - t0
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    return wall, done.returncode, len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    which = subprocess.run([sys.executable, "-c", "import env0_posttrain; print(env0_posttrain.__file__)"],
                           capture_output=True, text=True).stdout.strip()
    print(f"env0_posttrain: {which}; load average {os.getloadavg()[0]:.1f}; {args.repeat} runs per case\n")
    print("| command | median s | exit status | lines printed |")
    print("|---|---:|---:|---:|")
    for label, argv, spec in CASES:
        runs = [one(argv, spec) for _ in range(args.repeat)]
        print(f"| {label} | {statistics.median(r[0] for r in runs):.2f} | {runs[-1][1]} | {runs[-1][2]} |", flush=True)


if __name__ == "__main__":
    main()
