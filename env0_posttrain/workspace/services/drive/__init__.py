"""The Drive API service: files, permissions, comments, revisions and shared drives, and env0's mock-gdrive face of
it."""

from ..descriptor import Env0Face, ServiceDescriptor
from .gates import gates
from .toolkit import Drive

SERVICE = ServiceDescriptor(
    Drive, gates=gates, planted_offset=True,
    env0=Env0Face("gdrive", 9005, ("MOCK_GDRIVE_URL", "GDRIVE_URL", "DRIVE_URL"), fill="GDRIVE_FILL_CONFIG",
                  hints=("NORMAL_FILES",), gws=True))

__all__ = ["Drive", "SERVICE"]
