"""Process-wide state a stage sets for its workers must not leak from one test into the next."""

import os

import pytest

# run/context.use_env0 exports the spec's env0 checkout and package folder to this process's environment (for
# the worker processes a stage starts) and takes them back for a spec without them (util/process_env.py); tests that
# call use_source or set these themselves are put back here too.
_STAGE_ENV = ("ENV0_ROOT", "ENV0_TASKS_SOURCE")


@pytest.fixture(autouse=True)
def _restore_stage_environment():
    before = {k: os.environ.get(k) for k in _STAGE_ENV}
    yield
    for k, v in before.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
