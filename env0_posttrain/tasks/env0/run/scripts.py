"""A package's scripts in its sandbox: the sandbox over a seeded start, and solve.sh or test.sh run as env0 runs
them (copied to /solution or /tests, `bash` from /). A script that fails is an `Env0Error` naming it and the step."""

from __future__ import annotations

from pathlib import Path

from ....sandbox.box import Sandbox
from ....util.tree_removal import remove_tree
from ..package.files import copy_folder
from ..package.load import Env0Error, Env0Package
from ..seed.start import Start
from ..serve.listeners import env0_sandbox

OUTPUT_CAP = 1 << 20  # bytes of a script's stdout / stderr kept (only the tail is reported)


def sandbox(pkg: Env0Package, start: Start) -> Sandbox:
    """The package's sandbox over `start` (enter it with `with`); refusing namespaces becomes the package's error."""
    return env0_sandbox(start.ws, package_dir=pkg.root, manifest=start.manifest, extras=start.extras)

def run_script(step: str, sb: Sandbox, script: Path, timeout: float) -> None:
    """Run solution/solve.sh or tests/test.sh as env0 does: copied to /solution or /tests, `bash` from /."""
    if not script.is_file():
        raise Env0Error(step, script, "missing")
    where = "/" + script.parent.name
    dest = sb.host_path(where)
    for old in dest.iterdir():  # emptied, not replaced: the sandbox has this very folder bound
        remove_tree(old)
    copy_folder(script.parent, dest, sb.package_dir or script.parent.parent)  # links as links, never followed
    try:
        res = sb.run(["bash", sb.path(f"{where}/{script.name}")], timeout=timeout, output_cap=OUTPUT_CAP)
    except RuntimeError as e:  # the sandbox itself went away (its first process ended)
        raise Env0Error(step, script, str(e)) from None
    if res.timed_out:
        raise Env0Error(step, script, f"timed out after {timeout:.0f} s")
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()[-8:]
        raise Env0Error(step, script, f"exit {res.returncode}: " + " | ".join(tail))
