"""The fixed colour palette of Calendar v3 (colors.get): calendar colours 1-24 and event colours 1-11."""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from ...base import api

C = "calendar/v3"

_CAL_BG = ("#ac725e", "#d06b64", "#f83a22", "#fa573c", "#ff7537", "#ffad46", "#42d692", "#16a765", "#7bd148",
           "#b3dc6c", "#fbe983", "#fad165", "#92e1c0", "#9fe1e7", "#9fc6e7", "#4986e7", "#9a9cff", "#b99aff",
           "#c2c2c2", "#cabdbf", "#cca6ac", "#f691b2", "#cd74e6", "#a47ae2")
_EVENT_BG = ("#a4bdfc", "#7ae7bf", "#dbadff", "#ff887c", "#fbd75b", "#ffb878", "#46d6db", "#e1e1e1", "#5484ed",
             "#51b749", "#dc2127")

CALENDAR_COLORS: dict[str, tuple[str, str]] = {str(i + 1): (bg, "#000000") for i, bg in enumerate(_CAL_BG)}
EVENT_COLORS: dict[str, tuple[str, str]] = {str(i + 1): (bg, "#1d1d1d") for i, bg in enumerate(_EVENT_BG)}


@functools.lru_cache(maxsize=4096)
def default_color(calendar_id: str) -> str:
    """The colour a calendar gets in a list until the user picks one (stable per calendar id)."""
    return str(hashlib.blake2b(calendar_id.encode(), digest_size=2).digest()[0] % len(_CAL_BG) + 1)


def colors_resource(updated: str) -> dict:
    def block(table: dict[str, tuple[str, str]]) -> dict:
        return {k: {"background": bg, "foreground": fg} for k, (bg, fg) in table.items()}
    return {"kind": "calendar#colors", "updated": updated, "calendar": block(CALENDAR_COLORS),
            "event": block(EVENT_COLORS)}


class ColorsMixin:
    @api("calendar.colors.get", f"GET {C}/colors", "The colour palette for calendars and events (colorId values).")
    def colors_get(self) -> dict[str, Any]:
        return colors_resource("2012-02-14T00:00:00.000Z")
