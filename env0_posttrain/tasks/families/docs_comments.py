"""Docs family, comments: answering a comment on a doc and resolving it (Drive's replies with action "resolve"; the
Docs API has no comments of its own)."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from env0_posttrain.tasks.families.common import Script, pick_people, person_params
from env0_posttrain.tasks.families.drive_support import file_by_name, sample_file
from env0_posttrain.tasks.families.mail_support import text_mentions
from env0_posttrain.tasks.gates import _address, standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.template import Template, register

REPLIES = ("Done, thanks for flagging.", "Fixed in the latest version.", "Updated the figures as suggested.",
           "Good catch, corrected.", "Changed it, please take another look.")
COMMENTS = ("The totals in section 2 look off.", "Can you add the owner for each item?", "This date seems wrong.",
            "Please spell out the acronym here.", "Is this still the current plan?")

F = "docs"


def _reg(tid: str, phrasings: tuple[str, ...], sample: Any, solve: Any, judge: Any,
         tools: tuple[str, ...], distractors: tuple[str, ...], plant: Any = None) -> None:
    kw = {"plant": plant} if plant else {}
    register(Template(id=tid, family=F, phrasings=phrasings, sample=sample, solve=solve, judge=judge, tools=tools,
                      distractors=distractors, **kw))


# -- comment resolution on a doc --------------------------------------------------------------------------------

def _sample_comment(rng: random.Random, ws: Any) -> dict[str, Any]:
    a, b = pick_people(rng, ws, 2)
    comment, other = rng.sample(COMMENTS, 2)
    return {**sample_file(rng, ws), **person_params(a), "other_email": b.email, "comment": comment,
            "other_comment": other, "reply": rng.choice(REPLIES)}


def _plant_comment(ws: Any, p: dict[str, Any]) -> None:
    doc = ws.docs.add_document(title=p["file"], text=f"{p['file']}\n\nDraft for review.\n",
                               shared_with={p["email"]: "commenter", p["other_email"]: "commenter"})
    ws.drive.add_comment(doc.documentId, p["comment"], author=p["email"], when=ws.now - timedelta(hours=5))
    ws.drive.add_comment(doc.documentId, p["other_comment"], author=p["other_email"], when=ws.now - timedelta(hours=4))


def _comments(ws: Any, p: dict[str, Any]) -> dict[str, Any]:
    fid = next(f.id for f in ws.drive.db.files.values() if f.name == p["file"])
    return {c.content: c for c in ws.drive.db.comments.values() if c.fileId == fid}


def _solve_comment(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    f = file_by_name(s, p["file"])
    listed = s("drive_comments_list", fileId=f["id"], fields="comments(id,content,author,resolved)")["comments"]
    cid = next(c["id"] for c in listed if c["content"] == p["comment"])
    s("drive_replies_create", fileId=f["id"], commentId=cid, fields="id,action",
      body={"content": p["reply"], "action": "resolve"})
    return s.calls


def _judge_comment(j: Judge, p: dict[str, Any]) -> None:
    start = _comments(j.start, p)
    target, other = start[p["comment"]], start[p["other_comment"]]
    now = j.end.drive.db.comments.get(target.id)
    mine = [r for r in j.end.drive.replies_of(target.id) if _address(r.authorEmail) == j.end.me.email]
    j.check("resolved", now is not None and now.resolved and not now.deleted)
    j.check("replied", any(text_mentions(r.content, p["reply"]) for r in mine), f"replies: {[r.content for r in mine]}")
    j.guard("other_comment_open", j.end.drive.db.comments.get(other.id) == other
            and not j.end.drive.replies_of(other.id))
    j.guard("doc_unchanged", j.end.docs.db.documents.get(target.fileId) == j.start.docs.db.documents.get(target.fileId))
    standard_gates(j)


_reg("docs_resolve_comment_with_reply",
     ('On the doc "{file}", reply to {name}\'s comment "{comment}" with "{reply}" and resolve it.',
      'In "{file}", answer {first}\'s comment ("{comment}") saying "{reply}", then mark the comment resolved.'),
     _sample_comment, _solve_comment, _judge_comment, ("drive_files_list", "drive_comments_list", "drive_replies_create"),
     ("drive_comments_delete", "drive_comments_update", "docs_documents_batchUpdate"), plant=_plant_comment)
