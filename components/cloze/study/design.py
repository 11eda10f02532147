"""Study design beyond the released tool: from a stem list, K annotator sets such that every stem
(so each of its S, A, P questions) is judged by exactly R annotators, sets balanced to within one
stem. The paper (Appendix C): 100 videos, K = 5 annotators, 120 questions (40 stems) each, R = 2.

Stems are shuffled with `random.Random(seed)`, then stem i goes to sets i*R .. i*R + R - 1 (mod K):
R distinct sets per stem, and a set's size is floor or ceil of N*R/K."""
from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

from components.cloze.data import ClozeDataset
from components.cloze.study.protocol import REQUIRED_CLIPS
from components.cloze.data import clip_relpath
from components.base.errors import UserError
from components.base.io import atomic_write_json


def assign(stems: list[str], k: int, r: int, seed: int = 0) -> dict[str, list[str]]:
    """set_1..set_K -> sorted stems; each stem in exactly r sets."""
    if not 1 <= r <= k:
        raise UserError(f"Each question needs 1 <= R <= K annotators (got R={r}, K={k}).")
    if not stems:
        raise UserError("No stems to assign.")
    order = sorted(set(stems))
    random.Random(seed).shuffle(order)
    sets: dict[str, list[str]] = {f"set_{j + 1}": [] for j in range(k)}
    for i, stem in enumerate(order):
        for j in range(r):
            sets[f"set_{(i * r + j) % k + 1}"].append(stem)
    return {name: sorted(v) for name, v in sets.items()}


def coverage(sets: dict[str, list[str]]) -> dict[str, int]:
    """stem -> how many sets hold it."""
    out: dict[str, int] = {}
    for stems in sets.values():
        for s in stems:
            out[s] = out.get(s, 0) + 1
    return out


def export_assignment(sets: dict[str, list[str]], out: str | Path, *, k: int, r: int, seed: int) -> Path:
    """The assignment as JSON (sets, K, R, seed, questions per set = 3 x stems)."""
    return atomic_write_json(out, {"k": k, "r": r, "seed": seed, "rule": "shuffle(seed); stem i -> sets i*R..i*R+R-1 mod K",
                                   "questions_per_set": {n: 3 * len(v) for n, v in sets.items()},
                                   "sets": sets})


def materialise(ds: ClozeDataset, sets: dict[str, list[str]], dest: str | Path) -> Path:
    """`dest/choices_human/set_N/<stem>/...` as hard links (copies across file systems)."""
    root = Path(dest) / "choices_human"
    for name, stems in sets.items():
        for stem in stems:
            inst = ds.instance(stem)
            for clip in REQUIRED_CLIPS:
                src, target = inst.clip_path(clip), root / name / stem / clip_relpath(clip)
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.exists():
                    continue
                try:
                    os.link(src, target)
                except OSError:
                    shutil.copyfile(src, target)
    return root
