"""The mock workspace: Gmail, Calendar, Drive, Docs, Slack and the Admin SDK Directory, in process.

    from env0_posttrain.workspace import Workspace, call_tool, openai_tools, TOOLS
    ws = Workspace.seeded(0)
    call_tool(ws, "gmail_messages_list", {"q": "is:unread"})
"""

from .environment import DEFAULT_NOW, SERVICE_NAMES, Workspace
from .errors import ApiError
from .people import Company, Person
from .tools import TOOLS, ToolSpec, call_tool, openai_tools, service_tools

__all__ = ["Workspace", "call_tool", "openai_tools", "service_tools", "TOOLS", "ToolSpec", "Person", "Company",
           "ApiError", "SERVICE_NAMES", "DEFAULT_NOW"]
