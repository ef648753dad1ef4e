from .toolkit import Gmail

__all__ = ["Gmail"]
