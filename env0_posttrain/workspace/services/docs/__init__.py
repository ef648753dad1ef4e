"""The Docs API service: documents and their batchUpdate requests, and env0's mock-gdoc face of it (its fill is
Drive's)."""

from ..descriptor import Env0Face, ServiceDescriptor
from .toolkit import Docs

SERVICE = ServiceDescriptor(Docs, env0=Env0Face("gdoc", 9004, ("MOCK_GDOC_URL", "GDOC_URL", "DOCS_URL"), fill="GDRIVE_FILL_CONFIG",
                                          gws=True), planted_offset=True)

__all__ = ["Docs", "SERVICE"]
