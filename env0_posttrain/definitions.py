"""The one Definitions object of the code location `env0_posttrain`."""

import dagster as dg

from env0_posttrain.defs.assets import RUN_ASSETS
from env0_posttrain.defs.jobs import full_run_job, nightly_eval_job
from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.defs.schedules import nightly_eval_schedule
from env0_posttrain.defs.sensors import run_spec_sensor

CODE_LOCATION = "env0_posttrain"

defs = dg.Definitions(
    assets=RUN_ASSETS,
    jobs=[full_run_job, nightly_eval_job],
    schedules=[nightly_eval_schedule],
    sensors=[run_spec_sensor],
    resources={"env0": Env0Resource(), "pipes_client": dg.PipesSubprocessClient()},
    executor=dg.multiprocess_executor.configured({"max_concurrent": 2}),
)
