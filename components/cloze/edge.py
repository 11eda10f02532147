"""An offline pixel APPROXIMATION of the paper's edge baseline (Appendix B.2.2), for when no
DINOv2 weights are at hand; it is labelled so wherever it answers ("pixel approximation").

The released baseline (TempCloze/edge_matching_baseline.py, components/cloze/released_edge.py)
compares DINOv2 features and reports the mean probability of the true middle. This one, the app's
own: 1 - mean absolute pixel difference (0-1) of 64x48 RGB thumbnails of the sampled frames, the
candidate's first k frames against the last k of BEGINNING and its last k against the first k of
END (every pair averaged); the four scores are divided by their sum, and it answers the highest.
Its numbers are not the paper's Edge-1 / Edge-4.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Sequence

from components.cloze.questions import LETTERS

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

THUMB = (64, 48)
VARIANTS = {"edge1": 1, "edge4": 4}


@dataclass(frozen=True)
class EdgeAnswer:
    letter: str
    probabilities: dict[str, float]
    k: int

    @property
    def reason(self) -> str:
        probs = ", ".join(f"{k} {v:.3f}" for k, v in self.probabilities.items())
        return (f"Edge-{self.k} pixel approximation (not the released DINOv2 baseline): candidate "
                f"whose edge frames best match the context ({probs}).")


def _thumb(img: Image.Image) -> np.ndarray:
    import numpy as np

    return np.asarray(img.convert("RGB").resize(THUMB), dtype=np.float32) / 255.0


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    return float(1.0 - abs(a - b).mean())


def edge_scores(beginning: Sequence[Image.Image], end: Sequence[Image.Image],
                candidates: Sequence[Sequence[Image.Image]], k: int = 1) -> list[float]:
    """Mean similarity of each candidate's edges with the adjacent context frames."""
    b_tail = [_thumb(x) for x in beginning[-k:]]
    e_head = [_thumb(x) for x in end[:k]]
    scores = []
    for frames in candidates:
        head = [_thumb(x) for x in frames[:k]]
        tail = [_thumb(x) for x in frames[-k:]]
        left = [similarity(c, b) for c in head for b in b_tail]
        right = [similarity(c, e) for c in tail for e in e_head]
        scores.append((sum(left) / len(left) + sum(right) / len(right)) / 2)
    return scores


def edge_answer(beginning, end, candidates, k: int = 1) -> EdgeAnswer:
    scores = edge_scores(beginning, end, candidates, k)
    total = sum(scores)
    probs = [s / total if total > 0 else 1.0 / len(scores) for s in scores]
    best = max(range(len(probs)), key=lambda i: probs[i])
    return EdgeAnswer(LETTERS[best], dict(zip(LETTERS, probs)), k)
