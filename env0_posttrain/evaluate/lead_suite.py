"""Which suite a run's report details when it has several: the one where a gain would generalize."""

from __future__ import annotations

from collections.abc import Sequence

from env0_posttrain.evaluate.report_model import SuiteNumbers


def lead_suite(numbers: Sequence[SuiteNumbers]) -> tuple[str, str]:
    """The suite the main report's details are about, and the one line that says why: the first unseen suite (in
    the spec's order) with base and adapter episodes, since a gain there is the one that can generalize."""
    paired = [s for s in numbers if s.paired is not None]
    unseen = [s for s in paired if s.seen == "unseen"]
    if unseen:
        why = "the first suite unseen by the training set with base and adapter episodes: a gain there is what generalizes"
        return unseen[0].name, _lead_line(unseen[0].name, why)
    if paired:
        return paired[0].name, _lead_line(paired[0].name, "no unseen suite has base and adapter episodes, so the first "
                                                           "suite that has")
    name = next((s.name for s in numbers if s.passes), numbers[0].name)
    return name, _lead_line(name, "no suite has both base and adapter episodes; the first suite with episodes")


def _lead_line(name: str, why: str) -> str:
    return f"The sections below detail suite {name} ({why}); each suite's full report is linked in its section above."
