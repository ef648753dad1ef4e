"""The command line: the typer app (`main.py`, the `env0-posttrain` script) and its one-line operating errors
(`errors.py`). Nothing imports it; runs are made in `making/`, which the code location's jobs share with it."""
