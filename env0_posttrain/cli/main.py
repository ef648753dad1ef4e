"""`env0-posttrain`: create runs, run the demo, open the UI, serve the workspace, validate SFT files.

Heavy imports (Dagster, torch, litellm) happen inside the commands so `--help` stays fast.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from env0_posttrain.cli.base import base_app
from env0_posttrain.cli.errors import OperatingErrors, ensure_writable
from env0_posttrain.orchestration.ui_graphql import DEFAULT_UI_URL, UI_HOST, UI_PORT
from env0_posttrain.util.artifact_http import ARTIFACTS_PORT
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import RunSpec, SpecError, run_id_problem

app = typer.Typer(help=__doc__, no_args_is_help=True, add_completion=False, cls=OperatingErrors)
run_app = typer.Typer(help="Run specs and partitions.", no_args_is_help=True)
sft_app = typer.Typer(help="SFT data tools.", no_args_is_help=True)
ws_app = typer.Typer(help="The mock workspace.", no_args_is_help=True)
app.add_typer(run_app, name="run")
app.add_typer(sft_app, name="sft")
app.add_typer(ws_app, name="workspace")
auto_app = typer.Typer(help="Schedules and sensors: on/off state in the instance; the daemon of `ui` runs them.",
                       no_args_is_help=True)
app.add_typer(auto_app, name="automation")
app.add_typer(base_app, name="base")

DataDir = Annotated[Optional[Path], typer.Option("--data-dir", help="data root (default: ENV0_DATA_DIR or ./data)")]
Verbose = Annotated[bool, typer.Option("--verbose", help="also print Dagster's DEBUG events (every step event)")]


def _fail(msg: str) -> None:
    typer.secho(msg, fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def _check_run_id(run_id: str) -> None:
    if problem := run_id_problem(run_id):
        _fail(problem)


def _checked_spec(paths: Paths, run_id: str) -> RunSpec:
    """The run's spec file, checked before anything runs (no Dagster import, no instance) as `run new` checks a spec:
    a bad run id, a missing, malformed or invalid spec, a package folder that is not there and a teacher litellm
    cannot route each stop the command in one line naming the file and the field."""
    from env0_posttrain.making.new_run import check_spec_file

    _check_run_id(run_id)
    path = paths.spec(run_id)
    if not path.is_file():
        _fail(f"run {run_id!r}: no spec at {path}; `env0-posttrain run new {run_id}` writes one, `run list` lists them")
    try:
        return check_spec_file(path)
    except (SpecError, OSError) as err:
        _fail(str(err))


def _register(paths: Paths):
    """Register a run's partition in the data dir's Dagster instance (what `make_run` calls once the spec is written)."""
    def register(run_id: str) -> None:
        from env0_posttrain.defs.partitions import register_partition
        from env0_posttrain.orchestration.launch import instance_for

        with instance_for(paths) as instance:
            register_partition(instance, run_id)

    return register


def _warn(lines: list[str]) -> None:
    for line in lines:
        typer.secho(f"warning: {line}", fg=typer.colors.YELLOW, err=True)


@run_app.command("new")
def run_new(
    run_id: str,
    preset: Annotated[str, typer.Option(help="demo (offline, minutes: the default, as in the UI's new_run job), demo-rl "
                                     "(the demo plus GRPO), demo-onpolicy (the demo plus on-policy distillation), default "
                                     "(the seeds' recipe: a network teacher and a GPU), seeds / seeds-offline (the seeds' "
                                     "corpus and suites from --set env0.root=PATH)")] = "demo",
    teacher: Annotated[Optional[str], typer.Option(help="litellm model id of the teacher")] = None,
    student: Annotated[Optional[str], typer.Option(help="hub id or local path of the student")] = None,
    set_: Annotated[list[str], typer.Option("--set", help="section.field=value (repeatable)")] = [],
    force: Annotated[bool, typer.Option("--force", help="replace a spec whose run already has built assets")] = False,
    data_dir: DataDir = None,
) -> None:
    """Write data/runs/RUN_ID.yaml and register the run's partition (the UI's new_run job does the same)."""
    from env0_posttrain.making.new_run import make_run

    paths = Paths.from_env(data_dir)
    try:
        made = make_run(paths, run_id, preset=preset, teacher=teacher, student=student, sets=set_, force=force,
                        register=_register(paths))
    except SpecError as err:
        _fail(str(err))
    _warn(made.warnings)
    typer.echo(f"wrote {made.path} and registered partition {made.spec.run_id!r}")


@run_app.command("list")
def run_list(data_dir: DataDir = None) -> None:
    """Run specs on disk, with their last report headline."""
    from env0_posttrain.spec.runspec import load_spec
    from env0_posttrain.store import Store

    paths = Paths.from_env(data_dir)
    store = Store(paths.db, read_only=True)  # reading needs no write access to the data dir
    for p in sorted(paths.runs.glob("*.yaml")):
        try:
            spec = load_spec(p)
        except SpecError as err:
            typer.secho(f"INVALID {err}", fg=typer.colors.RED)
            continue
        rep = store.latest_report(spec.run_id)
        typer.echo(f"{spec.run_id:30s} teacher={spec.teacher.model:28s} {rep['headline'] if rep else '(no report yet)'}")


@run_app.command("materialize", context_settings={"allow_extra_args": True})
def run_materialize(
    ctx: typer.Context,
    run_id: str,
    select: Annotated[list[str], typer.Option(help="asset names: --select a b, --select a,b or --select a "
                                                   "--select b; default: those missing, failed or stale")] = [],
    all_: Annotated[bool, typer.Option("--all", help="materialize every asset, up to date or not")] = False,
    recollect_teacher: Annotated[bool, typer.Option(
        "--recollect-teacher", help="collect a new teacher round even if one finished (paid again)")] = False,
    suite: Annotated[list[str], typer.Option(help="eval suites the eval assets play (repeatable; 'eval' = the "
                                             "tasks.n_eval split); default: every suite")] = [],
    data_dir: DataDir = None,
    verbose: Verbose = False,
) -> None:
    """Materialize a run's assets in this process (the UI shows the run): only what is missing, failed or stale
    unless selected. One suite of one arm: `--select sft_eval_trajectories --suite unseen100`."""
    paths = Paths.from_env(data_dir)
    spec = _checked_spec(paths, run_id)
    if suite:
        from env0_posttrain.spec.suites import eval_suite_names

        known = eval_suite_names(spec)
        if unknown := [s for s in suite if s not in known]:
            _fail(f"--suite {unknown}: run {run_id} has no such eval suite; its suites: {known}")
    selection = _selection(select, ctx.args) or None
    from env0_posttrain.spec.optional_stages import absent_assets, not_applicable_reason

    if refused := [n for n in selection or () if n in absent_assets(spec)]:
        _fail("--select: " + "; ".join(not_applicable_reason(n) for n in refused))
    _materialize_and_print(run_id, paths, selection, verbose, suite, everything=all_,
                           recollect=["teacher"] if recollect_teacher else [])


def _selection(select: list[str], extra: list[str]) -> list[str]:
    """`--select a b` as the help shows it: the words after --select that no option took are more assets (a
    lone option value cannot be a list in click); commas split too. Names are checked against the graph."""
    if extra and not select:
        _fail(f"unexpected arguments {extra}: asset names go after --select")
    names = [n for item in [*select, *extra] for n in item.split(",") if n]
    if names:
        from env0_posttrain.defs.assets import RUN_ASSETS

        known = sorted(a.key.to_user_string() for a in RUN_ASSETS)
        unknown = [n for n in names if n not in known]
        if unknown:
            _fail(f"--select: no asset named {unknown}; the assets are {known}")
    return list(dict.fromkeys(names))


def _materialize_and_print(run_id: str, paths: Paths, select: list[str] | None, verbose: bool = False,
                           suites: list[str] = [], everything: bool = False, recollect: list[str] | None = None) -> None:
    from env0_posttrain.util.console import dagster_log_level, show_logs
    from env0_posttrain.orchestration.launch import instance_for, materialize_run
    from env0_posttrain.store import Store

    show_logs(verbose)
    ensure_writable(paths.root)
    with instance_for(paths) as instance:
        done = materialize_run(run_id, paths, instance, select, log_level=dagster_log_level(verbose),
                               everything=everything, recollect=recollect or (), suites=suites)
    if not done.results:
        others = f"; left to the runs making them now: {done.left_to_others}" if done.left_to_others else ""
        return typer.echo(f"run {run_id}: every asset is up to date; nothing to materialize (--all: all){others}")
    typer.echo("\nmaterialized (why):")
    for k, why in done.reasons.items():
        typer.echo(f"  {k:32s} {why}")
    typer.echo("\nstep timings (s):")
    for k, v in sorted(done.timings.items(), key=lambda kv: -kv[1]):
        typer.echo(f"  {k:32s} {v:8.1f}")
    if done.interrupted:
        _fail(f"run {run_id}: stopped (interrupted); finished episodes and assets are kept, a rerun resumes")
    if not done.success:
        result = done.results[-1]
        from env0_posttrain.orchestration.failures import run_failure_message, step_failures

        failures = step_failures(result)
        for f in failures:  # each step's own error, printed last, where it is seen
            typer.secho(f"\n{f.step_key} failed: " + "\n  ".join(f.lines), fg=typer.colors.RED, err=True)
        if not failures and (msg := run_failure_message(result)):
            typer.secho(f"\n{msg}", fg=typer.colors.RED, err=True)
        _fail(f"run {run_id}: failed steps {[f.step_key for f in failures]} (the UI, `env0-posttrain ui`, has "
              "every step's logs)")
    rep = Store(paths.db).latest_report(run_id)
    if rep:
        typer.echo(f"\nreport: {Path(rep['report_dir']) / 'report.html'}")
        typer.echo(f"        {Path(rep['report_dir']) / 'report.md'}")
        typer.echo(f"headline: {rep['headline']}")


@app.command()
def demo(
    run_id: Annotated[str, typer.Option(help="run id of the demo partition")] = "demo",
    data_dir: DataDir = None,
    verbose: Verbose = False,
) -> None:
    """Create the demo spec (offline oracle teacher, tiny student) and materialize the whole graph."""
    from env0_posttrain.making.new_run import make_run

    paths = Paths.from_env(data_dir)
    try:
        make_run(paths, run_id, preset="demo", force=True, register=_register(paths))
    except SpecError as err:
        _fail(str(err))
    t0 = time.time()
    _materialize_and_print(run_id, paths, None, verbose)
    typer.echo(f"demo wall time: {time.time() - t0:.0f} s")


@app.command()
def doctor(
    spec: Annotated[Optional[Path], typer.Option("--spec", help="a run spec file whose needs decide the exit code")] = None,
    run_id: Annotated[Optional[str], typer.Option("--run", help="a run id under the data root (its spec)")] = None,
    probe: Annotated[bool, typer.Option(help="start one sandbox container to prove it works (a second)")] = True,
    data_dir: DataDir = None,
) -> None:
    """What this machine can run and what is missing, each with the command that fixes it. Exit 1 when something the
    spec (--spec / --run; default: the demo) needs is missing."""
    from rich.console import Console
    from rich.table import Table

    from env0_posttrain.cli.doctor import Machine, Needs, diagnose, failing
    from env0_posttrain.spec.runspec import load_spec

    from env0_posttrain.making.new_run import build_spec

    paths = Paths.from_env(data_dir)
    needs = Needs.of(build_spec("doctor", "demo")[0], "the demo")
    if spec is not None or run_id is not None:
        path = spec if spec is not None else paths.spec(run_id)  # type: ignore[arg-type]
        if run_id is not None:
            _check_run_id(run_id)
        try:
            needs = Needs.of(load_spec(path), str(path))
        except (SpecError, OSError) as err:
            _fail(str(err))
    checks = diagnose(Machine(), needs, paths.root, probe=probe)
    colour = {"ok": "green", "missing": "red", "absent": "yellow", "info": "cyan"}
    table = Table(title=f"env0-posttrain doctor: what {needs.label} needs (needed = yes)")
    for col in ("check", "status", "needed", "detail", "fix"):
        table.add_column(col, overflow="fold")
    for c in checks:
        table.add_row(c.name, f"[{colour[c.status]}]{c.status}[/]", "yes" if c.needed else "", c.detail,
                      f"[bold]{c.fix}[/]" if c.fix else "")
    Console(width=max(120, shutil.get_terminal_size().columns)).print(table)
    bad = failing(checks)
    if bad:
        fixes = "; ".join(f"{c.name}{f' ({c.fix})' if c.fix else ''}" for c in bad)
        typer.secho(f"{needs.label} needs what is missing here: {fixes}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1)


@app.command()
def ui(
    port: Annotated[int, typer.Option(help="port of the web UI")] = UI_PORT,
    host: Annotated[str, typer.Option(help="bind address")] = UI_HOST,
    artifacts_port: Annotated[int, typer.Option(help="port of the artifact server (reports, plots, TensorBoard "
                                                     "logs, read-only)")] = ARTIFACTS_PORT,
    artifacts_url: Annotated[Optional[str], typer.Option(
        help="the artifact server's URL as a browser reaches it, written into asset metadata "
             "(default: http://HOST:ARTIFACTS_PORT)")] = None,
    data_dir: DataDir = None,
) -> None:
    """Start `dagster dev` (web UI + daemon) on HOST:PORT with DAGSTER_HOME under the data root, and beside it the
    artifact server that the metadata's report, explorer, plot and TensorBoard links open."""
    from env0_posttrain.orchestration.launch import REPO_ROOT, prepare_dagster_home
    from env0_posttrain.util.artifact_http import ARTIFACTS_URL_ENV, start_server

    paths = Paths.from_env(data_dir)
    home = prepare_dagster_home(paths)
    try:
        stop_artifacts = start_server(paths.root, host, artifacts_port)
    except OSError as err:
        _fail(f"the artifact server cannot listen on {host}:{artifacts_port} ({err.strerror or err}); pass "
              "--artifacts-port")
    base = (artifacts_url or f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{artifacts_port}").rstrip("/")
    env = dict(os.environ, DAGSTER_HOME=str(home), ENV0_DATA_DIR=str(paths.root), **{ARTIFACTS_URL_ENV: base})
    exe = Path(sys.executable).with_name("dagster")
    cmd = [str(exe), "dev", "-w", str(REPO_ROOT / "workspace.yaml"), "-h", host, "-p", str(port)]
    typer.echo(f"Dagster UI on http://{host}:{port} (DAGSTER_HOME={home}), artifacts on {base}; Ctrl-C stops both")
    # dagster dev started from a script may inherit ignored signals: restore defaults in the child.
    proc = subprocess.Popen(cmd, env=env, preexec_fn=lambda: (signal.signal(signal.SIGINT, signal.SIG_DFL),
                                                              signal.signal(signal.SIGTERM, signal.SIG_DFL)))

    stop_asked: list[float] = []

    def _stop(signum, _frame):
        stop_asked.append(time.monotonic())
        proc.send_signal(signal.SIGINT)  # dagster dev stops its webserver, daemon and code servers on SIGINT

    # SIGINT too, by handler: a shell script's background job starts with SIGINT ignored, and Python then never
    # raises KeyboardInterrupt, so `kill -INT` of this PID would leave the whole tree running.
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        while (rc := proc.poll()) is None:
            try:
                proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                if stop_asked and time.monotonic() - stop_asked[0] > 30:
                    proc.kill()
    finally:
        stop_artifacts()
    raise typer.Exit(0 if rc in (0, -2, 130) else rc)


@app.command()
def backfill(
    teacher: Annotated[list[str], typer.Option("--teacher", help="litellm model id of a new teacher (repeatable)")],
    from_: Annotated[str, typer.Option("--from", help="run id whose spec is cloned per teacher")],
    url: Annotated[str, typer.Option(help="the running Dagster webserver (`env0-posttrain ui`)")] = DEFAULT_UI_URL,
    nightly: Annotated[bool, typer.Option("--nightly", help="the clones join the nightly evals: the source's "
                                          "nightly suites, or its eval split when it has none (refused when it has "
                                          "neither); without it they do not")] = False,
    data_dir: DataDir = None,
) -> None:
    """Clone a run spec per new teacher, register the partitions and launch one Dagster backfill through the
    running webserver's GraphQL API (`env0-posttrain ui`; its daemon runs the backfill). The UI's
    teacher_backfill job does the same from the Launchpad."""
    _check_run_id(from_)
    from env0_posttrain.orchestration.backfill import BackfillError, backfill_teachers

    paths = Paths.from_env(data_dir)
    try:
        info = backfill_teachers(paths, from_, teacher, url=url, nightly=nightly)
    except (BackfillError, SpecError) as err:
        _fail(str(err))
    _warn(info.warnings)
    for rid, model in info.teachers.items():
        typer.echo(f"{rid:40s} teacher={model}")
    typer.echo(f"backfill {info.backfill_id} requested over {len(info.run_ids)} partitions; the daemon runs it "
               "(`env0-posttrain ui` starts one) and the UI lists it under Runs > Backfills")


def _print_automation(rows) -> None:
    for r in rows:
        typer.echo(f"{r.kind:9s} {r.name:38s} {r.status:8s} (default {r.default})")


@auto_app.command("status")
def automation_status_cmd(data_dir: DataDir = None) -> None:
    """Each schedule and sensor with its state now and its default."""
    from env0_posttrain.orchestration.automation import automation_status
    from env0_posttrain.orchestration.launch import instance_for

    with instance_for(Paths.from_env(data_dir)) as instance:
        _print_automation(automation_status(instance))


def _set_automation(names: list[str], running: bool, data_dir: Path | None) -> None:
    from env0_posttrain.orchestration.automation import set_automation
    from env0_posttrain.orchestration.launch import instance_for

    try:
        with instance_for(Paths.from_env(data_dir)) as instance:
            _print_automation(set_automation(instance, names, running))
    except KeyError as err:
        _fail(str(err.args[0]))
    typer.echo("only a running daemon acts on these (`env0-posttrain ui` starts one)")


@auto_app.command("start")
def automation_start(names: Annotated[Optional[list[str]], typer.Argument(help="default: all")] = None,
                     data_dir: DataDir = None) -> None:
    """Turn schedules / sensors on (e.g. nightly_eval_schedule, default_automation_condition_sensor)."""
    _set_automation(names or [], True, data_dir)


@auto_app.command("stop")
def automation_stop(names: Annotated[Optional[list[str]], typer.Argument(help="default: all")] = None,
                    data_dir: DataDir = None) -> None:
    """Turn schedules / sensors off."""
    _set_automation(names or [], False, data_dir)


@sft_app.command("validate")
def sft_validate(path: Path) -> None:
    """Validate a results.jsonl / Prime-SFT JSONL file; every problem names the row and field."""
    from env0_posttrain.sft import validate_file

    report = validate_file(path)
    typer.echo(str(report))
    if not report.ok:
        raise typer.Exit(1)


@sft_app.command("drift")
def sft_drift(
    path: Path,
    tokenizer: Annotated[str, typer.Option(help="the student's tokenizer: a local path or hub id")],
    chat_template: Annotated[Optional[Path], typer.Option(help="a jinja template to render with instead")] = None,
) -> None:
    """Re-render every captured exchange of a results.jsonl with the student's chat template; exit 1 on drift."""
    from transformers import AutoTokenizer

    from env0_posttrain.sft import drift_check

    tok = AutoTokenizer.from_pretrained(tokenizer)
    if chat_template is not None:
        tok.chat_template = chat_template.read_text()
    report = drift_check(path, tok)
    typer.echo(str(report))
    if not report.ok:
        raise typer.Exit(1)


@ws_app.command("serve")
def workspace_serve(
    host: Annotated[str, typer.Option(help="bind address")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 8765,
    seed: Annotated[int, typer.Option(help="company seed")] = 0,
    no_auth: Annotated[bool, typer.Option("--no-auth", help="answer every call without a token")] = False,
    clock: Annotated[str | None, typer.Option(help="the workspace's clock: frozen[@INSTANT], running[@INSTANT] or "
                                              "host (default: frozen at the seeded instant; docs/SERVE.md)")] = None,
) -> None:
    """Serve Gmail, Calendar, Drive, Docs, Slack and Admin at their real API paths, behind the OAuth server at /auth
    (Google's and Slack's methods need a Bearer token with one of their scopes, as on the real APIs)."""
    from env0_posttrain.util.clock import Clock
    from env0_posttrain.workspace.http_app import serve

    try:
        chosen = Clock.parse(clock) if clock is not None else None
    except ValueError as e:
        _fail(f"--clock: {e}")
    if not no_auth:
        typer.echo(serve_banner(host, port, seed))
    serve(host=host, port=port, seed=seed, gated=not no_auth, clock=chosen)


def serve_banner(host: str, port: int, seed: int) -> str:
    """What an app under test needs against a gated `workspace serve`: the client, the user, a token command."""
    from env0_posttrain.workspace.auth_http import LOCAL_CLIENT, LOCAL_SECRET
    from env0_posttrain.workspace.environment import Workspace

    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    user = Workspace.seeded(seed).me.email
    scopes = ("https://mail.google.com/ https://www.googleapis.com/auth/calendar https://www.googleapis.com/auth/drive "
              "https://www.googleapis.com/auth/documents https://www.googleapis.com/auth/admin.directory.user "
              "chat:write channels:read channels:history users:read")
    return (f"OAuth server: {base}/auth/.well-known/openid-configuration\n"
            f"client id: {LOCAL_CLIENT}   client secret: {LOCAL_SECRET}   user: {user} (password: password123;\n"
            f"  any loopback redirect URI, consent on file: a login_hint skips the consent page)\n"
            f"a token for {user} (any scope Google or Slack lists):\n"
            f"  curl -s {base}/auth/oauth2/token -d grant_type=client_credentials -d client_id={LOCAL_CLIENT} "
            f"-d client_secret={LOCAL_SECRET} -d subject={user} --data-urlencode 'scope={scopes}'\n"
            f"(--no-auth serves every call without a token)")


if __name__ == "__main__":
    app()
