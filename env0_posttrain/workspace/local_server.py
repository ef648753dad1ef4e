"""The workspace HTTP app on 127.0.0.1 in a background thread, on a free port: for tests and local harnesses
that want a real server (official clients, HTTP agents) without a separate process."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import uvicorn

from ..util.clock import Clock
from .environment import DEFAULT_NOW, Workspace
from .http_app import create_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def self_signed_cert(directory: Path) -> tuple[str, str]:
    """A throwaway certificate for 127.0.0.1.

    googleapiclient keeps the https scheme of the discovery document's rootUrl for media uploads even when
    api_endpoint points elsewhere, so the upload tests serve TLS, as Google does.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .sign(key, hashes.SHA256()))
    key_path, cert_path = directory / "key.pem", directory / "cert.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return str(key_path), str(cert_path)


@contextmanager
def uvicorn_in_thread(app: Any, port: int, name: str, **config: Any) -> Iterator[None]:
    """Serve `app` on 127.0.0.1:port from a daemon thread until the block ends (keep-alive clients not awaited)."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", access_log=False,
                                           timeout_graceful_shutdown=1, **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        if time.time() > deadline or not thread.is_alive():
            raise RuntimeError(f"{name} did not start")
        time.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        server.force_exit = True
        thread.join(timeout=10)


@contextmanager
def running_server(seed: int = 0, tls: bool = False, workspace_factory: Callable[[], Workspace] | None = None,
                   gated: bool = False, clock: Clock | None = None) -> Iterator[tuple[str, Any]]:
    """Yields (base_url, app); `app.state.ws` is the live workspace. `gated`, `clock`: as `workspace serve`
    (create_app)."""
    app = create_app(workspace_factory or (lambda: Workspace.seeded(seed, clock.start(DEFAULT_NOW) if clock else None)),
                     gated=gated, clock=clock)
    port = free_port()
    tmp = tempfile.TemporaryDirectory()
    ssl_args = {}
    if tls:
        key, cert = self_signed_cert(Path(tmp.name))
        ssl_args = {"ssl_keyfile": key, "ssl_certfile": cert}
    with uvicorn_in_thread(app, port, "workspace server", **ssl_args):
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}", app
        tmp.cleanup()
