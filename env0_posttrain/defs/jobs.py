"""Asset jobs: the whole run, and the nightly eval slice (base + adapter evals and the report)."""

import dagster as dg

from env0_posttrain.defs.assets import EVAL_ASSETS, RUN_ASSETS
from env0_posttrain.defs.partitions import run_partitions

full_run_job = dg.define_asset_job("full_run", selection=RUN_ASSETS, partitions_def=run_partitions)
nightly_eval_job = dg.define_asset_job("nightly_eval", selection=EVAL_ASSETS, partitions_def=run_partitions)
