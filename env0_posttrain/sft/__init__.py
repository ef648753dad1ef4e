"""Trajectories -> training rows: results.jsonl, validation, Prime-SFT / TRL conversion, TITO rows.

Plain Python (no Dagster); imports only agent, tasks and runspec. Heavy libraries (datasets,
transformers) are imported where they are used, so validating a file stays fast.
"""

from env0_posttrain.sft.convert import (
    ConversionError,
    ConversionReport,
    convert_both,
    convert_file,
    convert_rows,
    to_prime_rows,
    to_trl_rows,
)
from env0_posttrain.sft.curation import CurationReport, Example, curate, expected_episodes
from env0_posttrain.sft.hf_export import export_parquet, load_trl_jsonl, push_to_hub, to_hf_dataset
from env0_posttrain.sft.results import ResultsRow, results_row, write_results_jsonl
from env0_posttrain.sft.rows import PrimeSFTRow, SourceRef, TrlRow
from env0_posttrain.sft.tito import DriftReport, TitoRow, build_tito_rows, drift_check, write_tito_jsonl
from env0_posttrain.sft.validation import Problem, RowValidationError, ValidationReport, validate_file, validate_rows

__all__ = [
    "ConversionError", "ConversionReport", "CurationReport", "DriftReport", "Example", "PrimeSFTRow",
    "Problem", "ResultsRow", "RowValidationError", "SourceRef", "TitoRow", "TrlRow", "ValidationReport",
    "build_tito_rows", "convert_both", "convert_file", "convert_rows", "curate", "drift_check",
    "expected_episodes", "export_parquet", "load_trl_jsonl", "push_to_hub", "results_row", "to_hf_dataset",
    "to_prime_rows", "to_trl_rows", "validate_file", "validate_rows", "write_results_jsonl",
    "write_tito_jsonl",
]
