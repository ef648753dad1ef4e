"""The command line: the typer app (`main.py`, the `env0-posttrain` script), its one-line operating errors
(`errors.py`) and the specs its presets write (`presets.py`). Nothing below imports it."""
