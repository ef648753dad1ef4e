"""``python -m env0_posttrain.tasks replay DIR``: the verifier entry point of an exported task directory."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from env0_posttrain.tasks.taskdir import TaskDirError, import_task_dir, replay_dir, write_reward
from env0_posttrain.util.console import printable


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m env0_posttrain.tasks")
    sub = parser.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="replay tool calls on the task's fresh workspace and verify the end state")
    rp.add_argument("task_dir", type=Path)
    rp.add_argument("--oracle", action="store_true", help="replay solution/oracle.json with the expected answer")
    rp.add_argument("--calls", type=Path, help="JSON list of {name, arguments}")
    rp.add_argument("--answer-file", type=Path, help="the agent's final answer (text); absent file = no answer")
    rp.add_argument("--reward-file", type=Path, help="where to write the reward")
    ep = sub.add_parser("env0", help="run one env0 task package unchanged: seed, solve.sh or --calls, test.sh")
    ep.add_argument("package_dir", type=Path)
    ep.add_argument("--oracle", action="store_true", help="run solution/solve.sh as the agent")
    ep.add_argument("--calls", type=Path, help="JSON list of {name, arguments} (our tool names)")
    ep.add_argument("--record", type=Path, help="with --oracle: write solve.sh's requests (serve/recording.py) here as JSON")
    ep.add_argument("--replay", type=Path, help="send a --record file's requests through the services instead of "
                    "running solve.sh")
    ep.add_argument("--reward-file", type=Path, help="where to write env0's reward.json (or the verifier_error)")
    ep.add_argument("--seed", type=int, default=0, help="seed of the default fill and of the needles' parameters")
    ep.add_argument("--env0-root", type=Path, help="an env0 checkout, for packages that use its env-owned gcal "
                    "seed packs (default: $ENV0_ROOT)")
    args = parser.parse_args(argv)
    if args.command == "env0":
        return _env0(args)
    try:
        if args.oracle:
            calls = args.task_dir / "solution" / "oracle.json"
            answer = import_task_dir(args.task_dir).final_answer
        else:
            if args.calls is None:
                parser.error("replay needs --calls or --oracle")
            calls = args.calls
            answer = args.answer_file.read_text() if args.answer_file and args.answer_file.is_file() else None
        verdict = replay_dir(args.task_dir, calls, answer)
    except TaskDirError as err:
        print(f"error: {printable(str(err))}", file=sys.stderr)
        return 2
    if args.reward_file:
        write_reward(args.reward_file, verdict["reward"])
    print(json.dumps(verdict, indent=2))
    return 0


def _env0_root_setting() -> Path | None:
    """The user's ENV0_ROOT, read at this command's door (the library takes the checkout as an argument)."""
    return Path(os.environ["ENV0_ROOT"]) if os.environ.get("ENV0_ROOT") else None


def _env0(args: argparse.Namespace) -> int:
    from datetime import datetime

    from pydantic import TypeAdapter, ValidationError

    from env0_posttrain.tasks.env0.serve.recording import RecordedRequest
    from env0_posttrain.tasks.env0.run.runner import run_and_record

    replay, now = None, None
    if args.replay is not None:
        try:
            saved = json.loads(args.replay.read_text())
            replay = TypeAdapter(list[RecordedRequest]).validate_python(saved["requests"])
            now = datetime.fromisoformat(saved["now"])
        except (OSError, ValueError, KeyError, TypeError, ValidationError) as e:
            print(printable(f"error: {args.replay}: not a recording ({str(e).splitlines()[0][:200]})"), file=sys.stderr)
            return 2
    res = run_and_record(args.package_dir, args.reward_file, oracle=args.oracle, calls=args.calls, seed=args.seed,
                         env0_root=args.env0_root or _env0_root_setting(), record=args.record is not None, replay=replay, now=now)
    if args.record is not None and res.recording is not None:
        from env0_posttrain.util.fsutil import atomic_write_text

        atomic_write_text(args.record, json.dumps({"now": res.now, "requests": [r.model_dump(mode="json")
                                                                                for r in res.recording]}, indent=1))
    print(res.model_dump_json(indent=2, exclude={"recording"}))
    if res.verifier_error:  # a script's stderr tail: shown, never interpreted by the terminal
        print(f"error: {printable(res.verifier_error)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
