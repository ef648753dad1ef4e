"""Run env0 task packages unchanged on our workspace: needles seed it, solve.sh is the oracle, evaluate.py judges.

A package is task.toml (or task.md) + instruction.md + data/needles.py + solution/solve.sh + tests/test.sh.
The compatibility layer lives here only, as its pipeline: `package` reads a folder, `seed` plants its needles,
`serve` serves our state on env0's surface (its /_admin JSON shapes included), `run` ties one run together, `judge`
runs the package's own verifier, and `corpus` imports a folder of packages as a task set. `services` is the one
table of env0's services every step reads; the commands run in the sandbox (env0_posttrain/sandbox/).
"""

from .package.load import Env0Error, Env0Package, load_package

__all__ = ["Env0Error", "Env0Package", "load_package"]
