"""The report's SFT-rows note: a suite's training tasks whose rows were not trained on as played.

A task whose row was dropped or cut to windows for `lora.max_seq_length` was not learned from whole, so a suite's
"seen" tasks may not be seen in the sense its gain assumes; the note counts them by why.
"""

from __future__ import annotations

from collections.abc import Sequence


def rows_note(tasks: Sequence, train_ids: set[str], skipped: dict[str, str] | None, max_seq_length: int) -> str | None:
    """The suite's training tasks whose SFT rows were dropped or cut (`skipped`: task id -> why, as sft_rows wrote
    it); None when the suite holds no training task or no record of the skips exists."""
    mine = [t.id for t in tasks if t.id in train_ids]
    if not mine or skipped is None:
        return None
    hit: dict[str, int] = {}
    for tid in mine:
        if tid in skipped:
            hit[skipped[tid]] = hit.get(skipped[tid], 0) + 1
    if not hit:
        return (f"SFT rows: none of this suite's {len(mine)} training tasks lost its row to length or curation "
                f"(lora.max_seq_length {max_seq_length}).")
    return (f"SFT rows of this suite's {len(mine)} training tasks not trained on as played: "
            + ", ".join(f"{n} {why}" for why, n in sorted(hit.items()))
            + f" (lora.max_seq_length {max_seq_length}).")
