"""The cache of generated example data under tests/.cache: one folder per part, named by a key that
changes whenever anything the part's bytes depend on changes:

- every project file the generator imports, directly or through other project modules (any
  import statement, at the top or inside a function), so moving code between modules is covered;
- the x264 build PyAV encodes with and the FFmpeg library versions;
- the versions of the third-party packages that draw or measure the data (numpy, Pillow, OpenCV,
  the renderers) and the offscreen GL platform;
- KEY_FORMAT, to throw every cached part away at once.

Generation takes an exclusive file lock, so parallel pytest processes never write one folder twice.
"""
from __future__ import annotations

import ast
import fcntl
import hashlib
import importlib.metadata
import os
from functools import lru_cache
from pathlib import Path

from examples.generate import generate_part, generator_module, is_complete

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "tests" / ".cache"
KEY_FORMAT = "2"
PROJECT_PACKAGES = ("components", "backends", "examples")
PACKAGES = ("av", "numpy", "pillow", "opencv-python-headless", "scipy", "trimesh", "pyrender", "smplx",
            "mannequin-x", "PyOpenGL")


def module_file(module: str) -> Path | None:
    """The file of project module `module` (a .py file or a package's __init__.py), if any."""
    base = ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imported_modules(path: Path) -> set[str]:
    """Project modules named by the import statements of `path`, with their parent packages."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    found = set()
    for name in names:
        parts = name.split(".")
        if parts[0] in PROJECT_PACKAGES:
            found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {name for name in found if module_file(name)}


def source_closure(module: str) -> list[Path]:
    """The project files `module` runs when imported and called, sorted."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen or module_file(name) is None:
            continue
        seen.add(name)
        todo.extend(_imported_modules(module_file(name)) - seen)
    return sorted(module_file(name) for name in seen)


@lru_cache(maxsize=1)
def encoder_fingerprint() -> str:
    """The x264 build (from the version banner it writes into a one-frame stream) and the FFmpeg
    library versions PyAV links."""
    import io

    import av
    import numpy as np

    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=1)
        stream.width, stream.height, stream.pix_fmt = 16, 16, "yuv420p"
        stream.codec_context.thread_count = 1
        frame = av.VideoFrame.from_ndarray(np.zeros((16, 16, 3), np.uint8), format="rgb24")
        for packet in [*stream.encode(frame), *stream.encode()]:
            container.mux(packet)
    data = buffer.getvalue()
    start = data.find(b"x264 - core")
    banner = data[start:data.find(b" - H.264", start)].decode("ascii", "replace") if start >= 0 else "?"
    return f"{banner}; {sorted(av.library_versions.items())}"


def _package_versions() -> str:
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name}=none")
    return ",".join(versions)


def cache_key(part: str) -> str:
    """12 hex digits naming the cached copy of example part `part`."""
    gl = os.environ.get("PYOPENGL_PLATFORM", "")  # which offscreen renderer draws the impact body
    digest = hashlib.sha256(f"{KEY_FORMAT}\n{encoder_fingerprint()}\n{_package_versions()}\n{gl}\n".encode())
    for path in source_closure(generator_module(part)) + [ROOT / "examples" / "generate.py"]:
        digest.update(f"{path.relative_to(ROOT)}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def cached_part(part: str) -> Path:
    """The folder holding example part `part`, generated on first use."""
    root = CACHE / f"examples-{part}-{cache_key(part)}"
    if is_complete(root, part):
        return root / part
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".examples-{part}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_complete(root, part):
            generate_part(part, root)
    return root / part
