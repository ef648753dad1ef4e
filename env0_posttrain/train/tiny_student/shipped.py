"""Tiny students shipped in the repository, as a hub would serve them: built once by their recipe, checked by digest.

Pre-training the demo's base is the longest stage of a cold demo (about 4 minutes on 2 cores), yet its result is
fixed by the recipe, the corpus and the entity tokens. So the built directory is kept under `shipped/` with a
manifest naming, per checkpoint, the recipe key it answers (`student_digest` without the thread count: the same
weights serve every machine, as a hub checkpoint would), the thread count and kernels that built it, and the
sha256 of every file. A build that finds its recipe here copies the directory into the cache instead of training,
after checking the files against the manifest: a mismatch refuses, naming both digests. `rebuild` trains the same
recipe again (`env0-posttrain base rebuild`) and says whether it reproduces the shipped files, or replaces them.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from env0_posttrain.util.fsutil import atomic_write_text, replace_dir

SHIPPED_ROOT = Path(__file__).with_name("shipped")
MANIFEST = "manifest.json"
SKIPPED = ("__pycache__", "tensorboard")  # the pre-training's event files name the host and the hour: not shipped
VARIES = ("tiny_student.json",)  # the build's record (its runtime): not part of "the rebuild reproduces it"


class ShippedError(RuntimeError):
    """A shipped checkpoint that does not match its manifest, or a manifest that cannot be read."""


class ShippedStudent(BaseModel):
    """One shipped checkpoint: the directory `name` under the shipped root."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^tiny-[A-Za-z0-9_]+-[0-9a-f]{16}$", description="the cache directory it installs as")
    recipe: str = Field(pattern=r"^[0-9a-f]{16}$", description="student_digest(corpus, entities, config), no threads")
    torch_threads: int = Field(ge=1, description="the thread count it was pre-trained at")
    built_on: str = Field(description="the device and kernels that built it (util/devices.device_label)")
    built_at_commit: str = Field(default="", description="the project commit whose recipe built it")
    files: dict[str, str] = Field(description="relative path -> sha256 of every file")

    def digest(self) -> str:
        return files_sha256(self.files)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    students: list[ShippedStudent] = Field(default_factory=list)


def files_sha256(files: dict[str, str]) -> str:
    """One digest over a directory's (path, sha256) pairs: what the refusal names."""
    return hashlib.sha256(json.dumps(sorted(files.items())).encode()).hexdigest()


def hash_files(directory: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in sorted(directory.rglob("*")):
        rel = f.relative_to(directory)
        if f.is_file() and not any(p in SKIPPED for p in rel.parts):
            with open(f, "rb") as fh:
                out[rel.as_posix()] = hashlib.file_digest(fh, "sha256").hexdigest()
    return out


def read_manifest(root: Path = SHIPPED_ROOT) -> Manifest:
    path = Path(root) / MANIFEST
    if not path.exists():
        return Manifest()
    try:
        return Manifest.model_validate_json(path.read_text())
    except ValueError as e:
        raise ShippedError(f"{path}: not a shipped-students manifest ({e})") from None


def find_shipped(recipe: str, architecture: str, root: Path = SHIPPED_ROOT) -> ShippedStudent | None:
    for entry in read_manifest(root).students:
        if entry.recipe == recipe and entry.name.startswith(f"tiny-{architecture}-"):
            return entry
    return None


def verify(entry: ShippedStudent, root: Path = SHIPPED_ROOT) -> Path:
    """The shipped directory, once its files match the manifest; else ShippedError naming both digests."""
    directory = Path(root) / entry.name
    found = hash_files(directory) if directory.is_dir() else {}
    if found != entry.files:
        changed = sorted(k for k in entry.files.keys() | found.keys() if entry.files.get(k) != found.get(k))
        raise ShippedError(
            f"shipped tiny student {directory}: its files' digest is {files_sha256(found)}, the manifest "
            f"{Path(root) / MANIFEST} says {entry.digest()} (differing: {', '.join(changed[:5])}); refusing to load "
            "it. Restore it from git, or rebuild it from its recipe: env0-posttrain base rebuild --write")
    return directory


def install(entry: ShippedStudent, cache_dir: Path, marker: str, root: Path = SHIPPED_ROOT) -> Path:
    """Copy a verified shipped checkpoint into the cache (once; concurrent callers wait on the same lock the
    build takes) and return its cache directory."""
    dest = Path(cache_dir) / entry.name
    if (dest / marker).exists():
        return dest
    with open(Path(cache_dir) / f".{dest.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (dest / marker).exists():
            return dest
        source = verify(entry, root)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=cache_dir))
        try:
            shutil.copytree(source, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*SKIPPED))
            if hash_files(tmp) != entry.files:  # the copy is what was checked
                raise ShippedError(f"shipped tiny student {entry.name}: the copy in {cache_dir} differs from the "
                                   "checked files (disk full?)")
            replace_dir(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def write_entry(built: Path, recipe: str, threads: int, built_on: str, commit: str,
                root: Path = SHIPPED_ROOT) -> ShippedStudent:
    """Put a freshly built student under the shipped root and its entry in the manifest (replacing an entry of the
    same recipe and architecture, and its directory)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    entry = ShippedStudent(name=built.name, recipe=recipe, torch_threads=threads, built_on=built_on,
                           built_at_commit=commit, files=hash_files(built))
    manifest = read_manifest(root)
    arch = built.name.rsplit("-", 1)[0]
    kept = []
    for old in manifest.students:
        if old.recipe == recipe and old.name.rsplit("-", 1)[0] == arch:
            shutil.rmtree(root / old.name, ignore_errors=True)
        else:
            kept.append(old)
    tmp = Path(tempfile.mkdtemp(prefix=f".{built.name}.", dir=root))
    try:
        shutil.copytree(built, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*SKIPPED))
        replace_dir(tmp, root / built.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    manifest = Manifest(students=sorted([*kept, entry], key=lambda e: e.name))
    atomic_write_text(root / MANIFEST, manifest.model_dump_json(indent=2) + "\n")
    return entry


class RebuildOutcome(BaseModel):
    name: str
    recipe: str
    built_digest: str
    shipped_digest: str | None = Field(description="None: nothing shipped for this recipe")
    same: bool = Field(description="every file but the build's record (VARIES) is byte-identical to the shipped one")
    written: bool
    differing: list[str] = Field(default_factory=list)


def rebuild(built: Path, recipe: str, threads: int, built_on: str, commit: str, *, write: bool,
            root: Path = SHIPPED_ROOT) -> RebuildOutcome:
    """Compare a student just built from the recipe with what is shipped for it; with `write`, ship it."""
    entry = find_shipped(recipe, built.name.split("-")[1], root)
    files = hash_files(built)
    differing = [] if entry is None else sorted(
        k for k in entry.files.keys() | files.keys() if entry.files.get(k) != files.get(k))
    same = entry is not None and entry.name == built.name and all(k in VARIES for k in differing)
    if write:
        write_entry(built, recipe, threads, built_on, commit, root)
    return RebuildOutcome(name=built.name, recipe=recipe, built_digest=files_sha256(files),
                          shipped_digest=entry.digest() if entry else None, same=same, written=write,
                          differing=differing)

