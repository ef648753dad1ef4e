"""Our workspace state in env0's /_admin/state and /_admin/diff JSON shapes, one projection per service, read from
each service descriptor's env0 face (workspace/services/<service>/env0_shape.py).

The verifiers of env0 packages read these exact keys (e.g. gmail `users.<id>.messages[].isSent`, drive
`files[].parentId`, slack `workspaces.<id>.channel_members`), so each projection follows env0's field names;
diffs are computed between two projections the way env0 computes them (workspace/services/env0_shapes.py).
"""

from __future__ import annotations

from ....workspace.services import registry
from ....workspace.services.env0_shapes import Diff, State

STATE: dict[str, State] = {}
DIFF: dict[str, Diff] = {}


def _refresh() -> None:
    STATE.clear()
    STATE.update({s.name: s.env0.state for s in registry.SERVICES if s.env0 and s.env0.state})
    DIFF.clear()
    DIFF.update({s.name: s.env0.diff for s in registry.SERVICES if s.env0 and s.env0.diff})


registry.watch(_refresh)
