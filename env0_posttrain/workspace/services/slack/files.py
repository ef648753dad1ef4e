"""Slack files: files.upload, the v2 pair files.getUploadURLExternal / files.completeUploadExternal, files.info,
files.list and files.delete. A mixin of `Slack`.

A file shared in a conversation is also a message there (`Message.files`, text = the initial comment), as in
Slack, so history, pins, reactions and the leak gate see the share. The v2 flow is three steps: the URL method
makes a pending row, the client POSTs the bytes to `upload_url` (served by the HTTP app at
`/upload/v1/<file id>`, see `receive_upload`), and completion publishes the file. Content is kept as text
(UTF-8, undecodable bytes replaced): the workspace's files are documents, not media. files.info returns it
as `content`, as Slack does for text files; files.list gives the first lines as `preview`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base import SLACK_ALPHABET, api
from ...errors import slack_error
from ...request_limits import loads
from .data_model import Message, SlackFile
from .state import SlackState

BY_EXT = {"md": "markdown", "markdown": "markdown", "txt": "text", "json": "json", "csv": "csv", "py": "python",
          "html": "html", "htm": "html", "yml": "yaml", "yaml": "yaml", "pdf": "pdf", "png": "png", "jpg": "jpg",
          "jpeg": "jpg", "gif": "gif", "zip": "zip", "js": "javascript", "sh": "shell", "log": "text"}
MIME = {"markdown": "text/markdown", "text": "text/plain", "json": "application/json", "csv": "text/csv",
        "python": "text/x-python", "html": "text/html", "yaml": "text/yaml", "pdf": "application/pdf",
        "png": "image/png", "jpg": "image/jpeg", "gif": "image/gif", "zip": "application/zip",
        "javascript": "text/javascript", "shell": "text/x-sh"}
_TYPES = {"all", "spaces", "snippets", "images", "gdocs", "zips", "pdfs"}


def filetype_of(name: str, given: str | None = None) -> str:
    if given and given != "auto":
        return given
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return BY_EXT.get(ext, "text")


def _kind_matches(f: SlackFile, types: set[str]) -> bool:
    if "all" in types:
        return True
    m = f.mimetype
    return (("images" in types and m.startswith("image/")) or ("pdfs" in types and m == "application/pdf")
            or ("zips" in types and m == "application/zip")
            or ("snippets" in types and not m.startswith("image/") and m not in ("application/pdf", "application/zip")))


class Files(SlackState):
    def _visible(self, f: SlackFile) -> bool:
        if f.pending:
            return False
        if f.user == self.me:
            return True
        for cid in f.channels:
            c = self.db.channels.get(cid)
            if c is not None and (not (c.is_private or c.is_im) or self.me in c.members):
                return True
        return False

    def _file(self, file: str) -> SlackFile:
        f = self.db.files.get(file)
        if f is None or not self._visible(f):
            raise slack_error("file_not_found")
        return f

    def _targets(self, channels: list[str]) -> list[Any]:
        out = []
        for ch in channels:
            c = self._im_with(ch) if ch.startswith("U") else self._chan(ch)
            if c.is_archived:
                raise slack_error("is_archived")
            if not c.is_im and self.me not in c.members:
                raise slack_error("not_in_channel")
            out.append(c)
        return out

    def _share(self, files: list[SlackFile], targets: list[Any], comment: str | None, thread_ts: str | None) -> None:
        """Post one message per conversation carrying the files; record channel and share ts on each file."""
        rows = {f.id: f for f in files}
        for c in targets:
            if thread_ts and f"{c.id}/{thread_ts}" not in self.db.messages:
                raise slack_error("invalid_thread_ts")
            m = Message(channel=c.id, ts=self._next_ts(), user=self.me, text=comment or "",
                        thread_ts=thread_ts, files=tuple(rows))
            self.db.messages[f"{c.id}/{m.ts}"] = m
            for fid, f in rows.items():
                rows[fid] = f.model_copy(update={"channels": f.channels + (c.id,) if c.id not in f.channels
                                                 else f.channels, "shares": f.shares + ((c.id, m.ts),)})
        for f in rows.values():
            self.db.files[f.id] = f

    def _new_file(self, name: str, title: str | None, filetype: str | None, content: str, **extra: Any) -> SlackFile:
        ft = filetype_of(name, filetype)
        fid = "F" + self.new_id("file", SLACK_ALPHABET, 10)
        return SlackFile(id=fid, name=name, title=title or name, filetype=ft, mimetype=MIME.get(ft, "text/plain"),
                         user=self.me, created=int(self.ws.now.timestamp()), content=content,
                         size=len(content.encode()), **extra)

    # -- methods ------------------------------------------------------------------------------------------
    @api("files.upload", "POST api/files.upload",
         "Upload a text file (content) and share it in channels. Slack retired this method for new apps; "
         "files.getUploadURLExternal + files.completeUploadExternal replace it.", writes=True,
         params={"content": "the file's text", "filename": "", "title": "", "channels": "comma-separated channel ids",
                 "initial_comment": "message text posted with the file", "thread_ts": "share in a thread"})
    def files_upload(self, content: str | None = None, file: str | None = None, filename: str | None = None,
                     filetype: str | None = None, title: str | None = None, channels: str | None = None,
                     initial_comment: str | None = None, thread_ts: str | None = None) -> dict[str, Any]:
        data = content if content is not None else file
        if data is None:
            raise slack_error("no_file_data")
        if len(data.encode()) > 1_000_000:
            raise slack_error("post_contents_too_large")
        targets = self._targets([c.strip() for c in (channels or "").split(",") if c.strip()])
        f = self._new_file(filename or title or "untitled", title, filetype, data)
        self.db.files[f.id] = f
        if targets:
            self._share([f], targets, initial_comment, thread_ts)
        return {"ok": True, "file": self.file_json(self.db.files[f.id])}

    @api("files.getUploadURLExternal", "POST api/files.getUploadURLExternal",
         "Step 1 of an upload: a URL to POST the file's bytes to, and the new file's id.", writes=True,
         params={"filename": "", "length": "size in bytes"})
    def files_getUploadURLExternal(self, filename: str, length: int, alt_txt: str | None = None,
                                   snippet_type: str | None = None) -> dict[str, Any]:
        if not filename.strip():
            raise slack_error("missing_argument")
        if length <= 0 or length > 1_000_000:
            raise slack_error("file_upload_size_restricted" if length > 0 else "invalid_arguments")
        f = self._new_file(filename, None, snippet_type, "", pending=True)
        self.db.files[f.id] = f.model_copy(update={"size": length})
        return {"ok": True, "upload_url": f"https://files.slack.com/upload/v1/{f.id}", "file_id": f.id}

    def receive_upload(self, file_id: str, data: bytes) -> bool:
        """Step 2 (the HTTP app calls this for POST /upload/v1/<id>): store the bytes of a pending upload."""
        f = self.db.files.get(file_id)
        if f is None or not f.pending:
            return False
        text = data.decode("utf-8", errors="replace")
        self.db.files[f.id] = f.model_copy(update={"content": text, "size": len(data), "uploaded": True})
        return True

    @api("files.completeUploadExternal", "POST api/files.completeUploadExternal",
         "Step 3 of an upload: publish uploaded files and share them in a channel.", writes=True,
         params={"files": 'JSON array: [{"id": "F...", "title": "..."}]', "channel_id": "share in this channel",
                 "initial_comment": "", "thread_ts": ""})
    def files_completeUploadExternal(self, files: str, channel_id: str | None = None, channels: str | None = None,
                                     initial_comment: str | None = None, thread_ts: str | None = None,
                                     blocks: str | None = None) -> dict[str, Any]:
        try:
            items = loads(files)
        except ValueError:
            raise slack_error("invalid_arguments") from None
        if not isinstance(items, list) or not items or not all(isinstance(i, dict) and isinstance(i.get("id"), str)
                                                                for i in items):
            raise slack_error("invalid_arguments")
        done = []
        for item in items:
            f = self.db.files.get(item["id"])
            if f is None or not f.pending or f.user != self.me or not f.uploaded:
                raise slack_error("file_not_found")
            title = item.get("title") if isinstance(item.get("title"), str) and item.get("title") else f.title
            f = f.model_copy(update={"pending": None, "uploaded": None, "title": title})
            self.db.files[f.id] = f
            done.append(f)
        names = ([channel_id] if channel_id else []) + [c.strip() for c in (channels or "").split(",") if c.strip()]
        targets = self._targets(names)
        if targets:
            self._share(done, targets, initial_comment, thread_ts)
        return {"ok": True, "files": [{"id": f.id, "title": f.title} for f in done]}

    @api("files.info", "POST api/files.info", "A file's details and its text content.", params={"file": "file id"})
    def files_info(self, file: str, count: int | None = None, page: int | None = None, limit: int | None = None,
                   cursor: str | None = None) -> dict[str, Any]:
        f = self._file(file)
        out: dict[str, Any] = {"ok": True, "file": self.file_json(f)}
        if f.mimetype.startswith("text/") or f.mimetype == "application/json":
            out["content"] = f.content
            out["is_truncated"] = False
        out["comments"] = []
        out["response_metadata"] = {"next_cursor": ""}
        return out

    @api("files.list", "POST api/files.list", "Files you can see, newest first; filter by channel or user.",
         params={"channel": "channel id", "user": "uploader's user id", "types": "all, snippets, images, pdfs...",
                 "count": "per page", "page": ""})
    def files_list(self, channel: str | None = None, user: str | None = None, ts_from: str | None = None,
                   ts_to: str | None = None, types: str = "all", count: int | None = None, page: int | None = None,
                   show_files_hidden_by_limit: bool | None = None, team_id: str | None = None) -> dict[str, Any]:
        want = {t.strip() for t in types.split(",") if t.strip()} or {"all"}
        if want - _TYPES:
            raise slack_error("unknown_type")
        if user and user not in self.db.users:
            raise slack_error("user_not_found")
        cid = self._chan(channel).id if channel else None
        try:
            lo = int(float(ts_from)) if ts_from else None
            hi = int(float(ts_to)) if ts_to else None
        except ValueError:
            raise slack_error("invalid_arguments") from None
        rows = [f for f in self.db.files.values() if self._visible(f) and (cid is None or cid in f.channels)
                and (user is None or f.user == user) and (lo is None or f.created >= lo)
                and (hi is None or f.created <= hi) and _kind_matches(f, want)]
        rows.sort(key=lambda f: (-f.created, f.id))
        size = min(count, 1000) if count and count > 0 else 100
        number = max(1, page or 1)
        chunk = rows[(number - 1) * size: number * size]
        return {"ok": True, "files": [self.file_json(f) for f in chunk],
                "paging": {"count": size, "total": len(rows), "page": number, "pages": max(1, -(-len(rows) // size))}}

    @api("files.delete", "POST api/files.delete", "Delete a file (yours, or any as an admin).", writes=True,
         params={"file": "file id"})
    def files_delete(self, file: str) -> dict[str, Any]:
        f = self._file(file)
        me = self.db.users.get(self.me)
        if f.user != self.me and not (me and me.is_admin):
            raise slack_error("cant_delete_file")
        del self.db.files[f.id]
        return {"ok": True}

    # -- seeding helper -----------------------------------------------------------------------------------
    def add_file(self, channel: str | None, *, name: str, content: str, user: str, title: str | None = None,
                 filetype: str | None = None, when: datetime | None = None, post: bool = False) -> SlackFile:
        """Plant a file uploaded by `user` (a Slack user id) into `channel` (id or name; None: not shared).
        post=True also plants the share message in the channel (env0's seeded files have none)."""
        c = (self.db.channels.get(channel) or self.channel_by_name(channel)) if channel else None
        ft = filetype_of(name, filetype)
        fid = "F" + self.new_id("file", SLACK_ALPHABET, 10)
        f = SlackFile(id=fid, name=name, title=title or name, filetype=ft, mimetype=MIME.get(ft, "text/plain"),
                      user=user, created=int((when or self.ws.now).timestamp()), content=content,
                      size=len(content.encode()), channels=(c.id,) if c else ())
        if c is not None and post:
            m = Message(channel=c.id, ts=self._next_ts(when), user=user, text="", files=(fid,))
            self.db.messages[f"{c.id}/{m.ts}"] = m
            f = f.model_copy(update={"shares": ((c.id, m.ts),)})
        self.db.files[fid] = f
        return f
