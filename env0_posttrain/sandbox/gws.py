"""`gws <service> <resource...> <method> [--params JSON] [--json JSON]`: the Google Workspace CLI surface env0's
solve.sh scripts call, answered by our workspace (standard library only, so each call starts fast).

Routes to the service's URL variable's /_gws; prints the API's JSON response; exits 1 with the error body on stderr on
an API error, 2 on a usage error (unknown flag, bad JSON), 3 when the service is not reachable. As the real CLI,
it sends $GOOGLE_WORKSPACE_CLI_TOKEN (an access token) as `Authorization: Bearer`, which a service behind the auth
gate requires.

Which variable names each service's URL is the host's to say (the service registry): `shims` writes the table as
SERVICES_FILE beside this script, which runs alone inside the sandbox and imports nothing of the package.
"""

from __future__ import annotations

import json
import os
import socket
import sys

SERVICES_FILE = "gws_services.json"  # {gws service name: the environment variable holding its base URL}


def url_vars() -> dict[str, str]:
    """The host's table (empty where none was written: every service is then unknown)."""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), SERVICES_FILE)) as f:
            table = json.load(f)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in table.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(table, dict) else {}


def parse(argv: list[str]) -> dict:
    words, flags, i = [], {}, 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            key, _, val = a[2:].partition("=")
            if key in ("params", "json"):
                if not val:
                    i += 1
                    if i >= len(argv):
                        raise SystemExit(_usage(f"--{key} needs a JSON value"))
                    val = argv[i]
                try:
                    flags[key] = json.loads(val)
                except ValueError as e:
                    raise SystemExit(_usage(f"--{key} is not valid JSON: {e}"))
            else:  # gws's other flags (--page-all, --format, --upload ...) are not implemented: say so
                raise SystemExit(_usage(f"unknown flag --{key}"))
        else:
            words.append(a)
        i += 1
    if len(words) < 3:
        raise SystemExit(_usage("expected: gws <service> <resource> [<sub-resource>] <method>"))
    service = words[0]
    return {"service": service, "method_id": ".".join(words), "params": flags.get("params") or {},
            "json": flags.get("json")}


def post(base: str, path: str, data: bytes, token: str = "") -> tuple[int, bytes]:
    """POST JSON to base/path over a plain socket: a solve.sh starts gws hundreds of times, and urllib's imports
    would double each start. The surface answers with a Content-Length and closes (HTTP/1.0)."""
    rest = base.split("://", 1)[-1]
    hostport, _, prefix = rest.partition("/")
    host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "80")
    target = "/" + "/".join(p for p in (prefix.strip("/"), path) if p)
    bearer = f"Authorization: Bearer {token}\r\n" if token and "\n" not in token and "\r" not in token else ""
    head = (f"POST {target} HTTP/1.0\r\nHost: {hostport}\r\nContent-Type: application/json\r\n{bearer}"
            f"Content-Length: {len(data)}\r\n\r\n").encode()
    with socket.create_connection((host.strip("[]"), int(port)), timeout=60) as s:
        s.sendall(head + data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    raw = b"".join(chunks)
    header, _, body = raw.partition(b"\r\n\r\n")
    return int(header.split(None, 2)[1]), body


def _usage(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    req = parse(list(sys.argv[1:] if argv is None else argv))
    known = url_vars()
    var = known.get(req["service"])
    base = os.environ.get(var or "", "") if var else ""
    if not base:
        print(f"error: unknown gws service {req['service']!r} (known: {', '.join(known)})", file=sys.stderr)
        return 2
    try:
        status, body = post(base, "_gws", json.dumps(req).encode(), os.environ.get("GOOGLE_WORKSPACE_CLI_TOKEN", ""))
    except (OSError, ValueError, IndexError) as e:
        print(f"error: {req['service']} service is not running at {base}: {e}", file=sys.stderr)
        return 3
    if status >= 400:
        sys.stderr.write(body.decode("utf-8", "replace") + "\n")
        return 1
    text = body.decode("utf-8", "replace")
    try:
        text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        pass
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
