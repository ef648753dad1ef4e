"""The File fields a client may write that have no behaviour here beyond being kept: stored as given, checked by
type, and returned, as Drive keeps them (custom properties, content hints, sharing and copy restrictions, folder
colour, the original file name, the times a client may set). `modifiedTime` a client sets is the file's own.
Fields Drive does not let a client write (`parents` on update: addParents / removeParents do that; ids, times Drive
sets) stay refused with Drive's "not directly writable".
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import bad_request

BOOLEAN = ("copyRequiresWriterPermission", "writersCanShare", "viewersCanCopyContent", "inheritedPermissionsDisabled")
STRING_MAPS = ("properties", "appProperties")
OBJECT = ("contentHints", "downloadRestrictions")
KEPT = (*BOOLEAN, *STRING_MAPS, *OBJECT, "contentRestrictions", "folderColorRgb", "originalFilename", "viewedByMeTime")
TIMES = ("viewedByMeTime", "modifiedTime")
_RGB = re.compile(r"#[0-9a-fA-F]{6}")
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


def kept(body: dict[str, Any]) -> dict[str, Any]:
    """The kept fields `body` sets, checked (a None value clears one; a property set to None is removed)."""
    out: dict[str, Any] = {}
    for k in (*KEPT, "modifiedTime"):
        if k not in body:
            continue
        v = body[k]
        bad = (v is not None and (
            (k in BOOLEAN and not isinstance(v, bool))
            or (k in STRING_MAPS and not (isinstance(v, dict) and all(isinstance(x, (str, type(None))) for x in v.values())))
            or (k in OBJECT and not isinstance(v, dict))
            or (k == "contentRestrictions" and not (isinstance(v, list) and all(isinstance(x, dict) for x in v)))
            or (k == "folderColorRgb" and not (isinstance(v, str) and _RGB.fullmatch(v)))
            or (k == "originalFilename" and not isinstance(v, str))
            or (k in TIMES and not (isinstance(v, str) and _RFC3339.fullmatch(v)))))
        if bad:
            raise bad_request(f"Invalid value for {k}.", "invalid", k)
        out[k] = v
    return out


def merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out = dict(old)
    for k, v in new.items():
        if k == "modifiedTime":
            continue
        if v is None:
            out.pop(k, None)
        elif k in STRING_MAPS:  # properties merge key by key; a None value removes its key
            cur = {**out.get(k, {}), **v}
            out[k] = {a: b for a, b in cur.items() if b is not None}
        else:
            out[k] = v
    return out


def applied(f: Any, new: dict[str, Any]) -> Any:
    """The File row with `new` kept fields merged in (and a client-set modifiedTime as its own)."""
    if not new:
        return f
    upd: dict[str, Any] = {"kept": merged(f.kept, new)}
    if new.get("modifiedTime"):
        upd["modifiedTime"] = new["modifiedTime"]
    return f.model_copy(update=upd)
