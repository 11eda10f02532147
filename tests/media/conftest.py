"""Small real videos for the media tests (written once per session with PyAV)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.media.videos import write_index_video


@pytest.fixture(scope="session")
def media_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="session")
def index_video(media_dir) -> Path:
    """120 frames (5 s) at 24 fps, 64x48; frame i encodes i."""
    return write_index_video(media_dir / "index.mp4", 120, fps=24)


@pytest.fixture(scope="session")
def long_gop_video(media_dir) -> Path:
    """720 frames (30 s) at 24 fps with a keyframe every 240 frames (10 s), as in movies."""
    return write_index_video(media_dir / "long_gop.mp4", 720, fps=24, gop=240)
