"""Wire arguments -> handler kwargs for the HTTP app (query strings, JSON, multipart and form bodies); the routes
that pick the tool are in api_routes.py."""

from __future__ import annotations

from dataclasses import dataclass
from email import policy
from email.parser import BytesParser
from typing import Any

from . import multipart
from .dialects import dialect
from .errors import ApiError, bad_request, google_error
from .media import encode
from .request_limits import TooMuchJson, loads
from .tools import ToolSpec

# Google's system parameters: accepted on every method, meaningful only where a handler takes them.
SYSTEM_PARAMS = {"alt", "fields", "prettyPrint", "key", "quotaUser", "access_token", "oauth_token", "upload_protocol",
                 "uploadType", "$.xgafv", "callback", "userIp"}


@dataclass(frozen=True)
class Upload:
    """What an upload request carries: the metadata (a JSON object; empty for uploadType=media) and the media with
    its content type (the media part's Content-Type, or the request's)."""

    meta: dict[str, Any]
    media: bytes
    media_type: str


def google_kwargs(spec: ToolSpec, path_params: dict[str, str], query: list[tuple[str, str]],
                  body: bytes, upload: Upload | None = None) -> tuple[dict[str, Any], str | None]:
    """Handler kwargs from the wire (the JSON body, or an upload's parts), plus a `fields` selection to apply
    afterwards (None: not requested)."""
    from urllib.parse import unquote

    kwargs: dict[str, Any] = {k: unquote(v) for k, v in path_params.items()}
    post_fields = None
    for k, v in query:
        kind = spec.kinds.get(k)
        if kind is None:
            if k == "fields":
                post_fields = v
                continue
            if k in SYSTEM_PARAMS:
                if k == "alt" and v not in ("json", "media", "proto"):
                    raise bad_request(f"Invalid value for alt: {v}", "invalid", "alt")
                continue
            kwargs[k] = v  # rejected with the API's own error by the tool layer
        elif kind == "array":
            kwargs.setdefault(k, []).append(v)
        else:
            kwargs[k] = v
    if upload is not None:
        _upload_kwargs(spec, upload, kwargs)
    elif body.strip():
        if "body" not in spec.kinds:
            raise bad_request("Invalid JSON payload received. Unknown name: request body.", "invalidArgument")
        kwargs["body"] = json_object(body)
    return kwargs, post_fields


def json_object(body: bytes) -> dict[str, Any]:
    try:
        value = loads(body)
    except TooMuchJson as e:  # refused before anything was built
        raise google_error(400, f"Invalid JSON payload received. {e}.", "parseError") from None
    except (ValueError, UnicodeDecodeError):
        raise google_error(400, "Invalid JSON payload received.", "parseError") from None
    if not isinstance(value, dict):
        raise google_error(400, "Invalid JSON payload received. Expected an object.", "parseError")
    return value


def media_type(content_type: str | None) -> str:
    """The MIME type of a Content-Type value, without its parameters (Drive stores `text/csv`, not its charset)."""
    return (content_type or "").split(";", 1)[0].strip() or "application/octet-stream"


def upload_of(query: list[tuple[str, str]], body: bytes, content_type: str) -> Upload:
    """A simple (uploadType=media) or multipart upload request's parts; resumable ones are sessions (uploads.py)."""
    kind = dict(query).get("uploadType", "media")
    if kind == "multipart":
        parts = multipart.split(content_type, body)
        if len(parts) != 2:
            raise bad_request("Multipart upload needs a metadata part and a media part.", "badContent")
        return Upload(json_object(parts[0].payload or b"{}"), parts[1].payload, media_type(parts[1].content_type))
    if kind == "media":
        return Upload({}, body, media_type(content_type))
    raise bad_request(f"Upload type {kind!r} is not supported; use media, multipart or resumable.", "badRequest")


def _upload_kwargs(spec: ToolSpec, upload: Upload, kwargs: dict[str, Any]) -> None:
    meta = upload.meta
    body = dialect(spec.service).upload_body(spec.name, spec.service, meta, upload.media)
    if body is not None:
        kwargs["body"] = body
    else:
        kwargs["body"] = meta
        kwargs["media_body"] = encode(upload.media)
        kwargs["media_mime_type"] = upload.media_type


def slack_kwargs(query: list[tuple[str, str]], body: bytes, content_type: str) -> dict[str, Any]:
    from urllib.parse import parse_qsl

    args: dict[str, Any] = dict(query)
    if body.strip():
        if content_type.startswith("application/json"):
            try:
                value = loads(body)
            except (ValueError, UnicodeDecodeError):
                raise ApiError(200, {"ok": False, "error": "invalid_json"}) from None
            if not isinstance(value, dict):
                raise ApiError(200, {"ok": False, "error": "invalid_json"})
            args.update(value)
        elif content_type.startswith("multipart/form-data"):
            args.update(form_fields(content_type, body))  # files.upload with a file part
        else:
            args.update(parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True))
    args.pop("token", None)
    return args


def form_fields(content_type: str, body: bytes) -> dict[str, str]:
    """Fields of a multipart/form-data body by name; a file part's bytes as UTF-8 text (errors replaced)."""
    msg = BytesParser(policy=policy.default).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    if not msg.is_multipart():
        raise ApiError(200, {"ok": False, "error": "invalid_form_data"})
    out: dict[str, str] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        data = part.get_payload(decode=True) or b""
        out[str(name)] = data.decode("utf-8", errors="replace")
        if part.get_filename() and "filename" not in out:
            out["filename"] = str(part.get_filename())
    return out
