"""Fixtures for the window-search tests: small real videos, subtitles, a private disk cache."""
from __future__ import annotations

import re
import threading
from pathlib import Path

import numpy as np
import pytest

from components.media import DiskCache, write_video_from_arrays


def write_test_video(path: Path, seconds: float, fps: float = 2.0, size: tuple[int, int] = (32, 32)) -> Path:
    """A real H.264 video whose frame brightness rises with time (decodable by the media layer)."""
    n = int(round(seconds * fps))
    w, h = size
    frames = (np.full((h, w, 3), (i * 7) % 256, np.uint8) for i in range(n))
    return write_video_from_arrays(frames, path, fps=fps, crf=30)


def write_srt(path: Path, cues: list[tuple[float, float, str]]) -> Path:
    def ts(s: float) -> str:
        ms = int(round(s * 1000))
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"

    path.write_text("\n".join(f"{i}\n{ts(s)} --> {ts(e)}\n{t}\n" for i, (s, e, t) in enumerate(cues, 1)),
                    encoding="utf-8")
    return path


class BagOfWordsEmbedder:
    """A small real text embedder (hashed bag of words, unit rows) that counts its calls."""

    supports_images = False

    def __init__(self, dim: int = 64):
        self.dim = dim
        self.calls = 0
        self.lock = threading.Lock()

    @property
    def backend_id(self) -> str:
        return f"test-bow:{self.dim}"

    def embed_texts(self, texts):
        import zlib

        with self.lock:
            self.calls += 1
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]+", t.lower()):
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out


@pytest.fixture
def cache(tmp_path):
    return DiskCache(tmp_path / "cache")


@pytest.fixture(scope="session")
def video_25s(tmp_path_factory) -> Path:
    return write_test_video(tmp_path_factory.mktemp("ws") / "v25.mp4", 25.0)


@pytest.fixture
def bow():
    return BagOfWordsEmbedder()
