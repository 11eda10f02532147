"""Shared fixtures: example data (generated once, cached under tests/.cache by everything its bytes
depend on: tests/helpers/example_cache.py), the tiny model; and the `slow` mark for the system and
browser tests (`make test-fast` leaves them out)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.helpers.example_cache import CACHE, cached_part

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")
# the disk cache (frames, timelines) of this test session, not the user's ~/.cache: a test that
# counts decodes is never answered by an earlier session's entries
if "APP_CACHE_DIR" not in os.environ:
    _SESSION_CACHE = tempfile.mkdtemp(prefix="vbe-test-cache-")
    os.environ["APP_CACHE_DIR"] = _SESSION_CACHE
else:
    _SESSION_CACHE = None
# the turntables and the body's mesh file of this session (default: one folder under /tmp that
# every server and test session on the machine shares): a test that counts the frames drawn is
# never answered by a turntable another session drew
if "IMPACT_RENDER_DIR" not in os.environ:
    _SESSION_RENDER = tempfile.mkdtemp(prefix="vbe-test-render-")
    os.environ["IMPACT_RENDER_DIR"] = _SESSION_RENDER
else:
    _SESSION_RENDER = None

ROOT = Path(__file__).resolve().parents[1]
SLOW_FOLDERS = ("system", "browser")


def pytest_sessionfinish(session, exitstatus) -> None:
    import shutil

    for folder in (_SESSION_CACHE, _SESSION_RENDER):
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(config, items) -> None:
    """Every test under tests/system and tests/browser is `slow` (a live app, a browser)."""
    slow_roots = [ROOT / "tests" / folder for folder in SLOW_FOLDERS]
    for item in items:
        if any(root in item.path.parents for root in slow_roots):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def grounding_examples() -> Path:
    return cached_part("grounding")


@pytest.fixture(scope="session")
def cloze_examples() -> Path:
    return cached_part("cloze")


@pytest.fixture(scope="session")
def impact_examples() -> Path:
    return cached_part("impact")


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

    path = CACHE / "tiny-qwen25vl-8k"  # 8k context: the tabs' prompts are ~5k byte tokens
    if not (path / "config.json").exists():
        build_tiny_qwen25vl(path)
    return path
