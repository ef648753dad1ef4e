"""Turn the code location's schedules and sensors on or off, as `dagster schedule/sensor start|stop` do.

Their on/off state lives in the Dagster instance (data/dagster_home), keyed by code location,
repository and name, and only a running daemon acts on it (`env0-posttrain ui` starts one). The
code location is loaded in this process (`dagster schedule start -w workspace.yaml` does the same
through a code server and took about a minute here, this ~10 s) and the state is stored under the
origin workspace.yaml gives it, so the daemon of `dagster dev`, the UI and `dagster sensor list`
all read it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import dagster as dg
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteInstigatorOrigin, RemoteRepositoryOrigin
from dagster._core.scheduler.instigation import InstigatorState, InstigatorStatus
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

from env0_posttrain.definitions import CODE_LOCATION

MODULE = "env0_posttrain.definitions"


@dataclass(frozen=True)
class Instigator:
    name: str
    kind: str  # "schedule" or "sensor"
    default: str  # RUNNING or STOPPED: what it is until someone starts or stops it
    status: str  # what the instance says now


@contextmanager
def _repository(instance: dg.DagsterInstance) -> Iterator:
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(executable_path=sys.executable, module_name=MODULE), location_name=CODE_LOCATION)
    with origin.create_location(instance) as location:
        (repo,) = location.get_repositories().values()
        yield repo


def _is_schedule(remote) -> bool:
    return hasattr(remote, "cron_schedule")


def _remote(repo, name: str):
    if repo.has_schedule(name):
        return repo.get_schedule(name)
    if repo.has_sensor(name):
        return repo.get_sensor(name)
    known = sorted([s.name for s in repo.get_schedules()] + [s.name for s in repo.get_sensors()])
    raise KeyError(f"no schedule or sensor named {name!r}; known: {known}")


def _describe(instance: dg.DagsterInstance, remote) -> Instigator:
    kind = "schedule" if _is_schedule(remote) else "sensor"
    state = instance.get_instigator_state(remote.get_remote_origin_id(), remote.selector_id)
    default = remote.default_status.value if remote.default_status else "STOPPED"
    if state is None or state.status == InstigatorStatus.DECLARED_IN_CODE:
        status = default
    else:
        status = "RUNNING" if state.is_running else "STOPPED"
    return Instigator(remote.name, kind, default, status)


def automation_status(instance: dg.DagsterInstance) -> list[Instigator]:
    with _repository(instance) as repo:
        remotes = [*repo.get_schedules(), *repo.get_sensors()]
        return [_describe(instance, r) for r in sorted(remotes, key=lambda r: r.name)]


def set_automation(instance: dg.DagsterInstance, names: Sequence[str], running: bool) -> list[Instigator]:
    """Start (or stop) the named schedules and sensors, every one when `names` is empty."""
    with _repository(instance) as repo:
        remotes = [_remote(repo, n) for n in names] or [*repo.get_schedules(), *repo.get_sensors()]
        for r in remotes:
            schedule = _is_schedule(r)
            if running:
                (instance.start_schedule if schedule else instance.start_sensor)(r)
            elif schedule:
                instance.stop_schedule(r.get_remote_origin_id(), r.selector_id, r)
            else:
                instance.stop_sensor(r.get_remote_origin_id(), r.selector_id, r)
            _rehome(instance, r)
        return [_describe(instance, r) for r in remotes]


def _workspace_origin():
    from dagster._core.workspace.load import location_origins_from_yaml_paths

    from env0_posttrain.orchestration.launch import REPO_ROOT

    (origin,) = [o for o in location_origins_from_yaml_paths([str(REPO_ROOT / "workspace.yaml")])
                 if o.location_name == CODE_LOCATION]
    return origin


def _rehome(instance: dg.DagsterInstance, remote) -> None:
    """Store the state under workspace.yaml's origin. The daemons and the UI find it by selector (location,
    repository, name) either way; `dagster sensor list` / `schedule list` look it up by origin."""
    state = instance.get_instigator_state(remote.get_remote_origin_id(), remote.selector_id)
    if state is None:
        return
    repository = RemoteRepositoryOrigin(_workspace_origin(), state.origin.repository_origin.repository_name)
    origin = RemoteInstigatorOrigin(repository, state.origin.instigator_name)
    if origin.get_id() == state.instigator_origin_id:
        return
    instance.delete_instigator_state(state.instigator_origin_id, state.selector_id)
    instance.add_instigator_state(InstigatorState(origin, state.instigator_type, state.status, state.instigator_data))
