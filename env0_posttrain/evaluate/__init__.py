"""Same-harness evaluation of base vs adapter: metrics, behaviours, statistics, plots, the report.

Plain Python (no Dagster): the comparison_report stage gathers a `ReportInputs`, calls `build_report` and
attaches `report_metadata`.
"""

from env0_posttrain.evaluate.behaviours import BEHAVIOURS, BehaviourRate, behaviour, behaviour_rates
from env0_posttrain.evaluate.first_action import FirstActionSummary, first_action_eval, score_first_action
from env0_posttrain.evaluate.history import TrendPoint, parse_history
from env0_posttrain.evaluate.metrics import ArmMetrics, arm_metrics, metrics_by
from env0_posttrain.evaluate.report import build_report, report_metadata, trend_points, write_report
from env0_posttrain.evaluate.report_model import ComparisonReport, LedgerEntry, ReportInputs, ReportNumbers
from env0_posttrain.evaluate.statistics import (
    flip_table,
    mcnemar_exact,
    minimum_detectable_effect,
    paired_analysis,
    proportion_estimate,
    two_proportion_test,
)

__all__ = [
    "BEHAVIOURS", "ArmMetrics", "BehaviourRate", "ComparisonReport", "FirstActionSummary", "LedgerEntry",
    "ReportInputs", "ReportNumbers", "TrendPoint", "arm_metrics", "behaviour", "behaviour_rates", "build_report", "first_action_eval",
    "flip_table", "mcnemar_exact", "metrics_by", "minimum_detectable_effect", "paired_analysis", "parse_history",
    "proportion_estimate", "report_metadata", "score_first_action", "trend_points", "two_proportion_test",
    "write_report",
]
