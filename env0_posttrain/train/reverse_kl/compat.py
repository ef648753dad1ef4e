"""A teacher may score the student's tokens only if both read the same ids the same way.

Reverse KL compares log p_student(t) with log p_teacher(t) for the same token id t at the same position: with another
vocabulary an id means another string, and with another chat template the teacher would be scoring a conversation
laid out differently from the one it was trained on. Either silently makes the signal noise, so it is refused before
anything loads or trains.
"""

from __future__ import annotations

from typing import Any


class TeacherMismatch(ValueError):
    """The teacher's tokenizer or chat template is not the student's."""


def _name(tok: Any, given: str | None) -> str:
    return given or str(getattr(tok, "name_or_path", "") or type(tok).__name__)


def _specials(tok: Any) -> dict[str, Any]:
    return {"eos": (tok.eos_token, tok.eos_token_id), "pad": (tok.pad_token, tok.pad_token_id),
            "bos": (tok.bos_token, tok.bos_token_id), "all": sorted(tok.all_special_tokens)}


def _vocab_difference(a: dict[str, int], b: dict[str, int]) -> str | None:
    if a == b:
        return None
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    moved = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    parts = [f"sizes {len(a)} vs {len(b)}"]
    if only_a:
        parts.append(f"{len(only_a)} tokens only the student has (e.g. {only_a[:3]!r})")
    if only_b:
        parts.append(f"{len(only_b)} tokens only the teacher has (e.g. {only_b[:3]!r})")
    if moved:
        parts.append(f"{len(moved)} tokens with other ids (e.g. {moved[0]!r}: {a[moved[0]]} vs {b[moved[0]]})")
    return "vocabulary differs: " + "; ".join(parts)


def compatibility_problems(student_tokenizer: Any, teacher_tokenizer: Any) -> list[str]:
    """What differs between the two tokenizers (vocabulary, special tokens, chat template); [] = compatible."""
    problems = []
    vocab = _vocab_difference(student_tokenizer.get_vocab(), teacher_tokenizer.get_vocab())
    if vocab:
        problems.append(vocab)
    s, t = _specials(student_tokenizer), _specials(teacher_tokenizer)
    for key in s:
        if s[key] != t[key]:
            problems.append(f"special token {key} differs: {s[key]!r} vs {t[key]!r}")
    st, tt = getattr(student_tokenizer, "chat_template", None), getattr(teacher_tokenizer, "chat_template", None)
    if st is None or tt is None:
        missing = [who for who, tpl in (("the student", st), ("the teacher", tt)) if tpl is None]
        problems.append(f"chat template missing in {' and '.join(missing)}")
    elif st.encode("utf-8") != tt.encode("utf-8"):
        at = next((i for i, (x, y) in enumerate(zip(st, tt)) if x != y), min(len(st), len(tt)))
        problems.append(f"chat template differs ({len(st)} vs {len(tt)} chars, first difference at char {at}: "
                        f"{st[at:at + 30]!r} vs {tt[at:at + 30]!r})")
    return problems


def check_teacher_compatible(student_tokenizer: Any, teacher_tokenizer: Any, student_name: str | None = None,
                             teacher_name: str | None = None) -> None:
    """Raise `TeacherMismatch` naming both models and every difference, unless vocabulary, special tokens and chat
    template (byte for byte) are the same."""
    problems = compatibility_problems(student_tokenizer, teacher_tokenizer)
    if problems:
        raise TeacherMismatch(
            f"teacher {_name(teacher_tokenizer, teacher_name)!r} cannot score student "
            f"{_name(student_tokenizer, student_name)!r} token by token: " + "; ".join(problems))
