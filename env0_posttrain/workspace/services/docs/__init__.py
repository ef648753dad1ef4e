"""The Docs API service: documents and their batchUpdate requests, and env0's mock-gdoc face of it (its fill is
Drive's)."""

from ..descriptor import Env0Face, Env0Routes, ServiceDescriptor
from ..drive.env0_needles import plant
from .env0_routes import DOC_COMPAT, drive_call
from .gates import gates
from .env0_shape import docs_diff, docs_state
from .toolkit import Docs

SERVICE = ServiceDescriptor(
    Docs, gates=gates, planted_offset=True, google_api=("docs", "v1"),
    env0=Env0Face("gdoc", 9004, ("MOCK_GDOC_URL", "GDOC_URL", "DOCS_URL"), state=docs_state, diff=docs_diff,
                  fill="GDRIVE_FILL_CONFIG", fill_tables=(("drive", "files"), ("docs", "documents")), gws=True,
                  family="docs", subsumes=("drive",), routes=Env0Routes(DOC_COMPAT, drive_call),
                  plant=plant, plant_order=20, fill_family=False))

__all__ = ["Docs", "SERVICE"]
