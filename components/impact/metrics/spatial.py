"""Spatial on-body metrics (docs/metrics.md "Spatial"; HAPACT Table 4, A.6.3).

Per annotated frame, as in the DECO challenge code (`precision_recall_f1score`, `det_error_metric`):
- pred and GT are boolean masks over the body's vertices; TP = |pred & GT|;
  precision = TP / |pred|, recall = TP / |GT|, F1 their harmonic mean;
- no predicted vertex: precision 1, recall 0, F1 0 (checked first, so it also covers "both empty");
  else no GT vertex: precision 0, recall 1, F1 0; else precision + recall <= 1e-10: all 0;
- geodesic error: mean over predicted vertices of the geodesic distance to the nearest GT vertex;
  nothing predicted -> every vertex counts as predicted; no GT -> every vertex counts as GT
  (error 0). Metres x 100 = cm. Distances come from components.impact.geodesic.
Averages are over frames. Per-group F1 (7 groups): only on frames where the group has GT vertices,
with both masks restricted to the group's vertices, averaged over those frames.
Region selection: label-level F1 per frame between the predicted and GT label sets (same rules).

Units: precision, recall and F1 are percentages 0-100 (docs/metrics.md: "All percentages are 0-100";
the paper's Tables 4, 10 and 12 print them so); geodesic error in cm. Unrounded floats.
A group with no GT frame has F1 None (not 0: there was nothing to score).
Intervals (docs/metrics.md "Intervals"): over queries, a query's frames resampled together.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from components.common import stats
from components.impact.body import BodyModel, vertex_mask_from_annotation
from components.impact.geodesic import nearest_distance
from components.impact.regions import GROUPS, REGION_LABELS


def prf_from_counts(tp: int, num_pred: int, num_gt: int) -> tuple[float, float, float]:
    """(precision, recall, F1) as fractions 0-1 with DECO's special cases, in DECO's order."""
    if num_pred == 0:
        return 1.0, 0.0, 0.0
    if num_gt == 0:
        return 0.0, 1.0, 0.0
    precision = tp / num_pred
    recall = tp / num_gt
    if precision + recall <= 1e-10:
        return 0.0, 0.0, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)


def prf(pred_mask: np.ndarray, gt_mask: np.ndarray) -> tuple[float, float, float]:
    """Shapes: pred_mask, gt_mask: (n_vertices,) bool -> (precision, recall, F1) floats 0-1"""
    pred_mask = np.asarray(pred_mask, dtype=bool)
    gt_mask = np.asarray(gt_mask, dtype=bool)
    return prf_from_counts(int(np.count_nonzero(pred_mask & gt_mask)),
                           int(np.count_nonzero(pred_mask)), int(np.count_nonzero(gt_mask)))


def geodesic_error_m(pred_mask: np.ndarray, gt_mask: np.ndarray, nearest_to_gt) -> float:
    """Mean distance (metres) from predicted vertices to the nearest GT vertex.

    `nearest_to_gt(mask) -> (N,) distances to the nearest vertex of mask` (a geodesic oracle).

    Shapes: pred_mask, gt_mask: (n_vertices,) bool; nearest_to_gt(mask) -> (n_vertices,) float -> float metres"""
    pred_mask = np.asarray(pred_mask, dtype=bool)
    gt_mask = np.asarray(gt_mask, dtype=bool)
    if not gt_mask.any():
        return 0.0  # every vertex is GT: each predicted vertex is at distance 0 from itself
    distances = nearest_to_gt(gt_mask)
    rows = pred_mask if pred_mask.any() else np.ones_like(pred_mask)
    return float(np.mean(distances[rows], dtype=np.float64))


def group_masks(body: BodyModel) -> dict[str, np.ndarray]:
    """Shapes: -> group -> (n_vertices,) bool (7 groups)"""
    return {group: np.isin(body.vertex_region, [REGION_LABELS.index(label) for label in labels])
            for group, labels in GROUPS.items()}


def _check(mask: np.ndarray, body: BodyModel, what: str) -> np.ndarray:
    """Shapes: mask: (n_vertices,) bool -> (n_vertices,) bool"""
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (body.num_vertices,):
        raise ValueError(f"{what} mask has shape {mask.shape}; the {body.kind} body has "
                         f"{body.num_vertices} vertices")
    return mask


def frame_metrics(pred_mask: np.ndarray, gt_mask: np.ndarray, body: BodyModel,
                  *, groups: dict[str, np.ndarray] | None = None) -> dict:
    """One frame: precision, recall, F1 (0-100), geodesic_cm, and F1_<group> for groups with GT.
    Shapes: pred_mask, gt_mask: (n_vertices,) bool; groups: group -> (n_vertices,) bool -> dict of floats"""
    pred_mask = _check(pred_mask, body, "predicted")
    gt_mask = _check(gt_mask, body, "ground-truth")
    precision, recall, f1 = prf(pred_mask, gt_mask)
    result = {"precision": 100 * precision, "recall": 100 * recall, "F1": 100 * f1,
              "geodesic_cm": 100 * geodesic_error_m(pred_mask, gt_mask,
                                                    lambda m: nearest_distance(body, m))}
    for group, members in (groups or group_masks(body)).items():
        if (gt_mask & members).any():
            result[f"F1_{group}"] = 100 * prf(pred_mask & members, gt_mask & members)[2]
    return result


def spatial_metrics(pred_masks: Sequence[np.ndarray], gt_masks: Sequence[np.ndarray],
                    body: BodyModel) -> dict:
    """Averages over frames -> keys F1, precision, recall, geodesic_cm, F1_<group> (7), num_frames,
    and frames_<group> (how many frames scored that group).
    Shapes: pred_masks, gt_masks: (n_frames, n_vertices) bool -> dict of floats"""
    if len(pred_masks) != len(gt_masks):
        raise ValueError(f"{len(pred_masks)} predicted frames but {len(gt_masks)} ground-truth frames")
    groups = group_masks(body)
    return summarise_frames([frame_metrics(p, g, body, groups=groups) for p, g in zip(pred_masks, gt_masks)])


def summarise_frames(frames: Sequence[dict]) -> dict:
    """`spatial_metrics` from the per-frame dicts of `frame_metrics`.
    Shapes: frames: (n_frames,) dicts of floats -> dict of floats"""
    result: dict = {}
    for key in ("F1", "precision", "recall", "geodesic_cm"):
        result[key] = float(np.mean([f[key] for f in frames])) if frames else None
    for group in GROUPS:
        values = [f[f"F1_{group}"] for f in frames if f"F1_{group}" in f]
        result[f"F1_{group}"] = float(np.mean(values)) if values else None
        result[f"frames_{group}"] = len(values)
    result["num_frames"] = len(frames)
    return result


def label_f1(pred_labels: Sequence[str], gt_labels: Sequence[str]) -> float:
    """Label-level F1 (0-100) for one frame between label sets, with the same special cases.
    Shapes: pred_labels: (n_pred,) str, gt_labels: (n_gt,) str -> float"""
    pred, gt = set(pred_labels), set(gt_labels)
    return 100 * prf_from_counts(len(pred & gt), len(pred), len(gt))[2]


def label_metrics(pred_label_sets: Sequence[Sequence[str]],
                  gt_label_sets: Sequence[Sequence[str]]) -> dict:
    """Mean label-level F1 over frames, and per-label F1 (0-100) over all frames (Figure 6):
    for each of the 18 labels, F1 of "label selected" against "label in GT" across frames
    (None for a label that is neither predicted nor in any GT).
    Shapes: pred_label_sets, gt_label_sets: (n_frames,) label lists -> dict (per_label_F1: 18 floats or None)"""
    if len(pred_label_sets) != len(gt_label_sets):
        raise ValueError("predicted and ground-truth label lists differ in length")
    per_frame = [label_f1(p, g) for p, g in zip(pred_label_sets, gt_label_sets)]
    per_label: dict[str, float | None] = {}
    for label in REGION_LABELS:
        tp = sum(1 for p, g in zip(pred_label_sets, gt_label_sets) if label in p and label in g)
        npred = sum(1 for p in pred_label_sets if label in p)
        ngt = sum(1 for g in gt_label_sets if label in g)
        per_label[label] = None if npred == 0 and ngt == 0 else 100 * prf_from_counts(tp, npred, ngt)[2]
    return {"label_F1": float(np.mean(per_frame)) if per_frame else None,
            "per_label_F1": per_label, "num_frames": len(per_frame)}


def frame_rows(gt_records: Sequence[dict], pred_records: Sequence[dict | None],
               body: BodyModel) -> list[dict]:
    """Per frame (records as `spatial_metrics_from_records` takes them): `frame_metrics` plus the
    frame's `label_F1`, `regions` (predicted labels) and `truth` (GT labels).
    Shapes: gt_records: (n_frames,) dicts, pred_records: (n_frames,) dicts or None -> (n_frames,) dicts of floats"""
    if len(gt_records) != len(pred_records):
        raise ValueError("one prediction (or None) is needed per ground-truth frame")
    groups = group_masks(body)
    rows = []
    for gt, pred in zip(gt_records, pred_records):
        pred = pred or {}
        gt_mask = vertex_mask_from_annotation(body, gt.get("regions"), gt.get("vertices"))
        pred_mask = vertex_mask_from_annotation(body, pred.get("regions"), pred.get("vertices"))
        row = frame_metrics(pred_mask, gt_mask, body, groups=groups)
        row["regions"] = list(pred.get("regions") or [])
        row["truth"] = list(gt.get("regions") or [])
        row["label_F1"] = label_f1(row["regions"], row["truth"])
        rows.append(row)
    return rows


def summarise_rows(rows: Sequence[dict], units: Sequence[str] | None = None) -> dict:
    """`spatial_metrics` of `frame_rows` plus `label_F1` (mean label-level F1 over the frames) and
    `per_label_F1`; with `units` (each frame's query id) also `intervals`, resampled over queries.
    Shapes: rows: (n_frames,) dicts, units: (n_frames,) str query ids or None -> dict of floats"""
    result = summarise_frames(rows)
    labels = label_metrics([r["regions"] for r in rows], [r["truth"] for r in rows])
    result["label_F1"] = labels["label_F1"]
    result["per_label_F1"] = labels["per_label_F1"]
    if units is not None:
        result["intervals"] = {k: e.to_json() for k, e in stats.estimates(unit_scores(rows, units)).items()}
    return result


def spatial_metrics_from_records(gt_records: Sequence[dict], pred_records: Sequence[dict | None],
                                 body: BodyModel, *, units: Sequence[str] | None = None) -> dict:
    """Convenience for the CLI/UI: records are {"regions": [...], "vertices": [...] (optional)},
    one GT and one prediction per annotated frame, in the same order. A missing prediction (None)
    is an empty prediction (precision 1, recall 0, F1 0, geodesic over all vertices).
    Returns `summarise_rows` of the frames.
    Shapes: gt_records: (n_frames,) dicts, pred_records: (n_frames,) dicts or None, units: (n_frames,) str or None -> dict"""
    return summarise_rows(frame_rows(gt_records, pred_records, body), units)


def unit_scores(frames: Sequence[dict], units: Sequence[str]) -> list[stats.SumScore]:
    """The frame averages as sums over queries (a query's frames share one clip and one answer
    style, so they are resampled together): each score is the sum over a query's frames over its
    frame count (per group: over the frames where the group has GT), aligned to the queries in
    first-seen order.
    Shapes: frames: (n_frames,) dicts, units: (n_frames,) str -> (12,) SumScore, each over (n_queries,)"""
    if len(frames) != len(units):
        raise ValueError(f"{len(frames)} frames but {len(units)} unit labels")
    order = list(dict.fromkeys(units))
    index = {u: i for i, u in enumerate(order)}

    def per_query(key: str) -> tuple[list[float], list[float]]:
        """Shapes: -> (num, den): each (n_queries,) float"""
        num, den = [0.0] * len(order), [0.0] * len(order)
        for frame, unit in zip(frames, units):
            if key in frame:
                num[index[unit]] += frame[key]
                den[index[unit]] += 1.0
        return num, den

    scores = []
    for key in ("F1", "precision", "recall", "geodesic_cm", "label_F1",
                *(f"F1_{group}" for group in GROUPS)):
        num, den = per_query(key)
        scores.append(stats.ratio(key, num, den, unit="queries"))
    return scores
