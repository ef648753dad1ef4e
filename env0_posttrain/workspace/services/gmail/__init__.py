"""The Gmail API service: mailboxes, labels, threads, drafts, history and settings, and env0's mock-gmail face of it."""

from ..descriptor import Env0Face, ServiceDescriptor
from .dialect import GMAIL
from .gates import gates
from .env0_needles import plant
from .env0_shape import gmail_diff, gmail_state
from .toolkit import Gmail

SERVICE = ServiceDescriptor(
    Gmail, dialect=GMAIL, gates=gates, planted_offset=True, google_api=("gmail", "v1"), batch_limit=100,
    env0=Env0Face("gmail", 9001, ("MOCK_GMAIL_URL", "GMAIL_URL"), state=gmail_state, diff=gmail_diff,
                  fill="GMAIL_FILL_CONFIG", fill_tables=(("gmail", "messages"),),
                  hints=("GMAIL_FILL_CONFIG", "NEEDLE_THREADS"), gws=True, family="mail",
                  plant=plant, plant_order=10))

__all__ = ["Gmail", "SERVICE"]
