from .toolkit import Auth

__all__ = ["Auth"]
