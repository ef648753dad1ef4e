"""What a Dagster run worker needs besides the code location: pool waits that sleep and hear termination
(`pool_wait.py`) and the sweep of runs whose process died (`stale_runs.py`). Loaded with the code location, so it
sits below it; the CLI's launch uses it too."""
