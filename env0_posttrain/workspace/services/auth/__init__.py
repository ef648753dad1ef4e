"""The OAuth/OIDC server every other service sits behind, and env0's mock-auth face of it."""

from ..descriptor import Env0Face, ServiceDescriptor
from .dialect import AUTH
from .env0_shape import auth_diff, auth_state
from .toolkit import Auth

SERVICE = ServiceDescriptor(
    Auth, dialect=AUTH,
    env0=Env0Face("auth", 9000, ("MOCK_AUTH_URL", "AUTH_URL"), state=auth_state, diff=auth_diff))

__all__ = ["Auth", "SERVICE"]
