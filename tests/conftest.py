"""Shared fixtures: example data (generated once, cached by generator source hash), tiny model."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "tests" / ".cache"
# What each part's bytes depend on: its generator, the tab logic it reuses and the media layer.
GENERATOR_FILES = {"grounding": ["examples/movie.py"],
                   "cloze": ["examples/cloze_data.py", "components/cloze/build.py",
                             "components/cloze/intervals.py"],
                   "impact": ["examples/impact_clips.py", "components/impact/body.py",
                              "components/impact/render.py"]}
SHARED_FILES = ["components/media/clips.py", "components/media/frames.py"]


def _example_part(part: str) -> Path:
    from examples.generate import generate_part, is_complete

    digest = hashlib.sha256()
    for rel in GENERATOR_FILES[part] + SHARED_FILES:
        path = ROOT / rel
        digest.update(path.read_bytes() if path.exists() else b"")
    digest = digest.hexdigest()[:12]
    root = CACHE / f"examples-{part}-{digest}"
    if not is_complete(root, part):
        generate_part(part, root)
    return root / part


@pytest.fixture(scope="session")
def grounding_examples() -> Path:
    return _example_part("grounding")


@pytest.fixture(scope="session")
def cloze_examples() -> Path:
    return _example_part("cloze")


@pytest.fixture(scope="session")
def impact_examples() -> Path:
    return _example_part("impact")


@pytest.fixture(scope="session")
def example_data_dir(grounding_examples, cloze_examples, impact_examples) -> Path:
    """A data dir holding all three parts (symlinks into the per-part caches)."""
    root = CACHE / "example-data"
    root.mkdir(parents=True, exist_ok=True)
    for part_dir in (grounding_examples, cloze_examples, impact_examples):
        link = root / part_dir.name
        if link.is_symlink() or link.exists():
            if link.resolve() == part_dir.resolve():
                continue
            link.unlink()
        link.symlink_to(part_dir.resolve())
    return root


@pytest.fixture(scope="session")
def tiny_vlm_dir() -> Path:
    """A random-weight Qwen2.5-VL saved to disk (built offline, ~0.2 M parameters)."""
    from tests.helpers.tiny_model import build_tiny_qwen25vl

    path = CACHE / "tiny-qwen25vl"
    if not (path / "config.json").exists():
        build_tiny_qwen25vl(path)
    return path
