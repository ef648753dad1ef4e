"""Pack what a lent GPU machine lacks into one archive that travels with the checkout (64 MiB in all).

The lent machine's image (Python 3.12, torch 2.11 + Triton 3.6, transformers 5.17, ...; IMAGE_PACKAGES) has
no network. This script takes the project's runtime closure (pyproject's dependencies, walked through the
installed metadata, at the versions constraints.txt pins) plus the gpu extra's kernels (liger-kernel,
flash-linear-attention / fla-core; not Triton 3.7.1, whose ~160 MB wheel cannot travel), drops what the image
already has (except CARRY_OURS, whose image versions differ from ours), downloads cp312 manylinux wheels,
installs them into a folder, strips what no check needs (STRIP) and packs it as `.gpu-pack/site.tar.xz`.

    python bench/gpu_device_pack.py                 # -> .gpu-pack/site.tar.xz (+ its size and the checkout's)
    python bench/gpu_device_pack.py --rehearse      # + a cp311 twin, run bench/gpu_device_check.py --cpu-tiny here
                                                    #   against it and the image's packages alone

There: `mkdir -p /tmp/pack/site-packages && tar -xJf .gpu-pack/site.tar.xz -C /tmp/pack/site-packages` then
`PYTHONPATH=/tmp/pack/site-packages:$PWD python3 bench/gpu_device_check.py` (docs/GPU.md). The folder's name
must hold `site-packages`: `datasets` hashes its transforms with dill, which pickles a module found anywhere
else by value (and fails on pyarrow's types).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PACK_DIR = ROOT / ".gpu-pack"
CARRY_LIMIT_MIB = 64
# The image's Python packages as the lent machine listed them (2026-11-17, the device docs' KINDS.md).
IMAGE_PACKAGES = """absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build
certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings cuda-core
cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock flatbuffers
flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx huggingface-hub humanize
hypothesis idna imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib
kiwisolver lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml markdown markdown-it-py
markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict multipledispatch mypy-extensions nanobind
narwhals networkx ninja numba numba-cuda numpy numpyro nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc
nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse
nvidia-cusparselt-cu13 nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir
onnxruntime onnxscript opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging
pandas pathspec patsy peft pillow pip pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11
py-cpuinfo pygments pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock
pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors
scikit-build-core scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools shellingham
simplejson six sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server tensorstore
threadpoolctl tifffile tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics
torchvision tqdm transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig
werkzeug wheel wrapt xarray xxhash yarl zipp""".split()
# In the image, but at another version than ours, and our code depends on the difference (transformers 5.23's
# activation_checkpointing_enable(every_n_layers, offload), its tokenizers pin, peft's version is unknown there).
CARRY_OURS = {"transformers", "tokenizers", "peft"}
NEVER = ("torch", "triton", "nvidia-", "cuda-")  # the image's CUDA stack, always
# Only the Kubernetes executor and the S3 paths of litellm / dagster import these: no device check does.
SKIP = {"dagster-k8s", "kubernetes", "boto3", "botocore", "s3transfer", "durationpy", "websocket-client"}
GPU_KERNELS = {"liger-kernel": "0.8.5", "fla-core": "0.6.0", "flash-linear-attention": "0.6.0"}
# Trees no check reads: the web UIs' built front ends (litellm imports `litellm/proxy/_experimental` itself).
STRIP = ("litellm/proxy/_experimental/out", "dagster_webserver/webapp")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64", "manylinux_2_34_x86_64", "manylinux_2_31_x86_64", "manylinux_2_24_x86_64")


def _environment(python: str) -> dict[str, str]:
    return {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
            "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def _applies(req: Requirement, env: dict[str, str], extras: set[str]) -> bool:
    return req.marker is None or any(req.marker.evaluate(env | {"extra": e}) for e in ("", *sorted(extras)))


def closure(python: str) -> dict[str, str]:
    """name -> version of every package the project needs at run time (no test extra), as installed here."""
    env = _environment(python)
    top = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    todo = [Requirement(r) for r in top if _applies(Requirement(r), env, set())]  # each checked once, when found
    extras_of: dict[str, set[str]] = {}
    versions: dict[str, str] = {}
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in versions and set(req.extras) <= extras_of[name]:
            continue
        extras_of.setdefault(name, set()).update(req.extras)
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            raise SystemExit(f"{name} is needed but not installed here: install the project first") from None
        versions[name] = dist.version
        todo += [r for r in map(Requirement, dist.requires or []) if _applies(r, env, extras_of[name])]
    return versions


def to_carry(python: str) -> dict[str, str]:
    image = {canonicalize_name(n) for n in IMAGE_PACKAGES}
    carry = {n: v for n, v in closure(python).items()
             if not n.startswith(NEVER) and n not in SKIP and (n not in image or n in CARRY_OURS)}
    return carry | GPU_KERNELS


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def build(python: str, out: Path) -> Path:
    """Download, install, strip and pack; returns the archive."""
    packages = to_carry(python)
    wheels, site = out / "wheels", out / "site"
    shutil.rmtree(site, ignore_errors=True)
    wheels.mkdir(parents=True, exist_ok=True)
    target = ["--only-binary=:all:", "--python-version", python, "--implementation", "cp",
              *[a for p in PLATFORMS for a in ("--platform", p)]]
    pins = [f"{n}=={v}" for n, v in sorted(packages.items())]
    _pip("download", "-q", "--no-deps", *target, "-d", str(wheels), *pins)
    _pip("install", "-q", "--no-deps", "--no-compile", "--no-index", "--find-links", str(wheels), "--target", str(site),
         *target, *pins)
    for rel in STRIP:
        shutil.rmtree(site / rel, ignore_errors=True)
    for cache in site.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    archive = out / "site.tar.xz"
    with tarfile.open(archive, "w:xz", preset=6) as tar:
        for child in sorted(site.iterdir()):
            tar.add(child, arcname=child.name)
    (out / "packages.txt").write_text("\n".join(pins) + "\n")
    return archive


def checkout_bytes() -> int:
    """What a device call sends besides the carried paths: tracked and untracked-not-ignored files."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.split(b"\0")
    return sum((ROOT / f.decode()).stat().st_size for f in files if f and (ROOT / f.decode()).is_file())


def fake_image_site(dest: Path) -> Path:
    """This venv's copies of the image's packages, alone (links to their top-level modules): what the rehearsal
    imports besides the pack, so a module the pack lacks fails here as it would there."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name in IMAGE_PACKAGES:
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            src = Path(dist.locate_file(top))
            if src.exists() and not (dest / top).exists():
                (dest / top).symlink_to(src)
    return dest


def rehearse(out: Path) -> int:
    """Build the cp311 twin and run the device check's CPU path against it and the image's packages only."""
    twin = build("3.11", out / "rehearse-311")
    site = out / "rehearse-311" / "unpacked" / "site-packages"  # as on the device: dill's test for installed code
    shutil.rmtree(site, ignore_errors=True)
    site.mkdir(parents=True)
    with tarfile.open(twin) as tar:
        tar.extractall(site, filter="tar")
    image = fake_image_site(out / "rehearse-311" / "image" / "site-packages")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT), str(image)]))
    base_python = Path(sys.base_prefix) / "bin" / "python3"
    cmd = [str(base_python), "-S", str(ROOT / "bench" / "gpu_device_check.py"), "--cpu-tiny",
           "--out", str(out / "rehearse-311" / "out")]
    print("rehearsal:", " ".join(cmd), flush=True)
    return subprocess.run(cmd, env=env, cwd=ROOT).returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default="3.12", help="the lent image's Python (default 3.12)")
    ap.add_argument("--out", type=Path, default=PACK_DIR)
    ap.add_argument("--rehearse", action="store_true", help="also run the check's CPU path against a cp311 twin")
    args = ap.parse_args()
    archive = build(args.python, args.out)
    pack, tree = archive.stat().st_size, checkout_bytes()
    print(f"{archive.relative_to(ROOT) if archive.is_relative_to(ROOT) else archive}: {pack / 2**20:.1f} MiB "
          f"({len(to_carry(args.python))} packages); checkout {tree / 2**20:.1f} MiB; together "
          f"{(pack + tree) / 2**20:.1f} of {CARRY_LIMIT_MIB} MiB")
    if pack + tree > CARRY_LIMIT_MIB * 2**20:
        raise SystemExit("over the carry limit: strip more (STRIP) or carry fewer packages")
    if args.rehearse:
        raise SystemExit(rehearse(args.out))


if __name__ == "__main__":
    main()
