"""env0's mock-gdoc comment and permission routes, for an env0 package's own scripts (solve.sh, seeding): the Docs
port's `Env0Routes` (descriptor.py), which the env0 surface (tasks/env0/serve/) answers.

The Docs API has no comments or permissions: on a Doc they are Drive's (comments, replies, permissions on
the doc's file id), which is what agents get as tools. A package written against mock-gdoc calls
`/v1/documents/{id}/comments...` and `/permissions...`; the surface maps each such request onto the one Drive
method that does the same (resolve/reopen: a reply with that action), so the package still runs.
"""

from __future__ import annotations

import re
from typing import Any

DOC_COMPAT = re.compile(r"/v1/documents/([^/]+)/(comments|permissions)(?:/([^/]+))?(?:/(resolve|reopen|replies))?"
                        r"(?:/([^/]+))?")


def _comment_body(req: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"content": req.get("content")}
    quoted = req.get("quotedText") or (req.get("quotedFileContent") or {}).get("value")
    if quoted:
        args["quotedFileContent"] = {"value": quoted}
    return args


def drive_call(method: str, path: str, req: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """The Drive tool calls (usually one) that stand for a mock-gdoc request; None when it is no such route."""
    m = DOC_COMPAT.fullmatch(path)
    if m is None:
        return None
    doc, kind, item, sub, sub_id = m.groups()
    base: dict[str, Any] = {"fileId": doc}
    if kind == "permissions":
        if item is None:
            return [("drive_permissions_list", base)] if method == "GET" else \
                [("drive_permissions_create", {**base, "body": req})] if method == "POST" else None
        base["permissionId"] = item
        return {"PATCH": [("drive_permissions_update", {**base, "body": req})],
                "DELETE": [("drive_permissions_delete", base)]}.get(method) if sub is None else None
    base["fields"] = "*"
    if item is None:
        return [("drive_comments_list", {**base, "pageSize": 100})] if method == "GET" else \
            [("drive_comments_create", {**base, "body": _comment_body(req)})] if method == "POST" else None
    base["commentId"] = item
    if sub in ("resolve", "reopen") and method == "POST":
        return [("drive_replies_create", {**base, "body": {"action": sub}})]
    if sub == "replies":
        if sub_id is None and method == "POST":
            return [("drive_replies_create", {**base, "body": {"content": req.get("content"),
                                                               **({"action": req["action"]} if req.get("action") else {})}})]
        if sub_id is not None and method == "DELETE":
            return [("drive_replies_delete", {"fileId": doc, "commentId": item, "replyId": sub_id})]
        return None
    if sub is not None:
        return None
    if method == "GET":
        return [("drive_comments_get", base)]
    if method == "DELETE":
        return [("drive_comments_delete", {"fileId": doc, "commentId": item})]
    if method == "PATCH":  # mock-gdoc lets PATCH set `resolved`; in Drive that is a reply with an action
        calls: list[tuple[str, dict[str, Any]]] = []
        if req.get("content") is not None:
            calls.append(("drive_comments_update", {**base, "body": {"content": req["content"]}}))
        if isinstance(req.get("resolved"), bool):
            calls.append(("drive_replies_create", {**base, "body": {"action": "resolve" if req["resolved"] else "reopen"}}))
        return calls or [("drive_comments_get", base)]
    return None
