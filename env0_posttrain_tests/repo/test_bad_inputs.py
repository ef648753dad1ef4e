"""Bad inputs found by the reliability probe: binary or mis-encoded files and wrong-typed fields are
refused with an error naming the file (and field), never a bare UnicodeDecodeError or TypeError."""

from __future__ import annotations

from pathlib import Path

import pytest

from env0_posttrain.defs.resources import Env0Resource
from env0_posttrain.defs.sensors import scan_specs
from env0_posttrain.spec.runspec import SpecError, load_spec
from env0_posttrain.tasks.taskdir import TaskDirError, export_task_dir, import_task_dir
from env0_posttrain.tasks import TEMPLATES, template_stream

BINARY = b"\xff\xfe\x00run_id: x\n"


def test_a_binary_spec_file_is_refused_naming_it_and_the_sensor_keeps_scanning(tmp_path: Path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "bad.yaml").write_bytes(BINARY)
    (runs / "good.yaml").write_text("run_id: good\n")
    with pytest.raises(SpecError, match=r"bad\.yaml: not UTF-8"):
        load_spec(runs / "bad.yaml")
    ids, errors = scan_specs(Env0Resource(data_dir=str(tmp_path)))
    assert ids == ["good"] and len(errors) == 1 and "bad.yaml" in errors[0]


@pytest.fixture(scope="module")
def task():
    return next(template_stream(TEMPLATES["mail_reply_to_person"], 3))


@pytest.mark.parametrize("rel", ["instruction.md", "task.toml", "solution/oracle.json", "environment/recipe.json"])
def test_a_mis_encoded_task_file_is_refused_naming_it(tmp_path: Path, task, rel: str):
    d = export_task_dir(task, tmp_path)
    (d / rel).write_bytes(BINARY)
    with pytest.raises(TaskDirError) as err:
        import_task_dir(d)
    assert rel.split("/")[-1] in str(err.value) and "not UTF-8" in str(err.value)


def test_a_task_whose_template_id_is_not_a_string_is_refused(tmp_path: Path, task):
    d = export_task_dir(task, tmp_path)
    toml = d / "task.toml"
    toml.write_text(toml.read_text().replace(f'template_id = "{task.template_id}"', 'template_id = ["a", "b"]'))
    with pytest.raises(TaskDirError, match=r"task\.toml.*template_id"):
        import_task_dir(d)


def _call(name: str, arguments: str) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]}


REPLIES = {  # the model's replies in turn (then "done"), and the agent errors they must count
    "lone surrogate in the text": ([{"role": "assistant", "content": "done \ud800"}], {}),
    "lone surrogate in the arguments": ([_call("notes_create", '{"title": "a\\ud800", "body": "b"}'),
                                         _call("notes_list", "{}")], {}),  # the list echoes the title
    "arguments nested 5000 deep": ([_call("notes_create", "[" * 5000 + "]" * 5000)], {"malformed_call": 1}),
}


@pytest.mark.parametrize("case", sorted(REPLIES))
def test_odd_model_replies_end_in_a_storable_scored_episode(tmp_path: Path, case: str):
    import asyncio

    from env0_posttrain.agent import AgentSettings, ModelEndpoint, run_episode
    from env0_posttrain.agent.llm import register_provider
    from env0_posttrain.agent.providers.base import Env0Provider, fill_response
    from env0_posttrain.agent.records import Episode
    from env0_posttrain.store import Store
    from env0_posttrain_tests.support.agent import NotesEnv, notes_task

    replies, errors = REPLIES[case]

    class Odd(Env0Provider):
        calls = 0

        async def respond(self, model, messages, options, meta, model_response):
            self.calls += 1
            done = {"role": "assistant", "content": "done"}
            return fill_response(model_response, model, replies[self.calls - 1] if self.calls <= len(replies) else done)

    register_provider("env0-odd", Odd())
    ep = asyncio.run(run_episode(notes_task(1), ModelEndpoint(model="env0-odd/m"), AgentSettings(max_steps=4),
                                 "teacher", 0, "odd", env=NotesEnv()))
    assert ep.stop_condition == "agent_completed" and ep.verifier is not None and ep.error_counts == errors
    store = Store(tmp_path / "db.duckdb")
    rid = store.open_round("odd", "teacher", "env0-odd/m", 1)
    store.write_episode(rid, ep)  # storable: valid UTF-8 throughout
    (back,) = store.load_episodes(rid)
    assert back == Episode.model_validate_json(ep.model_dump_json())
