"""The Drive API service: files, permissions, comments, revisions and shared drives, and env0's mock-gdrive face of
it."""

from ..descriptor import Env0Face, ServiceDescriptor
from .gates import gates
from .env0_needles import plant
from .env0_shape import drive_diff, drive_state
from .toolkit import Drive

SERVICE = ServiceDescriptor(
    Drive, gates=gates, planted_offset=True, google_api=("drive", "v3"), batch_limit=100,
    env0=Env0Face("gdrive", 9005, ("MOCK_GDRIVE_URL", "GDRIVE_URL", "DRIVE_URL"), state=drive_state, diff=drive_diff,
                  fill="GDRIVE_FILL_CONFIG", fill_tables=(("drive", "files"), ("docs", "documents")),
                  hints=("NORMAL_FILES",), gws=True, family="drive",
                  plant=plant, plant_order=20))

__all__ = ["Drive", "SERVICE"]
