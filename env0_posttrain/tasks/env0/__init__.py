"""Run env0 task packages unchanged on our workspace: needles seed it, solve.sh is the oracle, evaluate.py judges.

A package is task.toml (or task.md) + instruction.md + data/needles.py + solution/solve.sh + tests/test.sh.
The compatibility layer lives here only: `package` reads a folder, `seeding` plants its needles, `shapes`
projects our state into env0's /_admin JSON, `server` serves it on loopback, `gws` is the CLI shim and
`runner` ties one run together.
"""

from .package import Env0Error, Env0Package, load_package

__all__ = ["Env0Error", "Env0Package", "load_package"]
