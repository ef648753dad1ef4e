"""The OAuth/OIDC server every other service sits behind, and env0's mock-auth face of it."""

from ..descriptor import Env0Face, Guard, ServiceDescriptor
from .dialect import AUTH
from .env0_needles import plant
from .env0_shape import auth_diff, auth_state
from .gate import GUARDED, Refusal, authorize, known_scopes
from .oauth import SESSION_COOKIE
from .toolkit import Auth

SERVICE = ServiceDescriptor(
    Auth, dialect=AUTH, guard=Guard(authorize, Refusal, GUARDED, known_scopes, SESSION_COOKIE),
    env0=Env0Face("auth", 9000, ("MOCK_AUTH_URL", "AUTH_URL"), state=auth_state, diff=auth_diff,
                  family="auth", subsumes=GUARDED, issuer=True,
                  plant=plant, plant_order=60, fill_family=False))

__all__ = ["Auth", "SERVICE"]
