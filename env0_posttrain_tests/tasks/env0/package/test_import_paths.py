"""A needles load makes its data/ siblings and env0's service packages importable to itself only, never through
`sys.path`: the seeds' teacher round stopped at its first call when a verifier thread's load changed sys.path
while litellm imported `httpx2` ("No package metadata was found for httpx2")."""

from __future__ import annotations

import importlib.metadata
import sys
import threading
from pathlib import Path

from env0_posttrain.tasks.env0.seed.env0_defaults import env0_imports
from env0_posttrain.tasks.env0.package.import_paths import import_folders
from env0_posttrain.tasks.env0.package.load import load_needles
from env0_posttrain_tests.support.paths import FIXTURES

ROOT = FIXTURES / "env0_root"


def _package(tmp_path: Path, sibling: str) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / f"{sibling}.py").write_text("VALUE = 'from data/'\n")
    (data / "needles.py").write_text(
        f"import sys\nimport {sibling}\nfrom env_0_gdrive.seed.content import DOC\n"
        f"VALUE, PATH_SEEN, META_SEEN = {sibling}.VALUE, list(sys.path), len(sys.meta_path)\n")
    return data / "needles.py"


def test_a_needles_load_imports_its_siblings_and_env0_packages_without_touching_sys_path(tmp_path: Path) -> None:
    path_before = list(sys.path)
    with env0_imports(ROOT):
        meta_inside = len(sys.meta_path)
        mod = load_needles(_package(tmp_path, "sib_for_path_test"))
    assert mod.VALUE == "from data/" and mod.DOC == "application/vnd.google-apps.document"
    assert mod.PATH_SEEN == path_before == sys.path  # nothing prepended while it loaded, nothing left after
    assert mod.META_SEEN == meta_inside == len(sys.meta_path)  # the finders are installed once, not per load


def test_another_thread_does_not_see_a_loads_folders(tmp_path: Path) -> None:
    (tmp_path / "only_in_folder.py").write_text("X = 1\n")
    seen: dict[str, object] = {}

    def other() -> None:
        try:
            import only_in_folder  # noqa: F401
            seen["other"] = "imported"
        except ModuleNotFoundError:
            seen["other"] = "not found"

    with import_folders([tmp_path]):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        import only_in_folder
    assert seen["other"] == "not found" and only_in_folder.X == 1
    sys.modules.pop("only_in_folder", None)


def test_package_metadata_stays_found_while_other_threads_load_needles(tmp_path: Path) -> None:
    needles = _package(tmp_path, "sib_for_metadata_test")
    misses, done = [], threading.Event()

    def load() -> None:
        for _ in range(150):
            with env0_imports(ROOT):
                load_needles(needles)
        done.set()

    loader = threading.Thread(target=load)
    loader.start()
    looked = 0
    while not done.is_set() or looked == 0:
        try:
            importlib.metadata.distribution("pydantic")
        except importlib.metadata.PackageNotFoundError:
            misses.append(looked)
        looked += 1
    loader.join()
    assert misses == []
