"""The workspace's clock as a user chooses it for a served workspace: frozen at an instant (what every episode has:
the same calls give the same state), running from an instant, or the host's clock. Apps that schedule (Slack's
scheduleMessage window, Stripe's `created` filters, token expiry) need a "now" that moves with theirs."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable, Literal

MODES = ("frozen", "running", "host")


@dataclass(frozen=True)
class Clock:
    """`mode` frozen: `at` always; running: `at` plus the time elapsed since the workspace was built; host: the host's
    clock. `at` None: the seeded default instant (frozen, running) or the host's time at start (host)."""

    mode: Literal["frozen", "running", "host"] = "frozen"
    at: datetime | None = None

    @classmethod
    def parse(cls, text: str) -> "Clock":
        """`frozen`, `frozen@2026-03-11T16:00:00Z`, `running`, `running@<ISO instant>` or `host`."""
        mode, _, at = text.strip().partition("@")
        if mode not in MODES:
            raise ValueError(f"clock {text!r}: the mode must be one of {', '.join(MODES)} (e.g. frozen@2026-03-11T16:00:00Z)")
        if mode == "host" and at:
            raise ValueError(f"clock {text!r}: the host's clock takes no instant")
        if not at:
            return cls(mode)  # type: ignore[arg-type]
        try:
            when = datetime.fromisoformat(at.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"clock {text!r}: {at!r} is not an ISO 8601 instant") from None
        return cls(mode, when if when.tzinfo else when.replace(tzinfo=timezone.utc))  # type: ignore[arg-type]

    def start(self, default: datetime) -> datetime:
        """The instant a workspace on this clock is seeded at."""
        if self.mode == "host":
            return datetime.now(timezone.utc).replace(microsecond=0)
        return (self.at or default).astimezone(timezone.utc)

    def ticker(self, start: datetime) -> Callable[[], datetime] | None:
        """What reads "now" for a workspace seeded at `start` (None: frozen there)."""
        if self.mode == "frozen":
            return None
        if self.mode == "host":
            return lambda: datetime.now(timezone.utc).replace(microsecond=0)
        t0 = time.monotonic()  # elapsed time, immune to the host's clock being set
        return lambda: (start + timedelta(seconds=time.monotonic() - t0)).replace(microsecond=0)
