"""Making a run: specs from presets (`presets.py`), checked where they are written, and a backfill's clones
(`new_run.py`). Below the command line and the code location alike, so `run new` / `backfill` and the UI's
`new_run` / `teacher_backfill` jobs make runs through one code path."""
