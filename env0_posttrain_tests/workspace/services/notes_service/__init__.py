"""A service that exists only in the test tree: one folder (this one) whose descriptor, once registered, must be
served, listed as tools and reachable on env0's face without an edit anywhere else (test_registry.py)."""

from env0_posttrain.workspace.services.descriptor import Env0Face, ServiceDescriptor

from .toolkit import Notes, notes_diff, notes_state

SERVICE = ServiceDescriptor(
    Notes, planted_offset=True,
    env0=Env0Face("notes", 9011, ("MOCK_NOTES_URL", "NOTES_URL"), state=notes_state, diff=notes_diff))

__all__ = ["Notes", "SERVICE"]
