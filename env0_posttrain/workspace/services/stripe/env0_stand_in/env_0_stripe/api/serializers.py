"""`*_to_dict`: a seeded object as the API object its event carries (only events read these)."""

from __future__ import annotations

import json
from typing import Any


def _plain(obj: Any, kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {"object": kind}
    for k, v in obj.columns().items():
        if k.endswith("_json"):
            try:
                out[k[:-5]] = json.loads(v) if v else None
            except ValueError:
                out[k[:-5]] = v
        elif k.endswith("_id") and k != "id":
            out[k[:-3]] = v
        else:
            out[k] = v
    return out


def customer_to_dict(c: Any) -> dict[str, Any]:
    return _plain(c, "customer")


def payment_method_to_dict(pm: Any) -> dict[str, Any]:
    return _plain(pm, "payment_method")


def payment_intent_to_dict(pi: Any) -> dict[str, Any]:
    return _plain(pi, "payment_intent")


def charge_to_dict(ch: Any) -> dict[str, Any]:
    return _plain(ch, "charge")


def refund_to_dict(r: Any) -> dict[str, Any]:
    return _plain(r, "refund")
