"""A shipped tiny student replaces the base's pre-training only when its files match the manifest, and a rebuild says
whether the recipe reproduces it."""

from __future__ import annotations

import json
import shutil

import pytest

from env0_posttrain.train.synthetic_rows import make_synthetic_set
from env0_posttrain.train.tiny_student import build, shipped
from env0_posttrain.train.tiny_student.build import MARKER_FILE, TinyStudentConfig, ensure_tiny_student, student_digest

STUDENT = TinyStudentConfig(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                            vocab_size=320, pretrain_steps=2, pretrain_batch_size=2, pretrain_seq_len=32)


@pytest.fixture(scope="module")
def data():
    return make_synthetic_set(6, 2, seed=4)


@pytest.fixture(scope="module")
def built(tmp_path_factory, data):
    return ensure_tiny_student(tmp_path_factory.mktemp("built"), data.corpus, data.entities, STUDENT, report_to=[],
                               use_shipped=False)


@pytest.fixture
def root(tmp_path, data, built):
    root = tmp_path / "shipped"
    shipped.write_entry(built, student_digest(data.corpus, data.entities, STUDENT), 2, "cpu (test kernels)", "abc1234",
                        root)
    return root


def _no_build(*_a, **_k):
    raise AssertionError("pre-trained although a shipped student matched the recipe")


def test_a_shipped_student_is_installed_instead_of_built(tmp_path, data, built, root, monkeypatch):
    monkeypatch.setattr(build, "_build", _no_build)
    got = ensure_tiny_student(tmp_path / "cache", data.corpus, data.entities, STUDENT, shipped_root=root)
    assert got.name == built.name and (got / MARKER_FILE).exists()
    assert shipped.hash_files(got) == shipped.hash_files(built)
    manifest = json.loads((root / shipped.MANIFEST).read_text())
    assert [s["name"] for s in manifest["students"]] == [built.name]
    assert manifest["students"][0]["torch_threads"] == 2 and "model.safetensors" in manifest["students"][0]["files"]


def test_another_recipe_is_not_served_the_shipped_student(tmp_path, data, built, root):
    other = STUDENT.model_copy(update={"pretrain_steps": 1})
    assert shipped.find_shipped(student_digest(data.corpus, data.entities, other), "qwen3", root) is None
    got = ensure_tiny_student(tmp_path / "cache", data.corpus, data.entities, other, report_to=[], shipped_root=root)
    assert got.name != built.name and json.loads((got / MARKER_FILE).read_text())["config"]["pretrain_steps"] == 1


def test_a_changed_shipped_file_is_refused_naming_both_digests(tmp_path, data, built, root, monkeypatch):
    monkeypatch.setattr(build, "_build", _no_build)
    entry = shipped.read_manifest(root).students[0]
    weights = root / entry.name / "model.safetensors"
    blob = bytearray(weights.read_bytes())
    blob[-1] ^= 1
    weights.write_bytes(bytes(blob))
    found = shipped.files_sha256(shipped.hash_files(root / entry.name))
    with pytest.raises(shipped.ShippedError) as err:
        ensure_tiny_student(tmp_path / "cache", data.corpus, data.entities, STUDENT, shipped_root=root)
    message = str(err.value)
    assert entry.digest() in message and found in message and found != entry.digest()
    assert "model.safetensors" in message and "env0-posttrain base rebuild" in message
    assert not (tmp_path / "cache" / entry.name).exists()


def test_a_missing_shipped_file_is_refused(tmp_path, data, root):
    entry = shipped.read_manifest(root).students[0]
    (root / entry.name / "tokenizer.json").unlink()
    with pytest.raises(shipped.ShippedError, match="tokenizer.json"):
        ensure_tiny_student(tmp_path / "cache", data.corpus, data.entities, STUDENT, shipped_root=root)


def test_a_bad_manifest_is_named(tmp_path, data):
    root = tmp_path / "shipped"
    root.mkdir()
    (root / shipped.MANIFEST).write_text('{"students": [{"name": "x"}]}')
    with pytest.raises(shipped.ShippedError, match="manifest.json"):
        ensure_tiny_student(tmp_path / "cache", data.corpus, data.entities, STUDENT, shipped_root=root)


def test_a_rebuild_at_the_same_threads_reproduces_the_shipped_weights(tmp_path, data, built, root):
    again = ensure_tiny_student(tmp_path / "again", data.corpus, data.entities, STUDENT, report_to=[],
                                use_shipped=False)
    recipe = student_digest(data.corpus, data.entities, STUDENT)
    outcome = shipped.rebuild(again, recipe, 2, "cpu (test kernels)", "", write=False, root=root)
    assert outcome.same and outcome.shipped_digest is not None and not outcome.written
    assert set(outcome.differing) <= set(shipped.VARIES)


def test_a_rebuild_that_differs_says_so_and_write_ships_it(tmp_path, data, root):
    entry = shipped.read_manifest(root).students[0]
    changed = tmp_path / "changed" / entry.name
    shutil.copytree(root / entry.name, changed)
    blob = bytearray((changed / "model.safetensors").read_bytes())
    blob[-1] ^= 1
    (changed / "model.safetensors").write_bytes(bytes(blob))
    outcome = shipped.rebuild(changed, entry.recipe, 2, "cpu (test kernels)", "", write=False, root=root)
    assert not outcome.same and outcome.differing == ["model.safetensors"]
    assert outcome.built_digest != outcome.shipped_digest == entry.digest()
    written = shipped.rebuild(changed, entry.recipe, 2, "cpu (test kernels)", "", write=True, root=root)
    assert written.written
    assert shipped.read_manifest(root).students[0].digest() == outcome.built_digest
    shipped.verify(shipped.read_manifest(root).students[0], root)  # the new files match the new manifest



def test_the_repositorys_shipped_students_match_their_manifest():
    entries = shipped.read_manifest().students
    assert entries, "no tiny student shipped in train/tiny_student/shipped/"
    for entry in entries:
        shipped.verify(entry)
