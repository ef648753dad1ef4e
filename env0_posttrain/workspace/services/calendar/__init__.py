"""The Calendar API service: calendars, events, ACLs, free/busy and settings, and env0's mock-gcal face of it."""

from ..descriptor import Env0Face, ServiceDescriptor
from .gates import gates
from .env0_needles import plant
from .env0_shape import calendar_diff, calendar_state
from .toolkit import Calendar

SERVICE = ServiceDescriptor(
    Calendar, gates=gates, planted_offset=True, google_api=("calendar", "v3"), batch_limit=1000,
    env0=Env0Face("gcal", 9003, ("MOCK_GCAL_URL", "GCAL_URL", "CALENDAR_URL"), state=calendar_state, diff=calendar_diff,
                  fill="GCAL_FILL_CONFIG", fill_tables=(("calendar", "events"),),
                  hints=("NEEDLE_EVENTS", "GCAL_FILL_CONFIG"), gws=True, family="calendar",
                  plant=plant, plant_order=40))

__all__ = ["Calendar", "SERVICE"]
