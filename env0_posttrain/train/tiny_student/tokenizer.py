"""A byte-level BPE tokenizer trained locally, wearing the Qwen3.5 chat template.

The chat template is TRL's packaged `qwen3_5_nothink.jinja`, byte for byte: TRL recognises it by
equality, so `assistant_only_loss` swaps in its training twin (with generation markers) and
`add_response_schema` gives the offline student the same tool-call parser as Qwen3.5-9B.

Entities (emails, channel names, tool names, fixed template boilerplate) become whole added
tokens: copying one token from the prompt is what a tiny model can learn in minutes on a CPU,
and it shortens every sequence.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

EOS = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIAL_TOKENS = [EOS, IM_START, IM_END]
# Structural markers the Qwen3.5 template emits; Qwen's own tokenizer keeps them whole too.
MARKER_TOKENS = [
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>",
    "<function=", "</function>", "<parameter=", "</parameter>",
]


def qwen3_5_chat_template() -> str:
    """TRL's packaged Qwen3.5 (no-think) template, read from the installed package."""
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / "qwen3_5_nothink.jinja").read_text(encoding="utf-8")


def template_boilerplate() -> list[str]:
    """The fixed prose the template wraps around tool schemas: one token each, never generated."""
    template = qwen3_5_chat_template()
    start = template.index('"# Tools')
    header = json.loads(template[start : template.index('" }}', start) + 1])
    marker = "{{- '\\n\\nIf you choose"
    i = template.index(marker) + len("{{- '")
    j = template.index("' }}", i)
    reminder = template[i:j].encode().decode("unicode_escape")
    return [header, "\n</tools>", reminder, "<think>\n\n</think>\n\n"]


def tool_schema_token(tool: dict) -> str:
    """A tool definition exactly as the template renders it (`tool | tojson`), to add as one token."""
    return json.dumps(tool, ensure_ascii=False)


def format_primer() -> str:
    """The template's own description of the call format, as plain text for pre-training.

    Real base models have read this prompt; ours reads it once here, because the prompt carries it
    as a single token. It shows the syntax with placeholder names only, never a real call.
    """
    return template_boilerplate()[2].lstrip("\n")


def build_tokenizer(
    corpus: Iterable[str], entity_tokens: Sequence[str], vocab_size: int, min_frequency: int = 2
) -> PreTrainedTokenizerFast:
    fixed = list(dict.fromkeys([*MARKER_TOKENS, *template_boilerplate(), *entity_tokens]))
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    tok.add_tokens([AddedToken(t, normalized=False, special=False) for t in fixed if t])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=IM_END,
        pad_token=EOS,
        bos_token=None,
        unk_token=None,
        additional_special_tokens=[IM_START],
        model_max_length=1 << 20,
    )
    fast.chat_template = qwen3_5_chat_template()
    return fast


def check_round_trip(tok: PreTrainedTokenizerFast, text: str) -> None:
    """Byte-level BPE must decode to exactly what it encoded, or parsed tool calls would drift."""
    back = tok.decode(tok(text, add_special_tokens=False)["input_ids"])
    if back != text:
        raise ValueError(f"tokenizer does not round-trip: {text[:80]!r} -> {back[:80]!r}")
