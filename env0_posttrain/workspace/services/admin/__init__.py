from .toolkit import Admin

__all__ = ["Admin"]
