"""`env0-posttrain base`: the tiny base students shipped in the repository, rebuilt from their recipe on demand."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Annotated

import typer

base_app = typer.Typer(help="The tiny base student shipped in the repository (train/tiny_student/shipped/).",
                       no_args_is_help=True)


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


@base_app.command("rebuild")
def base_rebuild(
    preset: Annotated[str, typer.Option(help="the preset whose tiny student is rebuilt")] = "demo",
    write: Annotated[bool, typer.Option("--write", help="ship the rebuilt student (replaces the shipped files and "
                                                         "their manifest entry)")] = False,
    threads: Annotated[int | None, typer.Option(help="torch threads of the pre-training (default: the shipped "
                                                     "student's, else this machine's cores)")] = None,
) -> None:
    """Pre-train the preset's tiny base from its recipe (no shipped copy used; minutes) and say whether it reproduces
    the shipped one byte for byte; --write ships it instead. Exit 1 when it differs and --write was not given."""
    from env0_posttrain.making.new_run import build_spec
    from env0_posttrain.spec.runspec import SpecError
    from env0_posttrain.stages.base_model import TINY_STUDENTS, tiny_recipe
    from env0_posttrain.tasks import make_task_set
    from env0_posttrain.train.tiny_student import shipped
    from env0_posttrain.train.tiny_student.build import ensure_tiny_student, student_digest
    from env0_posttrain.util import torch_threads
    from env0_posttrain.util.devices import device_label

    try:
        spec, _ = build_spec("rebuild", preset, None, None, ())
    except (SpecError, KeyError, ValueError) as err:
        typer.secho(str(err), fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from None
    if spec.student.model not in TINY_STUDENTS:
        typer.secho(f"preset {preset!r}: its student {spec.student.model!r} is not a tiny student", err=True)
        raise typer.Exit(2)
    task_set = make_task_set(spec.tasks)
    corpus, entities, config = tiny_recipe(spec, sorted(task_set.split("train"), key=lambda t: t.id))
    recipe = student_digest(corpus, entities, config)
    entry = shipped.find_shipped(recipe, config.architecture)
    n = threads or (entry.torch_threads if entry else torch_threads.allowed_cores())
    os.environ[torch_threads.ENV] = str(n)
    typer.echo(f"rebuilding {preset}'s tiny student (recipe {recipe}, {config.pretrain_steps} pre-training steps, "
               f"{n} torch threads); shipped: {entry.name if entry else 'nothing for this recipe'}")
    with tempfile.TemporaryDirectory(prefix="env0-base-rebuild-") as tmp:
        built = ensure_tiny_student(Path(tmp), corpus, entities, config, report_to=[], use_shipped=False)
        outcome = shipped.rebuild(built, recipe, n, device_label("cpu"), _commit(), write=write)
    if outcome.shipped_digest is None:
        typer.echo(f"built {outcome.name} (files {outcome.built_digest}); nothing was shipped for it")
    elif outcome.same:
        typer.echo(f"same weights as the shipped {outcome.name} (files {outcome.built_digest}, manifest "
                   f"{outcome.shipped_digest}: only {', '.join(outcome.differing) or 'nothing'} differs)")
    else:
        typer.echo(f"differs from the shipped student: rebuilt {outcome.name} files {outcome.built_digest}, shipped "
                   f"{entry.name if entry else '?'} {outcome.shipped_digest} (differing: "
                   f"{', '.join(outcome.differing[:6])}); other kernels or thread count give other weights")
    if outcome.written:
        typer.echo(f"shipped: {shipped.SHIPPED_ROOT / outcome.name} and {shipped.SHIPPED_ROOT / shipped.MANIFEST}")
    elif outcome.shipped_digest is not None and not outcome.same:
        raise typer.Exit(1)
