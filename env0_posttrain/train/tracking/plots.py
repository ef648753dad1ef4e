"""Training curves as PNG files: train loss, eval loss, GPU utilisation and GPU memory against step."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from env0_posttrain.util.fsutil import atomic_target

PANELS = [
    ("loss", "train loss", "training_loss.png"),
    ("eval_loss", "eval loss", "eval_loss.png"),
    ("gpu_util_pct", "GPU utilisation (%)", "gpu_util.png"),
    ("gpu_mem_gb", "GPU memory (GiB)", "gpu_memory.png"),
]


def plot_training_curves(metrics: Sequence[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One PNG per metric that has at least one value (GPU panels only appear for GPU runs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for key, label, filename in PANELS:
        points = sorted((m["step"], m[key]) for m in metrics if m.get(key) is not None and m.get("step") is not None)
        if not points:
            continue
        fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
        steps, values = zip(*points)
        ax.plot(steps, values, marker="o" if len(points) < 30 else None, linewidth=1.5)
        ax.set_xlabel("step")
        ax.set_ylabel(label)
        ax.set_title(label + " vs step")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = out_dir / filename
        try:
            with atomic_target(path, suffix=".png") as tmp:
                fig.savefig(tmp)
        finally:
            plt.close(fig)
        written.append(path)
    return written
