"""The command line: the typer app (`main.py`, the `env0-posttrain` script), its one-line operating errors
(`errors.py`), the presets it reads from spec/presets/ (`presets.py`) and how a run is made (`new_run.py`). Nothing below
imports it, except the code location's `new_run` and `teacher_backfill` jobs, which make runs through
`new_run.py` (and so `presets.py`) exactly as `run new` and `backfill` do."""
