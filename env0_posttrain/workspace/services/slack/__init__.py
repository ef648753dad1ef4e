from .toolkit import Slack

__all__ = ["Slack"]
