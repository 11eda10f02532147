"""Small real clips + an impact annotation file for the temporal/CLI/UI tests (not a test module)."""
from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Sequence

import numpy as np

FPS = 24


def block_clip(path: Path, num_frames: int = 156,
               impacts: Sequence[tuple[int, int]] = ((83, 86),)) -> Path:
    """A static textured scene with a white block that jumps around during each 1-based inclusive
    frame range of `impacts`, and a small dot drifting slowly the whole time (background motion)."""
    from components.media import write_video_from_arrays

    rng = np.random.default_rng(0)
    background = rng.integers(40, 90, size=(64, 96, 3), dtype=np.uint8)
    frames = []
    for j in range(num_frames):  # 0-based
        frame = background.copy()
        x, y = 10, 10
        for fs, fe in impacts:
            if fs - 1 <= j <= fe - 1:
                x, y = 30 + 12 * (j - fs + 1), 30
        frame[y:y + 16, x:x + 16] = 255
        dot = 4 + (j // 6) % 80
        frame[56:58, dot:dot + 2] = 200
        frames.append(frame)
    return write_video_from_arrays(frames, path, FPS)


def make_impact_data(root: Path) -> Path:
    """<root>/impact/annotations.json with two clips (one single-moment, one two-moment)."""
    impact = root / "impact"
    (impact / "clips").mkdir(parents=True, exist_ok=True)
    block_clip(impact / "clips" / "h0001.mp4", 156, [(83, 86)])
    block_clip(impact / "clips" / "h0002.mp4", 120, [(30, 31), (90, 93)])
    data = {"fps": FPS, "items": [
        {"qid": "h0001", "video": "clips/h0001.mp4", "query": "A man is struck behind the knees by a staff.",
         "split": "test", "movie": "tt0000001", "num_frames": 156, "moments": [[83, 86]],
         "frames": {str(f): {"regions": ["left calf", "right calf"]} for f in range(83, 87)}},
        {"qid": "h0002", "video": "clips/h0002.mp4", "query": "A woman is punched in the face twice.",
         "split": "test", "movie": "tt0000002", "num_frames": 120, "moments": [[30, 31], [90, 93]],
         "frames": {**{str(f): {"regions": ["head"]} for f in (30, 31)},
                    **{str(f): {"regions": ["head", "neck"]} for f in range(90, 94)}}},
    ]}
    path = impact / "annotations.json"
    path.write_text(json.dumps(data, indent=1))
    return path
