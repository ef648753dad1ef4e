"""A request that breaks a service: answered 500, logged once per distinct error, never a traceback per request.

Whoever reaches a service (a package's scripts, an agent's shell commands, a client of `workspace serve`) can send
any number of requests. An error the handlers did not turn into the API's own 4xx would otherwise reach uvicorn,
which logs a full traceback per request on the runner's stderr (300 of one malformed `/_gws` call: 530 KB). Here
each distinct error (service, exception type, where it was raised) is logged once, as one line, up to
`MAX_DISTINCT` of them per process; every failure is counted. The message is cut and its control characters
escaped: it can quote what the request carried.
"""

from __future__ import annotations

import json
import logging
import threading
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable

from env0_posttrain.util.console import printable

LOG = logging.getLogger(__name__)
MAX_DISTINCT = 20
MESSAGE_CHARS = 200
_HERE = Path(__file__).resolve()
_PACKAGE_ROOT = _HERE.parents[1]
_BODY = json.dumps({"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL",
                              "errors": [{"message": "Internal error encountered.", "domain": "global",
                                          "reason": "backendError"}]}}).encode()

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def _where(exc: BaseException) -> str:
    """The innermost frame of the project's own code below this wrapper (else the innermost frame): file:line."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() != _HERE]
    ours = [f for f in frames if Path(f.filename).resolve().is_relative_to(_PACKAGE_ROOT)]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return "?"
    path = Path(frame.filename).resolve()
    name = path.relative_to(_PACKAGE_ROOT.parent).as_posix() if path.is_relative_to(_PACKAGE_ROOT) else path.name
    return f"{name}:{frame.lineno}"


class RequestErrors:
    """Counts of failed requests by distinct error; the first of each distinct error is logged (at most `cap`)."""

    def __init__(self, cap: int = MAX_DISTINCT, logger: logging.Logger = LOG):
        self.cap, self.log = cap, logger
        self.counts: dict[tuple[str, str, str], int] = {}
        self.failed = 0
        self.unlisted = 0  # failures of distinct errors past the cap: counted here, not by kind
        self._lock = threading.Lock()

    def record(self, service: str, exc: BaseException) -> None:
        key = (service, type(exc).__name__, _where(exc))
        with self._lock:
            self.failed += 1
            if key in self.counts:
                self.counts[key] += 1
                return
            if len(self.counts) >= self.cap:
                self.unlisted += 1
                if self.unlisted == 1:
                    self.log.warning("%s: a request failed with a new kind of error past the first %d; further new "
                                     "kinds are counted, not logged", service, self.cap)
                return
            self.counts[key] = 1
        text = printable(" ".join(str(exc).split()))
        text = text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "..."
        self.log.warning("%s: a request failed (answered 500): %s: %s at %s; logged once, repeats are counted",
                         service, key[1], text, key[2])


REQUEST_ERRORS = RequestErrors()  # the process's services share one log: a flood of one error is one line


def contained(app: ASGIApp, service: str, errors: RequestErrors | None = None) -> ASGIApp:
    """`app` as an ASGI app whose HTTP requests never raise into the server: a failure before the response
    started is answered 500 (Google's error shape) and recorded in `errors` (default: the process's)."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await app(scope, receive, tracked)
        except Exception as exc:  # noqa: BLE001 - whatever a request breaks is this one request's 500
            (errors or REQUEST_ERRORS).record(service, exc)
            if not started:
                await send({"type": "http.response.start", "status": 500,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(_BODY)).encode())]})
                await send({"type": "http.response.body", "body": _BODY})

    return asgi
