"""Teachers that score a token sequence: log p_teacher(ids[i+1] | ids[:i+1]) for every position.

Two behind one interface (`TeacherScorer`): a local transformers checkpoint (`LocalTeacher`), and an OpenAI-compatible
vLLM / SGLang server asked for the log-probabilities of the prompt it is sent (`ServerTeacher`). A server's reply is
hostile input like anything else from outside: a reply with the wrong number of log-probabilities, a non-finite or
positive one, token ids other than those sent, or a body larger than the sequence can need (`reply_cap`, read as a
stream and cut there, so an endless reply cannot fill the runner's memory) is a counted teacher error for that
sequence (`TeacherScore.error`), never a training signal.

Request shapes (vLLM's OpenAI server, /v1/completions, prompt given as token ids so nothing is re-tokenized):
  prompt_logprobs: {"prompt": ids, "max_tokens": 1, "prompt_logprobs": 0} -> choices[0].prompt_logprobs =
                   [null, {"<id>": {"logprob": x, "rank": r, "decoded_token": s}, ...}, ...] (the sent id is a key)
  echo:            {"prompt": ids, "max_tokens": 1, "echo": true, "logprobs": 0, "return_tokens_as_token_ids": true}
                   -> choices[0].logprobs = {"tokens": ["token_id:<id>", ...], "token_logprobs": [null, x, ...]}
                   (the prompt's tokens first, then the one generated token)
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

MAX_LOGPROB = 1e-4  # a log-probability is <= 0; this much above 0 is rounding, more is a broken reply
REPLY_BYTES_BASE = 64 * 1024  # the envelope: ids, usage, the generated token
REPLY_BYTES_PER_TOKEN = 1024  # vLLM writes ~80-200 bytes per prompt token (its id, logprob, rank, decoded text)

ErrorKind = Literal["http", "size", "shape", "ids", "nonfinite"]


def reply_cap(n_tokens: int) -> int:
    """The most bytes a scoring reply for `n_tokens` tokens may take: several times what either request mode needs."""
    return REPLY_BYTES_BASE + REPLY_BYTES_PER_TOKEN * n_tokens


@dataclass
class TeacherScore:
    """One sequence's teacher log-probabilities (len(ids) - 1 of them), or why there are none."""

    logprobs: list[float] | None
    error: str | None = None

    @property
    def error_kind(self) -> str | None:
        return self.error.split(":", 1)[0] if self.error else None


class TeacherScorer(Protocol):
    name: str
    tokenizer: Any

    def score(self, sequences: Sequence[Sequence[int]]) -> list[TeacherScore]: ...


def _failed(kind: ErrorKind, why: str) -> TeacherScore:
    return TeacherScore(None, f"{kind}: {why}")


def checked_logprobs(values: Any, n_tokens: int) -> TeacherScore:
    """`values` as the log-probabilities of a sequence of `n_tokens` tokens, or the error that rules them out."""
    if not isinstance(values, list) or len(values) != n_tokens - 1:
        got = len(values) if isinstance(values, list) else type(values).__name__
        return _failed("shape", f"expected {n_tokens - 1} log-probabilities, got {got}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return _failed("shape", f"log-probability {i} is {type(v).__name__}, not a number")
        if not math.isfinite(v) or v > MAX_LOGPROB:
            return _failed("nonfinite", f"log-probability {i} is {v!r}")
        out.append(float(v))
    return TeacherScore(out)


class LocalTeacher:
    """A transformers checkpoint on this machine: batched forward passes, log_softmax gathered at the sent ids."""

    def __init__(self, path: str | Path, device: str = "cpu", batch_size: int = 4, name: str | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from env0_posttrain.util import torch_threads
        from env0_posttrain.util.devices import model_dtype, resolve_device

        torch_threads.apply(torch)
        self.device = resolve_device(device)
        self.name = name or str(path)
        self.batch_size = batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.model = AutoModelForCausalLM.from_pretrained(str(path), dtype=model_dtype(self.device)).to(self.device).eval()
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0

    def score(self, sequences: Sequence[Sequence[int]]) -> list[TeacherScore]:
        import torch

        from env0_posttrain.train.reverse_kl.loss import token_logprobs

        out: list[TeacherScore] = []
        for start in range(0, len(sequences), self.batch_size):
            chunk = [list(s) for s in sequences[start:start + self.batch_size]]
            width = max(len(s) for s in chunk)
            if width < 2:
                out += [checked_logprobs([], len(s)) for s in chunk]
                continue
            ids = torch.tensor([s + [self.pad_id] * (width - len(s)) for s in chunk], device=self.device)
            mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in chunk], device=self.device)
            with torch.inference_mode():
                lp = token_logprobs(self.model, ids, mask).cpu()
            out += [checked_logprobs(lp[i, :len(s) - 1].tolist(), len(s)) for i, s in enumerate(chunk)]
        return out


class ServerTeacher:
    """An OpenAI-compatible completions server (vLLM, SGLang) scoring the sent token ids; `tokenizer`: the served
    model's tokenizer (a directory or hub name, or a loaded one), which the compatibility check reads."""

    def __init__(self, base_url: str, model: str, tokenizer: Any, mode: Literal["prompt_logprobs", "echo"] = "prompt_logprobs",
                 timeout_s: float = 120.0, api_key: str | None = None, transport: Any = None):
        import httpx

        if isinstance(tokenizer, (str, Path)):
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(str(tokenizer))
        self.tokenizer, self.model, self.mode = tokenizer, model, mode
        self.name = f"{model} at {base_url}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=timeout_s, headers=headers,
                                   transport=transport)

    def request_body(self, ids: list[int]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "prompt": ids, "max_tokens": 1, "temperature": 0.0}
        if self.mode == "prompt_logprobs":
            body["prompt_logprobs"] = 0
        else:
            body.update(echo=True, logprobs=0, return_tokens_as_token_ids=True)
        return body

    def score_one(self, ids: list[int]) -> TeacherScore:
        import httpx

        cap = reply_cap(len(ids))
        try:
            with self.client.stream("POST", "completions", json=self.request_body(ids)) as reply:
                reply.raise_for_status()
                declared = reply.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > cap:
                    return _failed("size", f"the reply declares {declared} bytes; at most {cap} for {len(ids)} tokens")
                body = bytearray()
                for chunk in reply.iter_bytes():
                    body += chunk
                    if len(body) > cap:
                        return _failed("size", f"the reply passed {cap} bytes for {len(ids)} tokens; cut there")
            data = json.loads(body)
        except (httpx.HTTPError, ValueError) as err:
            return _failed("http", f"{type(err).__name__}: {str(err)[:200]}")
        parse = parse_prompt_logprobs if self.mode == "prompt_logprobs" else parse_echo_logprobs
        return parse(data, ids)

    def score(self, sequences: Sequence[Sequence[int]]) -> list[TeacherScore]:
        return [self.score_one(list(s)) for s in sequences]

    def close(self) -> None:
        self.client.close()


def _choice(data: Any) -> dict[str, Any] | None:
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return None
    return choices[0]


def parse_prompt_logprobs(data: Any, ids: list[int]) -> TeacherScore:
    """vLLM's `prompt_logprobs` reply for the prompt `ids`."""
    choice = _choice(data)
    if choice is None:
        return _failed("shape", "the reply has no single choice")
    echoed = choice.get("prompt_token_ids", data.get("prompt_token_ids"))
    if echoed is not None and echoed != ids:
        return _failed("ids", "the reply's prompt_token_ids are not the ids sent")
    entries = choice.get("prompt_logprobs")
    if not isinstance(entries, list) or len(entries) != len(ids):
        got = len(entries) if isinstance(entries, list) else type(entries).__name__
        return _failed("shape", f"expected {len(ids)} prompt_logprobs entries, got {got}")
    values: list[Any] = []
    for i, (tid, entry) in enumerate(zip(ids, entries)):
        if i == 0:
            continue  # the first token has no context: vLLM sends null
        if not isinstance(entry, dict):
            return _failed("shape", f"prompt_logprobs[{i}] is {type(entry).__name__}")
        hit = entry.get(str(tid))
        if not isinstance(hit, dict):
            return _failed("ids", f"prompt_logprobs[{i}] does not score the sent token {tid} (keys {list(entry)[:3]})")
        values.append(hit.get("logprob"))
    return checked_logprobs(values, len(ids))


def parse_echo_logprobs(data: Any, ids: list[int]) -> TeacherScore:
    """An `echo` + `logprobs` reply (tokens as "token_id:<id>") for the prompt `ids`."""
    choice = _choice(data)
    if choice is None:
        return _failed("shape", "the reply has no single choice")
    lp = choice.get("logprobs")
    tokens = lp.get("tokens") if isinstance(lp, dict) else None
    values = lp.get("token_logprobs") if isinstance(lp, dict) else None
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values) or len(tokens) < len(ids):
        return _failed("shape", f"echo reply does not cover the {len(ids)} tokens sent")
    sent = [f"token_id:{t}" for t in ids]
    if tokens[:len(ids)] != sent:
        return _failed("ids", "the echoed tokens are not the ids sent")
    return checked_logprobs(values[1:len(ids)], len(ids))


def teacher_from_spec(settings: Any, *, student_dir: str | Path | None = None, cache_dir: str | Path | None = None,
                      teacher_rows: Sequence[dict[str, Any]] | None = None, device: str = "cpu") -> TeacherScorer:
    """The scorer a `ReverseKLSpec` names. tiny: built (or found in `cache_dir`) from `student_dir`'s tokenizer and
    `teacher_rows`; local: `teacher_path`; server: `server_url` / `server_model`, key from `server_api_key_env`."""
    import os

    if settings.teacher == "server":
        key = os.environ.get(settings.server_api_key_env) if settings.server_api_key_env else None
        return ServerTeacher(settings.server_url, settings.server_model, settings.teacher_path, settings.server_mode,
                             settings.server_timeout_s, api_key=key)
    if settings.teacher == "local":
        return LocalTeacher(settings.teacher_path, device=device)
    if student_dir is None or cache_dir is None or not teacher_rows:
        raise ValueError("reverse_kl.teacher is tiny: the student directory, a cache directory and the teacher's "
                         "SFT rows are needed to build it")
    from env0_posttrain.train.reverse_kl.tiny_teacher import ensure_tiny_teacher

    path = ensure_tiny_teacher(Path(cache_dir), Path(student_dir), teacher_rows, settings.tiny_teacher)
    return LocalTeacher(path, device=device, name=f"tiny teacher {path.name}")
