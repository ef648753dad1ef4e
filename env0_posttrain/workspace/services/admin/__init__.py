"""The Admin SDK Directory service: users, groups, members, tokens and app passwords (env0 has no port for it: the
shell reaches it at $WORKSPACE_URL)."""

from ..descriptor import ServiceDescriptor
from .gates import gates
from .toolkit import Admin

SERVICE = ServiceDescriptor(Admin, gates=gates, planted_offset=True, google_api=("admin", "directory_v1"),
                            shell_url="WORKSPACE_URL")

__all__ = ["Admin", "SERVICE"]
