"""TempCloze example data: six synthetic videos with continuous motion, turned into instances in
the released `choices/` layout by the app's own gap and distractor code (components/cloze/build.py).

    generate(out_dir, seed=0) writes out_dir/sources/*.mp4, out_dir/choices/<stem>/...,
    out_dir/meta.json, out_dir/sets.json ("examples", "mixed"), out_dir/results/edge1.json, five
    runs in the released result format (results/example-model0N_results.json), and a
    small human-study set, out_dir/choices_human/set_1/ and set_2/ (3 stems each: README "Running a
    human study" works on it as written).

Every video pans a smooth textured background (so the Farneback check passes), drifts its colours
from "morning" to "evening", and moves one object steadily (ball, bar, clock hand, ...), so the
true middle connects BEGINNING to END while Reverse/Shuffle/Loop/Early/Late break continuity.
Deterministic: numpy's seeded generator, fixed sizes/fps, libx264 crf 18 via components.media
(whose encoder settings make the bytes independent of the machine: one thread, no macroblock tree).
"""
from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from pathlib import Path

from components.cloze.build import build_instance
from components.cloze.data import load_dataset
from components.cloze.questions import build_set
from components.cloze.study.design import assign, materialise
from components.base.io import atomic_write_json
from components.cloze.pipeline import answer_safely, records_to_results
from components.cloze.solvers import EdgeSolver
from components.media import write_video_from_arrays
from examples.released_runs import write_released_runs

W, H, FPS = 192, 144, 24
KINDS = ("ball_roll", "bar_fill", "clock_hand", "colour_path", "growing_disc", "block_stack")
#: human-study sets in choices_human/ (each stem in exactly one)
STUDY_SETS = 2
#: runs in TempCloze's released result format in results/ (examples/released_runs.py)
EXAMPLE_RUNS = 5


def _panorama(rng, height: int, width: int):
    import numpy as np

    y = np.arange(height, dtype=np.float32)[:, None]
    x = np.arange(width, dtype=np.float32)[None, :]
    tex = np.zeros((height, width), np.float32)
    for i in range(6):  # medium detail (flow needs it) plus two broad shapes
        lo, hi, weight = (16, 40, 1.0) if i < 4 else (90, 220, 0.7)
        lx, ly = rng.uniform(lo, hi), rng.uniform(lo, hi)
        px, py = rng.uniform(0, 2 * math.pi, 2)
        tex += weight * np.sin(2 * math.pi * x / lx + px) * np.cos(2 * math.pi * y / ly + py)
    tex = (tex - tex.min()) / (tex.max() - tex.min() + 1e-6)
    return tex


def _render(kind: str, duration: float, seed: int):
    """Yield HxWx3 uint8 frames of one synthetic video."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = int(round(duration * FPS))
    speed = 3.0 + rng.uniform(0, 0.5)  # background pan, px per frame
    horizontal = KINDS.index(kind) % 2 == 0
    extent = int(speed * n) + max(W, H) + 4
    pano = _panorama(rng, H + (0 if horizontal else extent), W + (extent if horizontal else 0))
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    c0 = np.array(rng.uniform(0.55, 0.95, 3), np.float32)   # morning tint
    c1 = np.array(rng.uniform(0.0, 0.4, 3), np.float32)   # evening tint
    for k in range(n):
        p = k / max(1, n - 1)   # progress 0..1
        off = int(speed * k)
        win = pano[:, off:off + W] if horizontal else pano[off:off + H, :]
        tint = (1 - p) * c0 + p * c1
        img = 0.6 * win[..., None] + 0.4 * tint[None, None, :]  # constant texture contrast
        img = img.copy()
        if kind == "ball_roll":
            cx, cy = 16 + (W - 32) * p, H * 0.65 - 20 * abs(math.sin(6 * math.pi * p))
            mask = (xx - cx) ** 2 + (yy - cy) ** 2 < 11 ** 2
            img[mask] = (0.95, 0.2, 0.15)
        elif kind == "bar_fill":
            top = int(H - 20 - (H - 40) * p)
            img[top:H - 20, W // 2 - 18:W // 2 + 18] = (0.1, 0.85, 0.2)
            img[20:H - 20, W // 2 - 20:W // 2 - 18] = 1.0
            img[20:H - 20, W // 2 + 18:W // 2 + 20] = 1.0
        elif kind == "clock_hand":
            ang = 2 * math.pi * p - math.pi / 2
            cx, cy = W / 2, H / 2
            d2 = (xx - cx) ** 2 + (yy - cy) ** 2  # the dial is an outline: the background shows through
            img[(d2 < 52 ** 2) & (d2 > 48 ** 2)] = 0.92
            for r in np.linspace(0, 46, 46):
                x0, y0 = int(cx + r * math.cos(ang)), int(cy + r * math.sin(ang))
                img[max(0, y0 - 3):y0 + 3, max(0, x0 - 3):x0 + 3] = (0.1, 0.1, 0.6)
        elif kind == "colour_path":
            ang = 1.5 * math.pi * p
            cx, cy = W / 2 + 60 * math.cos(ang), H / 2 + 45 * math.sin(ang)
            sq = (abs(xx - cx) < 14) & (abs(yy - cy) < 14)
            img[sq] = (1.0 - p, 0.2, p)
        elif kind == "growing_disc":
            r = 6 + 60 * p  # a ring, so the textured background stays visible for the flow check
            d2 = (xx - W / 2) ** 2 + (yy - H / 2) ** 2
            img[(d2 < r ** 2) & (d2 > (r - 5) ** 2)] = (0.95, 0.8, 0.1)
        elif kind == "block_stack":
            count = 1 + int(8 * p)
            for b in range(count):
                y1 = H - 8 - b * 15
                img[max(0, y1 - 13):y1, W // 2 - 24:W // 2 + 24] = (0.2 + 0.08 * b, 0.3, 0.9 - 0.08 * b)
        yield (np.clip(img, 0, 1) * 255).astype(np.uint8)


def _write_source(kind: str, path: Path, duration: float, seed: int) -> None:
    write_video_from_arrays(_render(kind, duration, seed), path, FPS)


def generate(out_dir: Path, seed: int = 0, progress: Callable[[float], None] | None = None) -> None:
    """The instances, their sets and the Edge-1 results; `progress(fraction)` after each step."""
    out_dir = Path(out_dir)
    sources = out_dir / "sources"
    sources.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    stems = []
    for i, kind in enumerate(KINDS):
        duration = 12.0 + rng.choice([0.25, 0.5, 0.75, 1.0])
        src = sources / f"{kind}.mp4"
        _write_source(kind, src, duration, seed * 1000 + i)
        build_instance(src, out_dir, stem=kind, seed=seed)
        stems.append(kind)
        if progress:
            progress(0.9 * (i + 1) / len(KINDS))
    mixed = []
    for stem in stems:
        r = random.Random(f"{seed}:{stem}:mixed")
        mixed.append({"stem": stem, "S": f"S/{r.choice(['Rand1', 'Rand2', 'Rand3'])}.mp4",
                      "A": f"A/{r.choice(['Early', 'Late', 'Wide'])}.mp4",
                      "P": f"C/{r.choice(['Reverse', 'Shuffle', 'Loop'])}.mp4"})
    (out_dir / "sets.json").write_text(json.dumps({"examples": stems, "mixed": mixed}, indent=1))
    _baseline_results(out_dir)
    # released-format runs with the released files' quirks: the tab's run panels show them
    write_released_runs(stems, out_dir / "results", EXAMPLE_RUNS, seed=seed, prefix="example-model")
    _study_sets(out_dir)


def _study_sets(out_dir: Path) -> None:
    """choices_human/set_1, set_2: the released study layout (the study page's `data`), each stem
    in one set, so `python -m components.cloze.study check | invite | serve` run on the example
    data. Hard links to the instances' clips (copies across file systems)."""
    ds = load_dataset(out_dir)
    materialise(ds, assign(sorted(ds.instances), k=STUDY_SETS, r=1, seed=0), out_dir)


def _baseline_results(out_dir: Path) -> None:
    """results/edge1.json: the Edge-1 baseline over every stem and dimension (seed 42)."""
    ds = load_dataset(out_dir)
    solver = EdgeSolver("edge1")
    recs = [answer_safely(solver, ds, q) for q in build_set(ds, "all").questions]
    for r in recs:
        r.pop("timestamp_utc", None)  # keep the file byte-identical across runs
    atomic_write_json(out_dir / "results" / "edge1.json", records_to_results(recs))
