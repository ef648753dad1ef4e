"""The one Definitions object of the code location `env0_posttrain`: everything the defs folder declares
(assets, checks, jobs, schedules, sensors), plus the resources and the executor they run with.

What every asset shares (the run_id partitions, eager automation, rollout retries, pools, code versions)
is applied once, by `defs.assets.run_asset`; nothing is listed twice here.
"""

import warnings

import dagster as dg

import env0_posttrain.defs as defs_folder
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.defs.spec_executor import spec_stages_executor
from env0_posttrain.run_worker.pool_wait import install

install()  # a run worker waiting on a pool sleeps and hears its termination (run_worker/pool_wait.py)

CODE_LOCATION = "env0_posttrain"


def _load() -> dg.Definitions:
    """One Definitions object at module scope (Dagster refuses two), so the folder's is merged inside here."""
    with warnings.catch_warnings():  # the folder loader is marked preview in Dagster 1.13; test_definitions pins it
        warnings.simplefilter("ignore", dg.PreviewWarning)
        declared = dg.load_definitions_from_package_module(defs_folder)
    return dg.Definitions.merge(declared, dg.Definitions(
        resources={"env0": Env0Resource(), "pipes_client": dg.PipesSubprocessClient()},
        executor=spec_stages_executor.configured({"max_concurrent": 2}),  # leaves out optional stages a spec lacks
    ))


defs = _load()
