"""The Slack Web API service and env0's mock-slack face of it."""

from ..descriptor import Env0Face, ServiceDescriptor
from .dialect import SLACK
from .gates import gates
from .env0_needles import FILL, plant
from .env0_shape import slack_diff, slack_state
from .toolkit import Slack

SERVICE = ServiceDescriptor(
    Slack, dialect=SLACK, gates=gates, planted_offset=True, shell_url="SLACK_URL",
    env0=Env0Face("slack", 9002, ("MOCK_SLACK_URL", "SLACK_URL"), state=slack_state, diff=slack_diff,
                  fill=FILL, fill_tables=(("slack", "messages"),),
                  hints=("SEED_CHANNELS", "SEED_MESSAGES", "SEED_USERS"),
                  own_routes=("slack_upload_v1",), plant=plant, plant_order=30))

__all__ = ["Slack", "SERVICE"]
