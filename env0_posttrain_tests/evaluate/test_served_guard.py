"""The served path is guarded: an eval against `hosting` (openai_compatible) first checks that
/v1/models lists the versioned adapter name and that a probe on training prompts shows the adapter
differs from the base with tool calls that parse; calls the server left in the text are format
failures by kind, counted per arm in the report. Driven against a stub server on 127.0.0.1."""

from __future__ import annotations

import logging

import pytest

from env0_posttrain.stages.context import StageContext, load_tasks
from env0_posttrain.stages.eval_trajectories import evaluate_arm
from env0_posttrain.stages.comparison_report import write_report
from env0_posttrain.stages.task_set import build_task_set
from env0_posttrain.agent import serve_tasks
from env0_posttrain.agent.messages import stray_tool_call
from env0_posttrain.evaluate.served import ServedModelError
from env0_posttrain.util.paths import Paths
from env0_posttrain.spec.runspec import parse_spec, write_spec
from env0_posttrain.tasks import starter_template_ids
from env0_posttrain.train import adapter_serving_name
from env0_posttrain_tests.support.openai_stub import StubServer, StubState

KEY_ENV = "ENV0_TEST_SERVED_KEY"
REVISION = "0123abcd4567"
ADAPTER = adapter_serving_name("env0-sft", REVISION)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    paths = Paths.from_env(root)
    state = StubState(api_key="sekret")
    with StubServer(state) as url:
        spec = parse_spec({
            "run_id": "served", "tasks": {"n_train": 4, "n_eval": 2, "seed": 5,
                                          "templates": starter_template_ids(max_calls=1)},
            "eval": {"trials": 1, "max_steps": 3, "max_tokens": 64, "concurrency": 4},
            "hosting": {"kind": "openai_compatible", "api_base": url, "base_model_name": "base",
                        "api_key_env": KEY_ENV},
        }, "served")
        write_spec(spec, paths.runs)
        ctx = StageContext.load("served", paths, logging.getLogger("test"))
        build_task_set(ctx)
        train_id = ctx.store.start_training("served")
        ctx.store.finish_training(train_id, "finished", str(root / "adapter"), REVISION, {})
        with serve_tasks(load_tasks(ctx, ("train", "eval"))):  # the stub plays the oracle for these tasks
            yield ctx, state


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sekret")


def _serve(state: StubState, **models: str) -> None:
    state.models = dict(models)


def test_the_versioned_adapter_name_must_be_listed(served):
    ctx, state = served
    _serve(state, base="final_text", **{"env0-sft-older": "oracle"})  # an old adapter under an old name
    with pytest.raises(ServedModelError, match=rf"lists \['base', 'env0-sft-older'\], not '{ADAPTER}' "
                                               r"\(the name hosting.adapter_name_prefix gives\)"):
        evaluate_arm(ctx, "sft")
    _serve(state, **{ADAPTER: "oracle"})
    with pytest.raises(ServedModelError, match="not 'base' .*hosting.base_model_name"):
        evaluate_arm(ctx, "base")
    assert ctx.store.count_episodes("served", "sft") == 0 and ctx.store.latest_round("served", "sft") is None


def test_the_key_comes_from_the_env_var_the_spec_names(served, monkeypatch):
    ctx, state = served
    _serve(state, base="final_text", **{ADAPTER: "oracle"})
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ServedModelError, match=f"hosting.api_key_env: environment variable {KEY_ENV} is not set"):
        evaluate_arm(ctx, "sft")
    monkeypatch.setenv(KEY_ENV, "wrong")
    with pytest.raises(ServedModelError, match="refused the key"):
        evaluate_arm(ctx, "sft")


@pytest.mark.parametrize(("adapter_mode", "message"), [
    ("final_text", "replies equal the base's on all 4 training prompts; none of the adapter's 4 replies has a tool "
                   "call that parses"),
    ("call_in_reasoning", r"unextracted in \{'tool_call_in_reasoning': 4\}"),
    ("call_in_content", r"unextracted in \{'tool_call_in_content': 4\}"),
])
def test_the_served_probe_blocks_an_adapter_like_the_base_or_with_unparsed_calls(served, adapter_mode, message):
    ctx, state = served
    _serve(state, base="final_text", **{ADAPTER: adapter_mode})
    with pytest.raises(ServedModelError, match=message):
        evaluate_arm(ctx, "sft")
    assert ctx.store.count_episodes("served", "sft") == 0


def test_a_served_adapter_that_passes_is_evaluated_and_stray_calls_are_counted_per_arm(served):
    ctx, state = served
    _serve(state, base="call_in_content", **{ADAPTER: "oracle"})
    sft = evaluate_arm(ctx, "sft")
    probe = sft.metadata["served_probe"]
    assert probe["passed"] and probe["n_outputs_differ"] == 4 and probe["adapter_parsed_calls"] == 4
    assert probe["base_format_failures"] == {"tool_call_in_content": 4}
    assert sft.metadata["model"] == f"hosted_vllm/{ADAPTER}" and sft.metadata["pass_rate"] == 1.0
    base = evaluate_arm(ctx, "base")
    assert base.metadata["pass_rate"] == 0.0  # a call left in the text is never a final answer
    base_eps = ctx.store.load_episodes(ctx.store.latest_round("served", "base"))
    assert all(e.error_counts.get("tool_call_in_content") for e in base_eps)
    assert {e.stop_condition for e in base_eps} == {"agent_error"}
    report = write_report(ctx)
    md = report.metadata["report_md"].read_text()
    section = md.split("## Format failures by kind", 1)[1].split("##", 1)[0]
    assert "tool_call_in_content" in section and "tool_call_in_reasoning" in section
    table = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")]
                                                for line in section.splitlines() if line.startswith("|"))}
    kinds = table["arm"]
    counts = {arm: dict(zip(kinds, map(int, table[arm]))) for arm in ("base", "adapter")}
    assert counts["base"]["tool_call_in_content"] == sum(e.error_counts["tool_call_in_content"] for e in base_eps) > 0
    assert counts["base"]["tool_call_in_reasoning"] == 0 and sum(counts["adapter"].values()) == 0


def test_stray_tool_calls_are_told_apart_from_final_answers():
    call = "<tool_call>\n<function=gmail_messages_list>\n</function>\n</tool_call>"
    assert stray_tool_call({"role": "assistant", "content": call}) == "tool_call_in_content"
    assert stray_tool_call({"role": "assistant", "content": None, "reasoning_content": call}) == "tool_call_in_reasoning"
    assert stray_tool_call({"role": "assistant", "content": "The meeting is at 10."}) is None
    parsed = {"role": "assistant", "content": call, "tool_calls": [{"function": {"name": "x", "arguments": "{}"}}]}
    assert stray_tool_call(parsed) is None
