"""The house rules DESIGN.md states, checked on the source.

- Core packages never import Dagster.
- No import cycle between files. Every import counts: absolute and relative, at module level and inside functions,
  and a submodule's import of its own package's `__init__`. Imports under `if TYPE_CHECKING:` do not count for
  cycles: they never run, and an annotation naming the object that holds you (a Service's `Workspace`) is a
  back-reference, not a second owner. They do count for the layers below: a lower layer may not even name a higher
  layer's types.
- Layers: a module imports only from its own layer or a lower one (`LAYERS`, lowest first; DESIGN.md's one-way
  flow workspace <- tasks <- agent <- sft <- train <- evaluate, with the helpers and the run spec below it, the
  sandbox below the tasks (the env0 runner and the shell surface both run commands in it), and the stages, Dagster
  and the CLI above it). A layer is named by folders (top-level packages) only, never by one module of a folder, and
  every module belongs to one, so a new top-level package must be placed here.
- The root: only the package's `__init__` and the code location (`ROOT_MODULES`); every other module sits in a
  package named for its role.
- Cohesion: a module holds one role, named for what it holds. No file named or described as another file's
  overflow (`*_more.py`, `*_extras.py`, "part 2"); each workspace service module with API handlers serves one
  resource of the real API; and a size ceiling far above any cohesive module today, as a backstop.
  Dynamic imports (`importlib.import_module`) are not seen.
- The store owns the schema and every SQL statement: no string outside `store/` (docstrings aside) holds one.
- What differs on the wire between API families (Google, Slack, Stripe, auth) is a dialect (`workspace/dialects/`),
  chosen once by service name: no module outside the services and the dialects compares a value with a service
  name (`service == "slack"`, `svc != "auth"`, `spec.service in ("stripe", "auth")`). Asking whether a collection
  holds a service (`"gmail" in services`) is not such a branch.
- A service is one unit (workspace/services/<name>/, collected by services/registry.py): outside its folder and the task
  families no string literal equals a registered service's name (docstrings aside), no module reads a dialect's flag
  outside workspace/dialects/, and no shared module imports a service's own modules but through the registry. What
  still does is listed in the *_TODO tables with its reason; the tables only shrink.
- The tests mirror the package: a `test_*.py` lives in the folder of `env0_posttrain_tests/` with the relative path of
  the package folder whose code it tests (the tests of `env0_posttrain/x/y.py` are under `env0_posttrain_tests/x/`;
  the code location's graph is tested in `defs/`), or in `repo/`, the one folder for suites about the repository as
  a whole. Every test folder is a package, so pytest imports each test by its dotted name.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import networkx as nx

from env0_posttrain_tests.support.paths import FIXTURES, REPO, TESTS

PKG = REPO / "env0_posttrain"
ROOT = PKG.name
DAGSTER_SIDE = ("defs", "run_worker", "orchestration", "definitions")  # the only places that may import dagster

# Lowest first. Entries are the top-level packages of env0_posttrain (and the code location module): folders only, so a
# module's layer is its folder's.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("helpers", ("util",)),
    ("run spec", ("spec",)),
    ("workspace", ("workspace",)),
    ("sandbox", ("sandbox",)),  # bubblewrap containers: the env0 runner's and the shell surface's
    ("tasks", ("tasks",)),
    ("agent", ("agent",)),
    ("store", ("store",)),
    ("sft", ("sft",)),
    ("train", ("train",)),
    ("evaluate", ("evaluate",)),
    ("stages", ("stages",)),
    ("run making", ("making",)),  # `run new` / `backfill` and the UI's new_run / teacher_backfill jobs
    ("dagster declarations", ("defs",)),
    ("dagster run worker", ("run_worker",)),  # pool waits and the dead-run sweep: the code location loads them
    ("code location", ("definitions",)),
    ("dagster actions", ("orchestration",)),
    ("command line", ("cli",)),
)

# The package root: its docstring and the code location Dagster loads. Everything else lives in a package named for
# its role (util/, spec/, store/, stages/, cli/, ...).
ROOT_MODULES = ("__init__", "definitions")

MAX_LINES = 1000  # backstop only: the longest module is 400 lines; cohesion, not length, decides a split
OVERFLOW_NAME = re.compile(r"_(more|extras?|part\d*|rest|misc|others?|continued)$|\d$")
OVERFLOW_DOC = re.compile(r"\bpart (\d+|two|three|ii)\b|\bcontinued\b|\bthe rest of\b", re.I)

# What the cohesion rule flags today, by path under env0_posttrain/: each entry leaves this table when its module
# is split or renamed by role. The test fails on a new offender and on an entry that no longer offends.
COHESION_TODO: dict[str, str] = {
}


@cache
def _modules() -> dict[str, Path]:
    out = {}
    for f in PKG.rglob("*.py"):
        parts = f.relative_to(PKG.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and (getattr(test, "id", None) == "TYPE_CHECKING"
                                         or getattr(test, "attr", None) == "TYPE_CHECKING"):
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _owner(dotted: str, known: dict[str, Path]) -> str | None:
    """The module of this package a dotted name lives in (the name itself, or its nearest known parent)."""
    while dotted and dotted not in known:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


@cache
def _imports(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """(modules of this package `name` imports at run time, those it imports only under TYPE_CHECKING)."""
    known = _modules()
    path = known[name]
    tree = ast.parse(path.read_text())
    typing_only = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    runtime, typing = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from pkg import sub` imports the submodule; `from mod import name` imports mod
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
        else:
            continue
        for t in targets:
            owner = _owner(t, known) if t.split(".")[0] == ROOT else None
            if owner and owner != name:
                (typing if id(node) in typing_only else runtime).add(owner)
    return frozenset(runtime), frozenset(typing - runtime)


def _graph(type_checking: bool) -> nx.DiGraph:
    graph = nx.DiGraph()
    for name in _modules():
        runtime, typing = _imports(name)
        graph.add_node(name)
        graph.add_edges_from((name, dep) for dep in runtime | (typing if type_checking else set()))
    return graph


def _layer(module: str) -> int | None:
    if module == ROOT:
        return 0  # the package's own __init__: a docstring
    top = module.removeprefix(ROOT + ".").split(".")[0]
    return next((i for i, (_, entries) in enumerate(LAYERS) if top in entries), None)


def test_core_packages_never_import_dagster():
    offenders = []
    for name, path in _modules().items():
        if name.split(".")[1:2] and name.split(".")[1] in DAGSTER_SIDE:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{name}: {m}" for m in mods if m == "dagster" or m.startswith("dagster.")]
    assert offenders == []


def test_relative_and_function_level_imports_are_read():
    """The reader sees what the rules depend on: relative imports, imports inside functions, TYPE_CHECKING."""
    runtime, typing = _imports(f"{ROOT}.agent.workers")
    assert f"{ROOT}.agent.attempts" in runtime  # `from .attempts import attempt_episode`
    assert f"{ROOT}.agent" in runtime  # `from . import _install_providers`, inside a function
    assert f"{ROOT}.tasks.model" in runtime  # absolute
    _, typing = _imports(f"{ROOT}.workspace.base")
    assert f"{ROOT}.workspace.environment" in typing  # only under TYPE_CHECKING


def test_no_import_cycles_between_files():
    cycles = sorted(sorted(c) for c in nx.simple_cycles(_graph(type_checking=False)))
    assert cycles == [], cycles[:5]


def test_the_package_root_holds_only_the_code_location():
    assert sorted(f.stem for f in PKG.glob("*.py")) == sorted(ROOT_MODULES)


def test_the_layers_name_folders_only():
    """No module sits in another layer than its folder: a module that must sit lower moves to a package of its own."""
    entries = [e for _, es in LAYERS for e in es]
    assert len(entries) == len(set(entries))
    assert [e for e in entries if not ((PKG / e).is_dir() or e in ROOT_MODULES)] == []


def test_every_module_has_a_layer():
    assert [m for m in _modules() if _layer(m) is None] == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    bad = [f"{a} ({LAYERS[_layer(a)][0]}) imports {b} ({LAYERS[_layer(b)][0]})"
           for a, b in _graph(type_checking=True).edges if (_layer(a) or 0) < (_layer(b) or 0)]
    assert bad == []


def _resource(service: str, method_id: str) -> str:
    """The API resource a handler serves, from its method id: `drive.files.list` -> files, Gmail's
    `gmail.users.settings.filters.list` -> settings (nested resources count as their parent),
    `gmail.users.getProfile` -> users; Slack's ids carry no service prefix (`users.profile.get` -> users)."""
    parts = method_id.split(".")[:-1]
    if service != "slack" and parts:
        parts = parts[1:]  # the service prefix: gmail, drive, calendar, directory, docs, stripe, auth
        if service == "gmail" and len(parts) > 1 and parts[0] == "users":
            parts = parts[1:]
    return parts[0] if parts else service


def _api_ids(path: Path) -> list[str]:
    return [d.args[0].value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)
            for d in n.decorator_list if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "api"
            and d.args and isinstance(d.args[0], ast.Constant)]


def _cohesion_offences() -> dict[str, str]:
    out: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if OVERFLOW_NAME.search(path.stem) and path.stem != "__init__":
            out[rel].append("name")
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if OVERFLOW_DOC.search(doc.split("\n\n")[0]):
            out[rel].append("docstring")
        if rel.startswith("workspace/services/"):
            service = path.parent.name
            if len({_resource(service, i) for i in _api_ids(path)}) > 1:
                out[rel].append("resources")
        if len(path.read_text().splitlines()) > MAX_LINES:
            out[rel].append(f"over {MAX_LINES} lines")
    return {rel: ", ".join(why) for rel, why in out.items()}


def test_resources_read_from_method_ids():
    assert _resource("drive", "drive.files.list") == "files"
    assert _resource("gmail", "gmail.users.settings.filters.list") == "settings"
    assert _resource("gmail", "gmail.users.messages.attachments.get") == "messages"
    assert _resource("gmail", "gmail.users.getProfile") == "users"
    assert _resource("slack", "users.profile.get") == "users"
    assert _resource("slack", "chat.scheduledMessages.list") == "chat"
    assert _resource("auth", "auth.token") == "auth"


def test_modules_are_split_by_role_not_by_size():
    assert _cohesion_offences() == COHESION_TODO


SQL = re.compile(r"\bSELECT\s.*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|\bCREATE\s+TABLE\b",
                 re.S)  # the statements as this code writes them (keywords in capitals)


def _sql_outside_the_store() -> list[str]:
    out = []
    for name, path in sorted(_modules().items()):
        if name == f"{ROOT}.store" or name.startswith(f"{ROOT}.store."):
            continue
        tree = ast.parse(path.read_text())
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        out += [f"{name}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                and id(n) not in docstrings and SQL.search(n.value)]
    return out


def test_sql_lives_only_in_the_store():
    assert SQL.search("SELECT count(*) FROM rounds WHERE run_id = ?") and SQL.search("UPDATE rounds SET x = 1")
    assert not SQL.search("select the rows from the table")  # prose is not a statement
    assert _sql_outside_the_store() == []


SERVICE_NAMES = frozenset({"gmail", "calendar", "drive", "docs", "slack", "admin", "stripe", "auth"})
WIRE_HOMES = ("workspace/services/", "workspace/dialects/")  # where a service's name may decide behaviour


def _service_literals(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & SERVICE_NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)} & SERVICE_NAMES
    return set()


def _service_branches(tree: ast.AST) -> list[int]:
    """Lines comparing a value with a service name: `x == "slack"`, `"slack" != x`, `x in ("stripe", "auth")`."""
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Compare) or len(n.ops) != 1:
            continue
        left, op, right = n.left, n.ops[0], n.comparators[0]
        if isinstance(op, (ast.Eq, ast.NotEq)) and (_service_literals(right) and not _service_literals(left)
                                                    or _service_literals(left) and not _service_literals(right)):
            out.append(n.lineno)
        elif isinstance(op, (ast.In, ast.NotIn)) and _service_literals(right) and not _service_literals(left):
            out.append(n.lineno)
    return out


def _wire_branches_outside_dialects() -> list[str]:
    return [f"{path.relative_to(PKG).as_posix()}:{line}" for path in sorted(PKG.rglob("*.py"))
            if not path.relative_to(PKG).as_posix().startswith(WIRE_HOMES)
            for line in _service_branches(ast.parse(path.read_text()))]


def test_service_branches_are_read():
    src = """
if spec.service == "slack": pass
if "stripe" != svc: pass
if spec.service in ("stripe", "auth"): pass
if svc not in ["gmail"]: pass
if "gmail" in services: pass
if prefix == "gcal": pass
if kind == "integer": pass
"""
    assert _service_branches(ast.parse(src)) == [2, 3, 4, 5]


def test_wire_differences_live_in_dialects():
    assert _wire_branches_outside_dialects() == []


WHOLE_REPO_TESTS = "repo"  # the one test folder that mirrors no package folder: layout, lint, docs, bench, deploy


def _test_homes() -> set[Path]:
    """Where a test file may live, relative to the test folder: each folder of the package that holds modules."""
    homes = {d.relative_to(PKG) for d in PKG.rglob("*") if d.is_dir() and any(d.glob("*.py"))}
    return homes | {Path(WHOLE_REPO_TESTS)}


def _test_files_off_the_mirror() -> list[str]:
    homes = _test_homes()
    return sorted(f.relative_to(TESTS).as_posix() for f in TESTS.rglob("test_*.py")
                  if FIXTURES not in f.parents and f.parent.relative_to(TESTS) not in homes)


def _test_folders_without_init() -> list[str]:
    return sorted(d.relative_to(TESTS).as_posix() for d in (TESTS, *TESTS.rglob("*"))
                  if d.is_dir() and d != FIXTURES and FIXTURES not in d.parents
                  and d.name != "__pycache__" and not d.name.startswith(".") and not (d / "__init__.py").exists())


def test_tests_mirror_the_package():
    homes = _test_homes()
    assert {Path("agent/shell"), Path("tasks/env0/serve"), Path("orchestration"), Path(WHOLE_REPO_TESTS)} <= homes
    assert Path(".") not in homes and Path("spec/presets") not in homes  # the root and data-only folders hold no tests
    assert _test_files_off_the_mirror() == []
    assert _test_folders_without_init() == []


# -- a service is one unit ------------------------------------------------------------------------------------------
# Outside its homes no module names a service by string, reads a dialect's flag or imports a service's own modules: it
# asks the registry (workspace/services/registry.py) or the dialect. What still does is listed below with the reason it
# is left; each entry leaves its table when the file stops offending, and a new offender fails the test.
SERVICE_HOMES = ("workspace/services/", "tasks/families/")  # a service's own folder, and the task families about it
DIALECT_HOME = "workspace/dialects/"
SHARED_SERVICE_MODULES = ("registry", "descriptor", "safety", "env0_shapes")  # workspace/services/*.py: no one service's

SERVICE_LITERAL_TODO: dict[str, str] = {
}
DIALECT_FLAG_TODO: dict[str, str] = {  # flags still read outside the dialects, each to become a dialect verb
}
SERVICE_IMPORT_TODO: dict[str, str] = {
}


def _registered() -> frozenset[str]:
    from env0_posttrain.workspace.services import registry

    return frozenset(registry.names())


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for n in ast.walk(tree):
        body = getattr(n, "body", None)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            out.add(id(body[0].value))
    return out


def _service_literal_lines(tree: ast.AST, names: frozenset[str]) -> list[int]:
    """Lines of string literals equal to a registered service's name (a docstring, or a longer string, is not one)."""
    skip = _docstrings(tree)
    return sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                   and n.value in names and id(n) not in skip})


def _dialect_flags() -> frozenset[str]:
    from env0_posttrain.workspace.dialects.base import Dialect

    return frozenset(k for k, v in vars(Dialect).items() if isinstance(v, bool))


def _flag_lines(tree: ast.AST, flags: frozenset[str]) -> list[int]:
    return sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in flags})


def _service_module(dotted: str, names: frozenset[str]) -> bool:
    """A module of one service's folder (`workspace.services.slack.data_model`), not the shared registry modules."""
    parts = dotted.removeprefix(ROOT + ".").split(".")
    return parts[:2] == ["workspace", "services"] and len(parts) > 2 and parts[2] in names


def _outside(rel: str, homes: tuple[str, ...]) -> bool:
    return not rel.startswith(homes)


def _offenders(check) -> dict[str, list[int]]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        lines = check(rel, ast.parse(path.read_text()))
        if lines:
            out[rel] = lines
    return out


def _literal_offenders() -> dict[str, list[int]]:
    names = _registered()
    return _offenders(lambda rel, tree: _service_literal_lines(tree, names) if _outside(rel, SERVICE_HOMES) else [])


def _flag_offenders() -> dict[str, list[int]]:
    flags = _dialect_flags()
    return _offenders(lambda rel, tree: _flag_lines(tree, flags) if _outside(rel, (DIALECT_HOME,)) else [])


def _import_offenders(imports: dict[str, frozenset[str]] | None = None) -> dict[str, list[str]]:
    names = _registered()
    if imports is None:
        imports = {f"{ROOT}.{m.removeprefix(ROOT + '.')}": _imports(m)[0] for m in _modules()}
    out = {}
    for module, deps in imports.items():
        rel = module.removeprefix(ROOT + ".").replace(".", "/") + "/"
        bad = sorted(d for d in deps if _service_module(d, names))
        if bad and _outside(rel, SERVICE_HOMES):
            out[module.removeprefix(ROOT + ".")] = bad
    return out


def test_service_literals_flag_reads_and_service_imports_are_found():
    names = frozenset({"gmail", "slack"})
    src = '"""Mail (gmail) and chat."""\nx = "slack"\ny = "slacker"\ndef f():\n    "gmail"\n    return {"gmail": 1}\n'
    assert _service_literal_lines(ast.parse(src), names) == [2, 6]
    flags = frozenset({"args_in_body"})
    assert _flag_lines(ast.parse("if dialect(s).args_in_body:\n    pass\nargs_in_body = 1\n"), flags) == [1]
    planted = {f"{ROOT}.tasks.x": frozenset({f"{ROOT}.workspace.services.slack.data_model",
                                             f"{ROOT}.workspace.services.registry"}),
               f"{ROOT}.tasks.families.mail": frozenset({f"{ROOT}.workspace.services.gmail.query"})}
    assert _import_offenders(planted) == {"tasks.x": [f"{ROOT}.workspace.services.slack.data_model"]}


def test_no_service_is_named_by_string_outside_its_homes():
    assert sorted(_literal_offenders()) == sorted(SERVICE_LITERAL_TODO)


def test_no_dialect_flag_is_read_outside_the_dialects():
    assert sorted(_flag_offenders()) == sorted(DIALECT_FLAG_TODO)


def test_shared_code_reaches_a_service_through_the_registry():
    assert sorted(_import_offenders()) == sorted(SERVICE_IMPORT_TODO)
