"""One helper for atomic writes, one for digests: a failed write keeps the old file; digests are stable."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from env0_posttrain.util.digests import canonical_json, digest, file_digest, files_digest, sha256_hex
from env0_posttrain.util.fsutil import atomic_target, atomic_write_bytes, atomic_write_text, replace_dir


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = atomic_write_text(tmp_path / "sub" / "a.txt", "old")
    with pytest.raises(RuntimeError), atomic_target(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("boom")
    assert path.read_text() == "old" and os.listdir(path.parent) == ["a.txt"]
    atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"new" and os.listdir(path.parent) == ["a.txt"]


def test_written_files_get_the_usual_permissions_and_mode_when_asked(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    plain = atomic_write_text(tmp_path / "plain", "x")
    assert plain.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    script = atomic_write_text(tmp_path / "run.sh", "#!/bin/sh\n", mode=0o755)
    assert script.stat().st_mode & 0o777 == 0o755


def test_the_temporary_name_keeps_the_suffix_a_writer_needs(tmp_path):
    with atomic_target(tmp_path / "fig.png", suffix=".png") as tmp:
        assert tmp.name.endswith(".png") and tmp.parent == tmp_path and tmp.name.startswith(".fig.png.")
        tmp.write_bytes(b"png")
    assert (tmp_path / "fig.png").read_bytes() == b"png"


def test_replace_dir_swaps_a_finished_directory_in(tmp_path):
    (tmp_path / "dest").mkdir()
    (tmp_path / "dest" / "old").write_text("1")
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "f").write_text("2")
    replace_dir(tmp_path / "new", tmp_path / "dest")
    assert os.listdir(tmp_path / "dest") == ["f"] and not (tmp_path / "new").exists()


def test_digests_are_sha256_of_canonical_content(tmp_path):
    assert digest({"b": 1, "a": 2}) == digest({"a": 2, "b": 1}) == sha256_hex(canonical_json({"a": 2, "b": 1}), n=16)
    assert sha256_hex("ab", b"c") == hashlib.sha256(b"abc").hexdigest() and len(sha256_hex("x", n=10)) == 10
    assert digest(json.dumps) != digest("x")  # non-JSON values hash by str(), they do not raise
    (tmp_path / "w").write_bytes(b"weights")
    assert file_digest(tmp_path / "w") == hashlib.sha256(b"weights").hexdigest()[:12]
    (tmp_path / "v").write_bytes(b"other")
    names = files_digest([tmp_path / "v", tmp_path / "w"], tmp_path)
    assert names == sha256_hex("v", b"other", "w", b"weights", n=12) != files_digest([tmp_path / "w", tmp_path / "v"], tmp_path)
