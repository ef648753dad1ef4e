"""Teachers score token ids: a local checkpoint's log-probs equal a direct forward pass; a vLLM-shaped server's reply
is parsed in both request modes, and every hostile reply (an endless or oversized body included) is a counted error,
never a log-probability."""

from __future__ import annotations

import pytest
import torch

from env0_posttrain.spec.onpolicy_kl import ReverseKLSpec
from env0_posttrain.train.reverse_kl.scorers import LocalTeacher, ServerTeacher, checked_logprobs, teacher_from_spec
from env0_posttrain_tests.support.reverse_kl import FakeVLLM, FakeVLLMServer, notes_teacher_rows, student_and_teacher


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return student_and_teacher(tmp_path_factory.mktemp("scorers"))


@pytest.fixture(scope="module")
def teacher(pair):
    return LocalTeacher(pair[1], batch_size=2)


def _sequences(tokenizer):
    rows = notes_teacher_rows(3)
    ids = [tokenizer.apply_chat_template(r["messages"], tools=r["tools"], tokenize=True, return_dict=True)["input_ids"]
           for r in rows]
    return [ids[0][:40], ids[1], ids[2][:7]]  # different lengths: the batch pads, the answer must not notice


def test_local_teacher_logprobs_equal_a_direct_forward_pass(teacher):
    from transformers import AutoModelForCausalLM

    seqs = _sequences(teacher.tokenizer)
    scores = teacher.score(seqs)
    direct_model = AutoModelForCausalLM.from_pretrained(teacher.name).eval()
    for seq, score in zip(seqs, scores, strict=True):
        assert score.error is None and len(score.logprobs) == len(seq) - 1
        with torch.no_grad():
            logits = direct_model(torch.tensor([seq])).logits[0]
        direct = torch.log_softmax(logits, -1)[torch.arange(len(seq) - 1), torch.tensor(seq[1:])]
        assert torch.allclose(torch.tensor(score.logprobs), direct, atol=1e-5)


def test_server_teacher_returns_the_local_models_logprobs_in_both_modes(teacher):
    seqs = _sequences(teacher.tokenizer)
    want = teacher.score(seqs)
    state = FakeVLLM(teacher)
    with FakeVLLMServer(state) as url:
        for mode in ("prompt_logprobs", "echo"):
            server = ServerTeacher(url, "tiny-teacher", teacher.tokenizer, mode=mode, timeout_s=30)
            got = server.score(seqs)
            server.close()
            for g, w in zip(got, want, strict=True):
                assert g.error is None and g.logprobs == pytest.approx(w.logprobs, abs=1e-6)
    assert [r["prompt"] for r in state.requests] == seqs * 2  # the ids sent are exactly the sequences, as ids
    assert state.requests[0]["prompt_logprobs"] == 0 and state.requests[-1]["echo"] is True
    assert state.requests[-1]["return_tokens_as_token_ids"] is True


@pytest.mark.parametrize("mode", ["prompt_logprobs", "echo"])
@pytest.mark.parametrize(("sabotage", "kind"), [("wrong_count", "shape"), ("nan", "nonfinite"), ("positive", "nonfinite"),
                                                ("other_ids", "ids"), ("no_choices", "shape"), ("status_500", "http"),
                                                ("not_json", "http"), ("endless", "size"),
                                                ("huge_declared", "size")])
def test_hostile_server_replies_are_counted_errors(teacher, mode, sabotage, kind):
    seqs = _sequences(teacher.tokenizer)[:2]
    with FakeVLLMServer(FakeVLLM(teacher, sabotage=sabotage)) as url:
        server = ServerTeacher(url, "tiny-teacher", teacher.tokenizer, mode=mode, timeout_s=30)
        got = server.score(seqs)
        server.close()
    assert [g.logprobs for g in got] == [None, None]
    assert [g.error_kind for g in got] == [kind, kind]


def test_checked_logprobs_rules():
    assert checked_logprobs([-1.0, -0.0], 3).logprobs == [-1.0, 0.0]
    assert checked_logprobs([-1.0, True], 3).error_kind == "shape"
    assert checked_logprobs("-1", 2).error_kind == "shape"
    assert checked_logprobs([float("-inf")], 2).error_kind == "nonfinite"


def test_tiny_teacher_is_larger_shares_the_tokenizer_and_is_cached(pair, tmp_path):
    import json

    from transformers import AutoTokenizer

    from env0_posttrain.train.reverse_kl.compat import check_teacher_compatible
    from env0_posttrain.train.reverse_kl.tiny_teacher import ensure_tiny_teacher, teacher_digest, teacher_info
    from env0_posttrain_tests.support.reverse_kl import small_teacher_spec

    student, built = pair
    info = teacher_info(built)
    cfg = {k: json.loads((p / "config.json").read_text()) for k, p in (("s", student), ("t", built))}
    assert cfg["t"]["hidden_size"] > cfg["s"]["hidden_size"] and cfg["t"]["model_type"] == cfg["s"]["model_type"]
    assert info["train_loss_last"] < info["train_loss_first"]  # it learned the rows
    check_teacher_compatible(AutoTokenizer.from_pretrained(str(student)), AutoTokenizer.from_pretrained(str(built)))
    cache, base = built.parent, built.parent.parent / "base"  # the tokenizer's origin (support.reverse_kl)
    assert ensure_tiny_teacher(cache, base, notes_teacher_rows(), small_teacher_spec()) == built  # no rebuild
    digest = lambda rows, spec: teacher_digest(base, rows, spec, info["torch_threads"])  # noqa: E731
    assert built.name.endswith(digest(notes_teacher_rows(), small_teacher_spec()))
    assert digest(notes_teacher_rows(5), small_teacher_spec()) != digest(notes_teacher_rows(), small_teacher_spec())
    assert digest(notes_teacher_rows(), small_teacher_spec(13)) != digest(notes_teacher_rows(), small_teacher_spec())
    spec = ReverseKLSpec(tiny_teacher=small_teacher_spec())
    scorer = teacher_from_spec(spec, student_dir=base, cache_dir=cache, teacher_rows=notes_teacher_rows())
    assert isinstance(scorer, LocalTeacher) and scorer.name.endswith(built.name)
