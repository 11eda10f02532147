"""Building a TempCloze instance from any video, by the released generation rules:
gap 20-40% of T inside the middle 50%, accepted when the Farneback flow magnitude averaged over
EVERY consecutive frame pair inside it is > 1.0 (up to 3 tries), then the nine distractors
(gaps.py) cut with components.media. The entry goes to `<out>/meta.json` (the app's layout;
the released generator writes `output/<preset>/meta.json`, which layout.load_meta also reads)."""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from components.cloze.gaps import distractor_intervals, duration_problem, sample_gap
from components.base.errors import UserError
from components.common.intervals import Interval
from components.base.io import atomic_write_text, load_json, path_lock
from components.media import cut_clip, loop_segment, open_video, reorder_thirds, reverse_clip

FLOW_THRESHOLD = 1.0
FLOW_HEIGHT = 256
GAP_TRIES = 3


@dataclass
class GapChoice:
    gap: Interval | None
    flow: float | None
    tries: list[dict] = field(default_factory=list)  # {"gap": [s, e], "flow": f, "accepted": bool}

    @property
    def reasons(self) -> list[str]:
        return [f"try {i + 1}: gap {t['gap'][0]:.2f}-{t['gap'][1]:.2f} s, mean flow {t['flow']:.2f} "
                f"{'>' if t['accepted'] else '<='} {FLOW_THRESHOLD}" for i, t in enumerate(self.tries)]


def _flow_gray(rgb, size: tuple[int, int] | None):
    """Grey frame at height 256, width round(256 w / h) as the released filter resizes."""
    import cv2
    import numpy as np

    g = cv2.cvtColor(np.asarray(rgb), cv2.COLOR_RGB2GRAY)
    h, w = g.shape
    return cv2.resize(g, size or (max(1, int(round(FLOW_HEIGHT * w / h))), FLOW_HEIGHT))


def _pair_magnitude(prev_gray, next_gray) -> float:
    import cv2
    import numpy as np

    flow = cv2.calcOpticalFlowFarneback(prev_gray, next_gray, None, 0.5, 3, 15, 3, 5, 1.2, 0)
    return float(np.sqrt(flow[..., 0] ** 2 + flow[..., 1] ** 2).mean())


def gap_frame_range(start: float, end: float, fps: float, num_frames: int) -> range:
    """The frames the released motion check reads: int(start * fps) up to, not including,
    int(end * fps) (clipped to the video)."""
    first = max(0, int(start * fps))
    return range(first, min(num_frames, int(end * fps)))


def mean_flow(video: str | Path, start: float, end: float) -> float:
    """Farneback magnitude averaged over every consecutive frame pair of [start, end) (the
    released filter's rule; frames streamed in batches, so memory stays flat on long gaps).
    0.0 when the gap holds fewer than two frames."""
    src = open_video(video)
    mags: list[float] = []
    try:
        info = src.info
        frames = gap_frame_range(start, end, info.fps, info.num_frames)
        prev = None
        for frame in src.iter_indices(list(frames)):
            gray = _flow_gray(frame.image, None if prev is None else (prev.shape[1], prev.shape[0]))
            if prev is not None:
                mags.append(_pair_magnitude(prev, gray))
            prev = gray
    finally:
        src.close()
    return sum(mags) / len(mags) if mags else 0.0


def choose_gap(video: str | Path, duration: float, rng: random.Random, *, flow_fn=mean_flow,
               tries: int = GAP_TRIES) -> GapChoice:
    choice = GapChoice(None, None)
    for _ in range(tries):
        gap = sample_gap(duration, rng)
        flow = flow_fn(video, gap.start, gap.end)
        ok = flow > FLOW_THRESHOLD
        choice.tries.append({"gap": gap.as_list(2), "flow": flow, "accepted": ok})
        if ok:
            choice.gap, choice.flow = gap, flow
            break
    return choice


def write_instance_clips(video: str | Path, folder: Path, gap: Interval, duration: float,
                         rng: random.Random) -> dict[str, list[float]]:
    """Write before/GT/after and S/, A/, C/ clips; returns each clip's source interval."""
    gs, ge = gap.start, gap.end
    iv = distractor_intervals(gs, ge, duration, rng)
    for sub in ("S", "A", "C"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    cut_clip(video, 0.0, gs, folder / "before.mp4")
    cut_clip(video, gs, ge, folder / "GT.mp4")
    cut_clip(video, ge, duration, folder / "after.mp4")
    for name in ("Early", "Late", "Wide"):
        cut_clip(video, iv[name].start, iv[name].end, folder / "A" / f"{name}.mp4")
    for name in ("Rand1", "Rand2", "Rand3"):
        cut_clip(video, iv[name].start, iv[name].end, folder / "S" / f"{name}.mp4")
    reverse_clip(folder / "GT.mp4", folder / "C" / "Reverse.mp4")
    reorder_thirds(folder / "GT.mp4", folder / "C" / "Shuffle.mp4", (1, 2, 0))
    loop_segment(video, iv["Loop"].start, iv["Loop"].end, 3, folder / "C" / "Loop.mp4")
    return {name: v.as_list(3) for name, v in iv.items()}


def build_instance(video: str | Path, out_root: str | Path, *, stem: str | None = None,
                   gap: tuple[float, float] | None = None, seed: int = 0, check_flow: bool = True,
                   flow_fn=mean_flow) -> dict:
    """Make `out_root/choices/<stem>/...` from `video` and add its entry to `out_root/meta.json`.
    An explicit `gap` skips the flow check. Raises UserError with the reasons when rejected."""
    video, out_root = Path(video), Path(out_root)
    stem = stem or video.stem
    if stem in (".", "..") or any(c in stem for c in "/\\\x00"):  # stays inside choices/
        raise UserError(f"{video.name}: instance name {stem!r} is not a plain folder name; rename the file.")
    src = open_video(video)
    try:
        duration = src.info.duration
    finally:
        src.close()
    problem = duration_problem(duration)
    if problem:
        raise UserError(f"{video.name}: {problem}")
    rng = random.Random(f"{seed}:{stem}")
    tries: list[dict] = []
    if gap is not None:
        g = Interval(float(gap[0]), float(gap[1]))
        if not 0 < g.start < g.end < duration:
            raise UserError(f"{video.name}: the gap must satisfy 0 < start < end < {duration:.2f} s "
                            f"(got {g.start}-{g.end}).")
        flow = None
    else:
        choice = choose_gap(video, duration, rng, flow_fn=flow_fn) if check_flow else None
        if choice is None:
            g, flow = sample_gap(duration, rng), None
        elif choice.gap is None:
            raise UserError(f"{video.name} rejected: too little motion in every sampled gap "
                            f"(needs mean Farneback flow > {FLOW_THRESHOLD}); "
                            + "; ".join(choice.reasons))
        else:
            g, flow, tries = choice.gap, choice.flow, choice.tries
    folder = out_root / "choices" / stem
    intervals = write_instance_clips(video, folder, g, duration, rng)
    entry = {"gap_start": round(g.start, 2), "gap_end": round(g.end, 2), "duration": round(duration, 3),
             "seed": seed, "rng": f"random.Random('{seed}:{stem}')", "flow": flow,
             "gap_tries": tries, "intervals": intervals}
    add_meta_entry(out_root / "meta.json", video.name, entry)
    return entry


def add_meta_entry(meta_path: Path, name: str, entry: dict) -> None:
    """Add or replace one video's entry in meta.json, atomically (two builds never lose one)."""
    with path_lock(meta_path):
        meta = load_json(meta_path, "meta.json") if meta_path.exists() else {}
        if not isinstance(meta, dict):
            raise UserError(f"{meta_path} is not a meta.json object; move it away to build here.")
        meta[name] = entry
        atomic_write_text(meta_path, json.dumps(meta, indent=1, sort_keys=True))

