"""The front door stays what a newcomer needs: README.md shows the set-up and test commands CI runs, word for word;
the commands it names are the CLI's, and every path of its "to change X, open Y" table exists; every relative link
in the docs resolves; docs/README.md indexes every doc; and neither the docs nor the code narrate the project's
history (sessions, issue numbers): they state facts and reasons."""

from __future__ import annotations

import re

from env0_posttrain_tests.support.paths import REPO as ROOT

DOCS = sorted([ROOT / "README.md", ROOT / "deploy" / "README.md", *(ROOT / "docs").glob("*.md")])
NARRATION = re.compile(r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|this|last|previous|"
                       r"earlier|other) sessions?\b|\bissues? ?#?\d+|\bChanged\sin\sthe\b", re.I)
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


def _ci_command(marker: str) -> str:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    return next(lines[i + 1 + k] for i, ln in enumerate(lines) if marker in ln
                for k in range(3) if lines[i + 1 + k].strip() and not lines[i + 1 + k].startswith(("set ", "#")))


def _bash_blocks(text: str) -> list[str]:
    return [line for block in re.findall(r"```bash\n(.*?)```", text, re.S) for line in block.splitlines()]


def _section(text: str, title: str) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_names_only_commands_the_cli_has():
    import typer

    from env0_posttrain.cli.main import app

    group = typer.main.get_command(app)
    named = re.findall(r"env0-posttrain ([a-z]+)(?: ([a-z]+))?", (ROOT / "README.md").read_text())
    assert {n for n, _ in named} >= {"demo", "ui", "run"}
    for name, sub in named:
        assert name in group.commands, name
        if name == "run":
            assert sub in group.commands["run"].commands, sub


def test_every_path_the_readme_points_at_exists():
    table = _section((ROOT / "README.md").read_text(), "To change X, open Y")
    cells = [row.split("|")[2] for row in table.splitlines() if row.startswith("| ") and "---" not in row][1:]
    paths = [p for cell in cells for p in re.findall(r"`([\w./<>-]+)`", cell) if "/" in p or "." in p]
    assert len(paths) >= 10
    for p in paths:
        base = ROOT if p.startswith(("env0_posttrain_tests/", "dagster.yaml")) else ROOT / "env0_posttrain"
        target = base / p.split("<")[0]  # `stages/<asset>.py`: the folder holds such files
        assert target.exists() and (target.is_dir() or "<" not in p), p


def test_the_readme_shows_the_commands_ci_runs_word_for_word():
    setup, tests = _ci_command("README set-up command"), _ci_command("README test command")
    assert setup.startswith("python3 -m venv") and tests.startswith(".venv/bin/pytest"), (setup, tests)
    shown = _bash_blocks((ROOT / "README.md").read_text())
    assert setup in shown and tests in shown


def test_every_relative_link_resolves():
    broken = [f"{doc.relative_to(ROOT)}: {target}" for doc in DOCS for target, _ in LINK.findall(doc.read_text())
              if "://" not in target and not (doc.parent / target).exists()]
    assert broken == []


def test_the_docs_index_lists_every_doc():
    index = (ROOT / "docs" / "README.md").read_text()
    listed = {target for target, _ in LINK.findall(index)}
    assert {p.name for p in (ROOT / "docs").glob("*.md")} - {"README.md"} <= listed


def test_docs_and_code_state_facts_not_history():
    sources = [*DOCS, *(ROOT / "env0_posttrain").rglob("*.py"), *(ROOT / "bench").glob("*.py"),
               *(p for p in (ROOT / "env0_posttrain_tests").rglob("*.py") if "fixtures" not in p.parts)]
    found = [f"{p.relative_to(ROOT)}:{n}: {m.group(0)}" for p in sources
             for n, line in enumerate(p.read_text().splitlines(), 1) if (m := NARRATION.search(line))]
    assert found == []
