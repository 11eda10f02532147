"""TempCloze's released edge baseline (`TempCloze/edge_matching_baseline.py` @444324b): frozen
DINOv2 features of each clip's edge frames, a candidate scored by how well its edges continue the
context, and the mean probability of the true middle reported (not an accuracy).

What it does, as released (docs/tempcloze-upstream.md, "The released edge baseline"):
- frames: the main evaluation's 16 bin-centred indices of each clip (`1 + int((i + 0.5) *
  (total - 2) / n)`, n = min(16, total - 2)), at most 360 px high (OpenCV's bilinear resize);
- edge frames, from those indices: BEGINNING's last 4, END's first 4, a candidate's first 4 and
  last 4 (an index at both ends counted once, so a candidate of fewer than 8 sampled frames is
  skipped: its question lands in `skipped` with the error);
- features: the image-feature backend (`hf-image:facebook/dinov2-base` by default), one unit
  vector per frame;
- a candidate's score: the mean of cos(mean(BEGINNING's last 4), mean(candidate's first 4)) and
  cos(mean(candidate's last 4), mean(END's first 4));
- probabilities: the four scores less the smallest when it is negative, divided by their sum
  (uniform when the sum is not positive); prediction = argmax; `gt_margin` = the true middle's
  score less the best other score;
- option order: `random.Random(f"{seed}:{stem}:{dim}")` over [GT, d1, d2, d3] (seed 42), dims
  S, A, C (C shown as Progression);
- reported per dimension and overall: the mean GT probability and the mean GT margin, in a JSON
  {"summary", "results": {stem: {dim: record}}, "skipped": [...]}; a stem missing files is
  skipped and listed.

Where this differs from the released script, and why: frames are decoded by the app's reader
(components.media: PyAV / decord, FFmpeg's decoders) instead of OpenCV's VideoCapture, so a
pixel may differ by a grey level; the resize is OpenCV's own. Pure maths here are numpy; the
features come through `backends.registry.resolve_embedder` (no concrete backend is imported).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Sequence

from components.cloze.data import ClozeDataset, Instance, clip_relpath
from components.cloze.questions import LETTERS, Question, make_question
from components.base.errors import DataFormatError, MediaError
from components.base.io import atomic_write_text, load_json
from components.media import bin_centred_indices, open_video, resize_max_height_opencv

if TYPE_CHECKING:
    import numpy as np

    from backends.base import EmbeddingBackend

NUM_FRAMES = 16
MAX_HEIGHT = 360
EDGE_FRAMES = 4
PRIMARY_VARIANT = f"edge{EDGE_FRAMES}_linear_probability"
VALID_DIMS = ("S", "A", "C")
DISPLAY_DIMS = {"S": "Semantic", "A": "Alignment", "C": "Progression"}
QUESTION_FIELDS = ("video_id", "dimension", "scores", "probabilities", "ground_truth_index",
                   "p_gt", "predicted_index", "correct", "gt_margin")
DEFAULT_SPEC = "hf-image:facebook/dinov2-base"


# -- the released maths -----------------------------------------------------------------------------
def edge_positions(sampled: Sequence[int], role: str, edge_frames: int = EDGE_FRAMES) -> list[int]:
    """The edge frames' indices among a clip's sampled indices (released
    `edge_indices_from_sampled`): "before" the last k, "after" the first k, "candidate" the first
    k then the last k, an index already taken not taken twice."""
    sampled = list(sampled)
    if role == "before":
        return sampled[-edge_frames:]
    if role == "after":
        return sampled[:edge_frames]
    if role != "candidate":
        raise ValueError(f"Unknown clip role: {role}")
    n = len(sampled)
    positions = list(range(min(edge_frames, n))) + list(range(max(0, n - edge_frames), n))
    chosen, seen = [], set()
    for pos in positions:
        if sampled[pos] not in seen:
            seen.add(sampled[pos])
            chosen.append(sampled[pos])
    return chosen


def _unit(vector: np.ndarray) -> np.ndarray:
    import numpy as np

    norm = float(np.linalg.norm(vector))
    if norm <= 0 or not math.isfinite(norm):
        return vector.astype(np.float32, copy=False)
    return (vector / norm).astype(np.float32, copy=False)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    import numpy as np

    return float(np.dot(_unit(a), _unit(b)))


def score_candidate(before: np.ndarray, candidate: np.ndarray, after: np.ndarray,
                    edge_frames: int = EDGE_FRAMES) -> dict[str, float | None]:
    """Left and right boundary cosines of mean edge features and their mean (`raw_score`);
    ValueError when a clip has too few edge frames (released `score_candidate`)."""
    for name, features, least in (("before", before, edge_frames),
                                  ("candidate", candidate, edge_frames * 2),
                                  ("after", after, edge_frames)):
        if features.ndim != 2 or features.shape[0] < least:
            raise ValueError(f"Invalid {name} feature shape for edge-{edge_frames}: "
                             f"{features.shape}")
    left = cosine(before[-edge_frames:].mean(axis=0), candidate[:edge_frames].mean(axis=0))
    right = cosine(candidate[-edge_frames:].mean(axis=0), after[:edge_frames].mean(axis=0))
    raw = (left + right) / 2.0
    return {"left_boundary_cosine": _finite(left), "right_boundary_cosine": _finite(right),
            "raw_score": _finite(raw)}


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def linear_probability(scores: Sequence[float]) -> np.ndarray:
    """Scores less their minimum when it is negative, over their sum; uniform when the sum is not
    positive (released `linear_probability`)."""
    import numpy as np

    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"Invalid score vector: {list(scores)}")
    weights = values.copy()
    if float(np.min(weights)) < 0:
        weights = weights - float(np.min(weights))
    total = weights.sum()
    if total <= 0 or not math.isfinite(float(total)):
        return np.full(values.shape, 1.0 / values.size, dtype=np.float64)
    return weights / total


def question_record(video_id: str, dim: str, expected_letter: str,
                    candidate_scores: dict[str, dict[str, float | None]]) -> dict[str, Any]:
    """One question's released record (QUESTION_FIELDS), from its four candidates' scores."""
    import numpy as np

    letters = list(LETTERS)
    if sorted(candidate_scores) != letters:
        raise ValueError(f"Expected candidate letters {letters}, got {sorted(candidate_scores)}")
    if expected_letter not in letters:
        raise ValueError(f"Unknown ground-truth letter: {expected_letter}")
    scores = [candidate_scores[letter].get("raw_score") for letter in letters]
    if any(s is None or not math.isfinite(float(s)) for s in scores):
        raise ValueError(f"Invalid candidate scores: {scores}")
    values = [float(s) for s in scores]
    probabilities = linear_probability(values)
    gt = letters.index(expected_letter)
    predicted = int(np.argmax(probabilities))
    best_wrong = max(s for i, s in enumerate(values) if i != gt)
    return {"video_id": video_id, "dimension": dim, "scores": [_finite(s) for s in values],
            "probabilities": [_finite(float(p)) for p in probabilities],
            "ground_truth_index": gt, "p_gt": _finite(float(probabilities[gt])),
            "predicted_index": predicted, "correct": predicted == gt,
            "gt_margin": _finite(values[gt] - best_wrong)}


def summarize(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Mean GT probability and mean GT margin per dimension and overall (released
    `summarize`); None where a bucket is empty."""
    import numpy as np

    buckets: dict[str, dict[str, list[float]]] = {
        name: {"p_gt": [], "gt_margin": []} for name in (*DISPLAY_DIMS.values(), "Overall")}
    for stem_results in results.values():
        if not isinstance(stem_results, dict):
            continue
        for dim in VALID_DIMS:
            question = compact_record(stem_results.get(dim))
            if question is None or question.get("p_gt") is None or question.get("gt_margin") is None:
                continue
            for name in (DISPLAY_DIMS[dim], "Overall"):
                buckets[name]["p_gt"].append(float(question["p_gt"]))
                buckets[name]["gt_margin"].append(float(question["gt_margin"]))
    return {name: {"mean_gt_probability": float(np.mean(b["p_gt"])) if b["p_gt"] else None,
                   "mean_gt_margin": float(np.mean(b["gt_margin"])) if b["gt_margin"] else None}
            for name, b in buckets.items()}


def format_summary(summary: dict[str, Any]) -> str:
    """The released console summary."""
    lines = [f"\n{PRIMARY_VARIANT.upper()}"]
    for name in (*DISPLAY_DIMS.values(), "Overall"):
        metrics = summary.get(name, {})
        p, margin = metrics.get("mean_gt_probability"), metrics.get("mean_gt_margin")
        lines.append(f"  {name}: Mean GT Prob={'N/A' if p is None else f'{p:.4f}'}; "
                     f"Mean GT Margin={'N/A' if margin is None else f'{margin:.4f}'}")
    return "\n".join(lines)


def is_question_record(value: Any) -> bool:
    return isinstance(value, dict) and all(f in value for f in QUESTION_FIELDS)


def compact_record(value: Any) -> dict[str, Any] | None:
    """A question record (also inside an older file's per-variant dict), reduced to its fields."""
    if is_question_record(value):
        return {f: value[f] for f in QUESTION_FIELDS}
    if isinstance(value, dict) and is_question_record(value.get(PRIMARY_VARIANT)):
        return {f: value[PRIMARY_VARIANT][f] for f in QUESTION_FIELDS}
    return None


# -- frames and features ----------------------------------------------------------------------------
def edge_frames(path: Path, role: str, num_frames: int = NUM_FRAMES, max_height: int = MAX_HEIGHT):
    """The edge frames of one clip as pictures (the app's decoder, OpenCV's resize)."""
    source = open_video(path)
    try:
        sampled = bin_centred_indices(source.info.num_frames, num_frames)
        frames = source.frames_at_indices(edge_positions(sampled, role)) if sampled else []
    finally:
        source.close()
    return [resize_max_height_opencv(f.image.convert("RGB"), max_height) for f in frames]


@dataclass
class StemEdges:
    """One stem's released records and the questions it skipped."""

    results: dict[str, dict]
    skipped: list[dict]


def _role(rel: str) -> str:
    return {"before.mp4": "before", "after.mp4": "after"}.get(rel, "candidate")


def _rel(clip: str) -> str:
    return clip_relpath(clip)


def stem_edges(inst: Instance, embedder: EmbeddingBackend, *, seed: int = 42,
               num_frames: int = NUM_FRAMES, dims: Sequence[str] = VALID_DIMS,
               asked: Sequence[Question] | None = None) -> StemEdges:
    """The released `process_stem`: every clip of the stem's questions encoded in one batch,
    then each question scored. The questions are the released ones (`make_question(stem, dim,
    seed)`, the eval order) unless `asked` gives them (the Cloze tab's question as shown, in
    its own option order: the record's indices then refer to its letters)."""
    import numpy as np

    skipped: list[dict] = []
    questions: dict[str, Question] = {}
    given = {q.dim: q for q in asked or ()}
    for dim in (list(given) if asked is not None else dims):
        q = given.get(dim) or make_question(inst.stem, dim, seed)
        needed = ["before.mp4", "after.mp4"] + [_rel(c) for c in q.options]
        missing = [rel for rel in needed if not (inst.folder / rel).exists()]
        if missing:
            skipped.append({"stem": inst.stem, "dim": dim, "reason": "missing_files",
                            "missing": missing})
            continue
        questions[dim] = q
    rels = sorted({rel for q in questions.values()
                   for rel in ["before.mp4", "after.mp4"] + [_rel(c) for c in q.options]})
    slices: dict[str, tuple[int, int]] = {}
    frames: list = []
    bad: dict[str, str] = {}
    for rel in rels:
        try:
            clip = edge_frames(inst.folder / rel, _role(rel), num_frames)
        except MediaError as exc:
            clip, why = [], str(exc)
        else:
            why = f"No sampled frames from {rel}"
        if not clip:
            bad[rel] = why
            continue
        slices[rel] = (len(frames), len(frames) + len(clip))
        frames.extend(clip)
    for dim, q in list(questions.items()):
        broken = {rel: bad[rel] for rel in ["before.mp4", "after.mp4"] + [_rel(c) for c in q.options]
                  if rel in bad}
        if broken:
            skipped.append({"stem": inst.stem, "dim": dim, "reason": "empty_sampled_frames",
                            "details": broken})
            del questions[dim]
    results: dict[str, dict] = {}
    if not questions:
        return StemEdges(results, skipped)
    features = np.asarray(embedder.embed_images(frames), dtype=np.float32)
    by_rel = {rel: features[a:b] for rel, (a, b) in slices.items()}
    for dim, q in questions.items():
        try:
            scores = {letter: score_candidate(by_rel["before.mp4"], by_rel[_rel(clip)],
                                              by_rel["after.mp4"])
                      for letter, clip in q.option_map.items()}
            results[dim] = question_record(inst.stem, dim, q.expected, scores)
        except ValueError as exc:
            skipped.append({"stem": inst.stem, "dim": dim, "reason": type(exc).__name__,
                            "message": str(exc)})
    return StemEdges(results, skipped)


# -- a whole data set, resumable, in the released file -----------------------------------------------
def load_existing(path: Path) -> tuple[dict[str, dict], list[dict]]:
    """The results and skipped list of a released-format file (empty when there is none)."""
    if not path.exists():
        return {}, []
    data = load_json(path, "edge baseline result file")
    if not isinstance(data, dict):
        raise DataFormatError(f"{path}: not an edge baseline result file (one JSON object with "
                              "\"summary\", \"results\" and \"skipped\"); choose another --out.")
    results: dict[str, dict] = {}
    for stem, dims in (data.get("results") or {}).items():
        if isinstance(dims, dict):
            kept = {d: r for d in VALID_DIMS if (r := compact_record(dims.get(d))) is not None}
            if kept:
                results[str(stem)] = kept
    skipped = data.get("skipped", [])
    return results, skipped if isinstance(skipped, list) else []


def edge_stems(ds: ClozeDataset) -> dict[str, Instance]:
    """The stems the released script runs on: every folder of choices/ that holds GT.mp4, a
    hidden one too (the data set's own list leaves hidden folders out and keeps a folder
    without GT.mp4, which would add three skipped entries the released file does not have)."""
    from components import datasource

    found: dict[str, Instance] = {}
    for folder in datasource.subfolders(ds.root / "choices"):
        if datasource.is_file(folder / "GT.mp4"):
            found[folder.name] = ds.instances.get(folder.name) or Instance(folder.name, folder)
    return found


def run_edge_baseline(ds: ClozeDataset, out: Path, embedder: EmbeddingBackend, *, seed: int = 42,
                      limit: int | None = None, stems: Sequence[str] | None = None,
                      save_every: int = 25, overwrite: bool = False,
                      progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The released `main`: every stem (`edge_stems`, sorted; `stems` to choose, `limit` to cut), resuming a
    file where every dimension of a stem is done, written atomically every `save_every` stems
    and at the end. Returns the payload written."""
    import json

    out = Path(out)
    if overwrite and out.exists():
        out.unlink()
    results, skipped = load_existing(out)
    found = edge_stems(ds)
    names = sorted(found)
    if stems:
        wanted = set(stems)
        names = [s for s in names if s in wanted]
    if limit is not None:
        names = names[:limit]

    def write() -> dict[str, Any]:
        payload = {"summary": summarize(results), "results": results, "skipped": skipped}
        atomic_write_text(out, json.dumps(payload, indent=2, ensure_ascii=False))
        return payload

    processed = 0
    for n, stem in enumerate(names, 1):
        done = results.get(stem)
        if isinstance(done, dict) and all(is_question_record(done.get(d)) for d in VALID_DIMS):
            continue
        edges = stem_edges(found[stem], embedder, seed=seed)
        if edges.results:
            results[stem] = edges.results
        skipped.extend(edges.skipped)
        processed += 1
        if progress is not None:
            progress(n, len(names))
        if processed % max(1, save_every) == 0:
            write()
    return write()


def answer_question(inst: Instance, q: Question, embedder: EmbeddingBackend) -> dict[str, Any]:
    """One question as the released baseline scores it (the Cloze tab's DINOv2 baseline): the
    question as asked, in its own option order, so `predicted_index` is a letter of `q`."""
    edges = stem_edges(inst, embedder, seed=q.seed, asked=[q])
    if q.dim not in edges.results:
        why = edges.skipped[-1] if edges.skipped else {"reason": "no result"}
        raise MediaError(f"The released edge baseline skipped {q.stem} {q.dim}: "
                         f"{why.get('message') or why.get('reason')}.")
    return edges.results[q.dim]


def default_spec() -> str:
    """The image-feature backend: APP_EDGE_MODEL (a hub id or folder), else DINOv2-base."""
    import os

    model = os.environ.get("APP_EDGE_MODEL", "").strip()
    return f"hf-image:{model}" if model else DEFAULT_SPEC
