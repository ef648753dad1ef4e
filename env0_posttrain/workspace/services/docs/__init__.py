from .toolkit import Docs

__all__ = ["Docs"]
