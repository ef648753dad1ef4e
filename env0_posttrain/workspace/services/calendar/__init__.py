from .toolkit import Calendar

__all__ = ["Calendar"]
