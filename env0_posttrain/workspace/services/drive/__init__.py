from .toolkit import Drive

__all__ = ["Drive"]
