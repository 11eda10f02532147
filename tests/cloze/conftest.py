"""Helpers for the cloze tests: a private, writable copy of the example data; the clip decodes a
test makes, counted."""
import shutil
import threading
from pathlib import Path

import pytest


@pytest.fixture
def decodes(monkeypatch, tmp_path):
    """Each real decode of a clip from here on, as (thread name, path): the real decoder, counted,
    with empty frames caches (in memory, and a disk cache of the test's own). Background drawing
    left by earlier tests is waited for first."""
    from components.cloze import frames

    frames._prefetcher.submit(lambda: None).result(120)
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "decodes-cache"))
    calls = []
    real = frames._sampled

    def counted(path, n, max_height, **how):
        calls.append((threading.current_thread().name, path))
        return real(path, n, max_height, **how)
    monkeypatch.setattr(frames, "_sampled", counted)
    frames.FRAMES.clear()   # what the app keeps (a test calling frames itself passes its own)
    yield calls
    frames._prefetcher.submit(lambda: None).result(120)


@pytest.fixture
def cloze_copy(cloze_examples, tmp_path) -> Path:
    """A copy of the example cloze folder (choices/, meta.json, sets.json) tests may damage."""
    dest = tmp_path / "cloze"
    dest.mkdir()
    shutil.copytree(cloze_examples / "choices", dest / "choices")
    for name in ("meta.json", "sets.json"):
        shutil.copy(cloze_examples / name, dest / name)
    return dest


def write_video(path: Path, seconds: float, *, moving: bool = True, size=(64, 48), fps=24) -> Path:
    """A small test video: a bright bar sweeping across a gradient (or a flat grey frame)."""
    import numpy as np

    from components.media import write_video_from_arrays

    w, h = size
    n = int(seconds * fps)
    xx = np.tile(np.arange(w, dtype=np.float32), (h, 1))

    def frames():
        for k in range(n):
            if moving:
                v = 127 + 120 * np.sin(2 * np.pi * (xx - 3 * k) / 16)
                img = np.stack([v, v[:, ::-1], np.full_like(v, 255 * k / n)], -1)
            else:
                img = np.full((h, w, 3), 128, np.float32)
            yield img.clip(0, 255).astype(np.uint8)

    return write_video_from_arrays(frames(), path, fps)
