"""Block Kit `blocks` as Slack checks them before storing a message: a JSON array (or its JSON text) of at most 50
objects, each with a known `type` and the limits Slack documents for it (section text 3,000 characters and 10
fields of 2,000, header 150, markdown 12,000, block_id 255, context 10 elements, actions 25); the message's text at
most 40,000 characters. Malformed JSON is `invalid_blocks_format`, a bad block `invalid_blocks` with a
json-pointer to it, as Slack answers; text over its limit is `msg_too_long`. Only a checked array is stored, so
what a verifier later reads is bounded (the request's own parse limits come first: request_limits.py)."""

from __future__ import annotations

import copy
from typing import Any

from ...errors import ApiError, slack_error
from ...request_limits import loads

MAX_BLOCKS = 50
MAX_TEXT = 40_000
BLOCK_TYPES = frozenset({"actions", "context", "divider", "file", "header", "image", "input", "markdown",
                         "rich_text", "section", "video"})
TEXT_TYPES = frozenset({"plain_text", "mrkdwn"})
_TEXT_LIMITS = {"section": 3000, "header": 150}
_ELEMENT_LIMITS = {"context": 10, "actions": 25}


def _invalid(message: str, pointer: str) -> ApiError:
    return slack_error("invalid_blocks", response_metadata={"messages": [f"[ERROR] {message} [json-pointer:{pointer}]"]})


def _text_object(value: Any, where: str, limit: int, plain_only: bool = False) -> None:
    if not isinstance(value, dict) or value.get("type") not in (({"plain_text"}) if plain_only else TEXT_TYPES):
        raise _invalid("must be a text object" + (" of type plain_text" if plain_only else ""), where)
    text = value.get("text")
    if not isinstance(text, str) or not text:
        raise _invalid("must be a non-empty string", f"{where}/text")
    if len(text) > limit:
        raise _invalid(f"must be less than {limit + 1} characters", f"{where}/text")


def _block(b: Any, i: int) -> None:
    where = f"/blocks/{i}"
    if not isinstance(b, dict):
        raise _invalid("must be an object", where)
    kind = b.get("type")
    if kind not in BLOCK_TYPES:
        raise _invalid(f"unsupported type: {str(kind)[:40]}", f"{where}/type")
    if "block_id" in b and (not isinstance(b["block_id"], str) or not 0 < len(b["block_id"]) <= 255):
        raise _invalid("must be a string of 1 to 255 characters", f"{where}/block_id")
    if kind in ("section", "header"):
        if kind == "header" or "text" in b:
            _text_object(b.get("text"), f"{where}/text", _TEXT_LIMITS[kind], plain_only=kind == "header")
        fields = b.get("fields")
        if kind == "section" and fields is not None:
            if not isinstance(fields, list) or not 0 < len(fields) <= 10:
                raise _invalid("must be an array of 1 to 10 text objects", f"{where}/fields")
            for j, f in enumerate(fields):
                _text_object(f, f"{where}/fields/{j}", 2000)
        if kind == "section" and "text" not in b and fields is None:
            raise _invalid("must provide either text or fields", where)
    elif kind == "markdown":
        if not isinstance(b.get("text"), str) or not 0 < len(b["text"]) <= 12000:
            raise _invalid("must be a string of 1 to 12000 characters", f"{where}/text")
    elif kind in _ELEMENT_LIMITS or kind == "rich_text":
        elements = b.get("elements")
        most = _ELEMENT_LIMITS.get(kind, MAX_BLOCKS)
        if not isinstance(elements, list) or not 0 < len(elements) <= most or \
                not all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in elements):
            raise _invalid(f"must be an array of 1 to {most} elements, each with a type", f"{where}/elements")
    elif kind == "image":
        if not isinstance(b.get("alt_text"), str) or not 0 < len(b["alt_text"]) <= 2000:
            raise _invalid("must be a string of 1 to 2000 characters", f"{where}/alt_text")
        if not isinstance(b.get("image_url"), str) and not isinstance(b.get("slack_file"), dict):
            raise _invalid("must provide either image_url or slack_file", where)


def checked_blocks(blocks: Any) -> tuple[dict[str, Any], ...] | None:
    """The blocks argument (a JSON array, or its text as forms carry it) checked as Slack checks it; None when
    absent, () for an empty array (chat.update: remove the blocks)."""
    if blocks is None or blocks == "":
        return None
    if isinstance(blocks, str):
        try:
            blocks = loads(blocks)
        except ValueError:
            raise slack_error("invalid_blocks_format") from None
    if not isinstance(blocks, list):
        raise slack_error("invalid_blocks_format")
    if len(blocks) > MAX_BLOCKS:
        raise _invalid(f"must provide an array with no more than {MAX_BLOCKS} items", "/blocks")
    for i, b in enumerate(blocks):
        _block(b, i)
    return tuple(copy.deepcopy(blocks))


def checked_text(text: str | None, blocks: tuple[dict[str, Any], ...] | None) -> str:
    """The message text: required unless blocks carry the message, at most MAX_TEXT characters."""
    if (not text or not text.strip()) and not blocks:
        raise slack_error("no_text")
    if text and len(text) > MAX_TEXT:
        raise slack_error("msg_too_long")
    return text or ""
