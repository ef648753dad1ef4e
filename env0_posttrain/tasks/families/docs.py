"""Docs family: creating, appending, inserting, replacing, deleting text and reading documents."""

from __future__ import annotations

import random
from typing import Any

from env0_posttrain.tasks.families.common import Script, pick_people, person_params
from env0_posttrain.tasks.families.drive_support import file_by_name, free_names, role_for
from env0_posttrain.tasks.gates import standard_gates
from env0_posttrain.tasks.judge import Judge
from env0_posttrain.tasks.pools import DOC_LINES, DOC_TITLES
from env0_posttrain.tasks.template import Template, register

F = "docs"
GET, UPDATE, CREATE = "docs_documents_get", "docs_documents_batchUpdate", "docs_documents_create"
LIST = "drive_files_list"
TYPOS = (("recieve", "receive"), ("seperate", "separate"), ("occured", "occurred"), ("definately", "definitely"),
         ("adress", "address"), ("calender", "calendar"))
FIELDS = {"status": ("Status: on track.", "Status: blocked on legal review."),
          "decision": ("Decision: ship the beta to all customers.", "Decision: delay the launch by two weeks."),
          "risk": ("Risk: vendor delivery may slip a week.", "Risk: the budget is not approved yet.")}


def _reg(tid: str, phrasings: tuple[str, ...], sample: Any, solve: Any, judge: Any, tools: tuple[str, ...],
         distractors: tuple[str, ...] = (), plant: Any = None, starter: bool = False, answer: Any = None) -> None:
    kw = {"plant": plant} if plant else {}
    register(Template(id=tid, family=F, phrasings=phrasings, sample=sample, solve=solve, judge=judge, tools=tools,
                      distractors=distractors, starter=starter, answer=answer, **kw))


def sample_doc(rng: random.Random, ws: Any, k: int = 1) -> dict[str, Any]:
    names = rng.sample(free_names(ws, DOC_TITLES), k)
    out: dict[str, Any] = {"doc": names[0]}
    if k > 1:
        out["doc2"] = names[1]
    return out


def body_lines(p: dict[str, Any]) -> list[str]:
    return [p["doc"], *p.get("lines", ["Owner: the operations team."])]


def plant_doc(ws: Any, title: str, lines: list[str]) -> Any:
    return ws.docs.add_document(title=title, text="\n".join(lines) + "\n")


def _plant(ws: Any, p: dict[str, Any]) -> None:
    plant_doc(ws, p["doc"], body_lines(p))
    if "doc2" in p and p.get("plant_both"):
        plant_doc(ws, p["doc2"], [p["doc2"], *p.get("lines", ["Owner: the operations team."])])


def find_doc(ws: Any, title: str) -> Any:
    for d in ws.docs.db.documents.values():
        if d.title == title:
            return d
    raise LookupError(f"no document titled {title!r}")


def doc_after(j: Judge, title: str) -> str:
    d = j.end.docs.db.documents.get(find_doc(j.start, title).documentId)
    return d.text if d else ""


def _doc_id(s: Script, title: str) -> str:
    return file_by_name(s, title)["id"]


def _sample_line(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_doc(rng, ws), "line": rng.choice(DOC_LINES)}


# -- create ----------------------------------------------------------------------------------------

def _new_docs(j: Judge) -> list[Any]:
    return [d for k, d in j.end.docs.db.documents.items() if k not in j.start.docs.db.documents]


def _solve_create(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s(CREATE, body={"title": p["doc"]})
    return s.calls


_reg("docs_create_titled", ("Create a new Google Doc titled {doc}.", "Start an empty document called {doc}."),
     lambda rng, ws: sample_doc(rng, ws), _solve_create,
     lambda j, p: (j.check("created", any(d.title == p["doc"] for d in _new_docs(j))), standard_gates(j)),
     (CREATE,), (GET, UPDATE), starter=True)


def _solve_create_text(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    did = s(CREATE, body={"title": p["doc"]})["documentId"]
    s(UPDATE, documentId=did, body={"requests": [{"insertText": {"location": {"index": 1}, "text": p["line"]}}]})
    return s.calls


def _judge_create_text(j: Judge, p: dict[str, Any]) -> None:
    made = [d for d in _new_docs(j) if d.title == p["doc"]]
    j.check("created", bool(made))
    j.check("text", any(p["line"] in d.text for d in made))
    standard_gates(j)


_reg("docs_create_with_text", ('Create a document called {doc} whose text is "{line}".',
                               'Make a new doc, {doc}, and write "{line}" in it.'),
     _sample_line, _solve_create_text, _judge_create_text, (CREATE, UPDATE), (GET,))


def _sample_share_new(rng: random.Random, ws: Any) -> dict[str, Any]:
    (q,) = pick_people(rng, ws)
    return {**sample_doc(rng, ws), **person_params(q)}


def _solve_share_new(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    did = s(CREATE, body={"title": p["doc"]})["documentId"]
    s("drive_permissions_create", fileId=did, body={"type": "user", "role": "writer", "emailAddress": p["email"]})
    return s.calls


def _judge_share_new(j: Judge, p: dict[str, Any]) -> None:
    made = [d for d in _new_docs(j) if d.title == p["doc"]]
    j.check("created", bool(made))
    j.check("shared", any(role_for(j.end.drive.db.files.get(d.documentId), p["email"]) == "writer" for d in made))
    standard_gates(j, audience={p["email"]})


_reg("docs_create_and_share", ("Create a doc called {doc} and give {name} edit access to it.",
                               "Start a new document {doc} and share it with {first} as an editor."),
     _sample_share_new, _solve_share_new, _judge_share_new, (CREATE, "drive_permissions_create"), (UPDATE,))


# -- edit text ---------------------------------------------------------------------------------------

def _insert(tid: str, phrasings: tuple[str, ...], at_end: bool, starter: bool = False, sample: Any = _sample_line) -> None:
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        did = _doc_id(s, p["doc"])
        req = ({"insertText": {"endOfSegmentLocation": {}, "text": "\n" + p["line"]}} if at_end
               else {"insertText": {"location": {"index": 1}, "text": p["line"] + "\n"}})
        s(UPDATE, documentId=did, body={"requests": [req]})
        return s.calls

    def judge(j: Judge, p: dict[str, Any]) -> None:
        text = doc_after(j, p["doc"])
        lines = [x.strip() for x in text.strip().split("\n")]
        j.check("placed", bool(lines) and (lines[-1] if at_end else lines[0]) == p["line"])
        j.guard("kept", all(x in text for x in body_lines(p)))
        standard_gates(j)

    _reg(tid, phrasings, sample, solve, judge, (LIST, UPDATE), (GET, CREATE), plant=_plant, starter=starter)


_insert("docs_append_line", ('Add the line "{line}" at the end of {doc}.', 'Append "{line}" to the {doc} document.'),
        at_end=True, starter=True)
_insert("docs_insert_first_line", ('Insert "{line}" as the very first line of {doc}.',
                                   'Put "{line}" at the top of the {doc} doc.'), at_end=False)



def _sample_reviewed(rng: random.Random, ws: Any) -> dict[str, Any]:
    (q,) = pick_people(rng, ws)
    return {**sample_doc(rng, ws), **person_params(q), "line": f"Reviewed by {q.name}."}


_insert("docs_mark_reviewed", ('Add the line "Reviewed by {name}." at the end of {doc}.',
                               '{first} reviewed {doc}; note it at the bottom as "Reviewed by {name}."'),
        at_end=True, sample=_sample_reviewed)


def _sample_two(rng: random.Random, ws: Any) -> dict[str, Any]:
    return {**sample_doc(rng, ws, 2), "line": rng.choice(DOC_LINES), "plant_both": True}


def _solve_two(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    for title in (p["doc"], p["doc2"]):
        did = _doc_id(s, title)
        s(UPDATE, documentId=did, body={"requests": [{"insertText": {"endOfSegmentLocation": {}, "text": "\n" + p["line"]}}]})
    return s.calls


def _judge_two(j: Judge, p: dict[str, Any]) -> None:
    ends = [doc_after(j, t).strip().split("\n")[-1].strip() for t in (p["doc"], p["doc2"])]
    j.check("appended", sum(e == p["line"] for e in ends) / 2)
    standard_gates(j)


_reg("docs_append_to_two", ('Append "{line}" to both {doc} and {doc2}.', 'Add the line "{line}" at the end of {doc} and of {doc2}.'),
     _sample_two, _solve_two, _judge_two, (LIST, UPDATE), (GET,), plant=_plant)


def _replace(tid: str, phrasings: tuple[str, ...], sample: Any, pair: Any) -> None:
    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        did = _doc_id(s, p["doc"])
        old, new = pair(p)
        s(UPDATE, documentId=did, body={"requests": [{"replaceAllText": {"containsText": {"text": old, "matchCase": True},
                                                                          "replaceText": new}}]})
        return s.calls

    def judge(j: Judge, p: dict[str, Any]) -> None:
        old, new = pair(p)
        text = doc_after(j, p["doc"])
        j.check("old_gone", old not in text)
        j.check("new_there", new in text)
        j.guard("rest_kept", p["doc"] in text)
        standard_gates(j)

    _reg(tid, phrasings, sample, solve, judge, (LIST, UPDATE), (GET, CREATE), plant=_plant)


def _sample_status(rng: random.Random, ws: Any) -> dict[str, Any]:
    old, new = FIELDS["status"] if rng.random() < 0.5 else FIELDS["status"][::-1]
    return {**sample_doc(rng, ws), "lines": [old, rng.choice(DOC_LINES[:2])], "old": old, "new": new}


_replace("docs_update_status", ('In {doc}, replace "{old}" with "{new}".', 'The {doc} doc says "{old}"; change that to "{new}".'),
         _sample_status, lambda p: (p["old"], p["new"]))


def _sample_typo(rng: random.Random, ws: Any) -> dict[str, Any]:
    wrong, right = rng.choice(TYPOS)
    return {**sample_doc(rng, ws), "lines": [f"Please {wrong} this note.", f"We will {wrong} updates weekly."],
            "wrong": wrong, "right": right}


_replace("docs_fix_typo", ('Fix the typo "{wrong}" (it should be "{right}") everywhere in {doc}.',
                           'Replace every "{wrong}" with "{right}" in the document {doc}.'),
         _sample_typo, lambda p: (p["wrong"], p["right"]))


def _sample_delete(rng: random.Random, ws: Any) -> dict[str, Any]:
    lines = rng.sample(DOC_LINES, 3)
    return {**sample_doc(rng, ws), "lines": lines, "line": rng.choice(lines)}


def _solve_delete(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    did = _doc_id(s, p["doc"])
    content = s(GET, documentId=did)["body"]["content"]
    last = content[-1]["endIndex"]
    for el in content:
        runs = "".join(e.get("textRun", {}).get("content", "") for e in el.get("paragraph", {}).get("elements", []))
        if runs.strip() == p["line"]:
            lo, hi = el["startIndex"], el["endIndex"]
            if hi == last:  # the segment's final newline cannot go: take the one before the line instead
                lo, hi = lo - 1, hi - 1
            s(UPDATE, documentId=did, body={"requests": [{"deleteContentRange": {"range": {"startIndex": lo, "endIndex": hi}}}]})
            break
    return s.calls


def _judge_delete(j: Judge, p: dict[str, Any]) -> None:
    text = doc_after(j, p["doc"])
    j.check("deleted", p["line"] not in text)
    j.guard("rest_kept", all(x in text for x in body_lines(p) if x != p["line"]))
    standard_gates(j)


_reg("docs_delete_line", ('Delete the line "{line}" from {doc}.', 'Remove "{line}" from the {doc} document; keep the rest.'),
     _sample_delete, _solve_delete, _judge_delete, (LIST, GET, UPDATE), (CREATE,), plant=_plant)


# -- templates and copies -----------------------------------------------------------------------

def _sample_fill(rng: random.Random, ws: Any) -> dict[str, Any]:
    (q,) = pick_people(rng, ws)
    return {**sample_doc(rng, ws), **person_params(q), "lines": ["Prepared for: NAME_HERE", "Owner: NAME_HERE"]}


def _solve_fill(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    src = _doc_id(s, p["doc"])
    new = s("drive_files_copy", fileId=src, body={"name": f"{p['doc']} - {p['first']}"})["id"]
    s(UPDATE, documentId=new, body={"requests": [{"replaceAllText": {"containsText": {"text": "NAME_HERE", "matchCase": True},
                                                                   "replaceText": p["name"]}}]})
    return s.calls


def _judge_fill(j: Judge, p: dict[str, Any]) -> None:
    made = [d for d in _new_docs(j) if d.title == f"{p['doc']} - {p['first']}"]
    j.check("copied", bool(made))
    j.check("filled", any(p["name"] in d.text and "NAME_HERE" not in d.text for d in made))
    j.guard("template_kept", "NAME_HERE" in doc_after(j, p["doc"]))
    standard_gates(j)


_reg("docs_fill_template_copy", ('Copy the {doc} template as "{doc} - {first}" and replace NAME_HERE with {name} in the copy.',
                                 'Make a copy of {doc} named "{doc} - {first}", then fill every NAME_HERE in it with {name}. '
                                 'Leave the template itself unchanged.'),
     _sample_fill, _solve_fill, _judge_fill, (LIST, "drive_files_copy", UPDATE), (GET, CREATE), plant=_plant)


def _solve_rename(ws: Any, p: dict[str, Any]) -> list:
    s = Script(ws)
    s("drive_files_update", fileId=_doc_id(s, p["doc"]), body={"name": p["doc2"]})
    return s.calls


def _judge_rename(j: Judge, p: dict[str, Any]) -> None:
    d = j.end.docs.db.documents.get(find_doc(j.start, p["doc"]).documentId)
    j.check("renamed", d is not None and d.title == p["doc2"])
    standard_gates(j)


_reg("docs_rename_document", ("Rename the document {doc} to {doc2}.", "Change the title of {doc} to {doc2}."),
     lambda rng, ws: sample_doc(rng, ws, 2), _solve_rename, _judge_rename, (LIST, "drive_files_update"), (UPDATE,),
     plant=_plant)


# -- questions ---------------------------------------------------------------------------------------

def _ask(field: str, phrasings: tuple[str, ...]) -> None:
    def sample(rng: random.Random, ws: Any) -> dict[str, Any]:
        line = rng.choice(FIELDS[field])
        return {**sample_doc(rng, ws), "lines": [rng.choice(DOC_LINES[:2]), line], "fact": line.split(": ", 1)[1].rstrip(".")}

    def solve(ws: Any, p: dict[str, Any]) -> list:
        s = Script(ws)
        s(GET, documentId=_doc_id(s, p["doc"]))
        return s.calls

    _reg(f"docs_read_{field}", phrasings, sample, solve,
         lambda j, p: (j.answer_mentions("fact", [p["fact"]]), standard_gates(j)), (LIST, GET), (UPDATE,),
         plant=_plant, answer=lambda ws, p: p["fact"])


_ask("status", ("What status does {doc} report?", "Read {doc} and tell me its status line."))
_ask("decision", ("What decision is recorded in {doc}?", "Which decision does the {doc} document record?"))
_ask("risk", ("What risk does {doc} mention?", "Look up the risk listed in {doc}."))
