"""HAPACT temporal metrics exactly as reference/metrics.md ("Impact moments in clips").

Inputs follow the QVHighlights JSONL convention: GT lines {"qid", "relevant_windows": [[s, e]]},
prediction lines {"qid", "pred_relevant_windows": [[s, e, score]]}. The per-query AP is the
ActivityNet/MMAction2 detection AP used by QVHighlights' and QV-M2's standalone_eval.

Which queries count:
- a GT query with no prediction line is left out of every average (reference behaviour: the
  reference evaluators only iterate over submitted qids);
- a prediction line with an empty window list (the model answered "None") stays in: AP 0, top-1 miss
  (the reference code cannot score such a line at all; counting it as a miss never flatters a model);
- prediction lines whose qid is not in the GT are ignored and counted in `unknown_pred_qids`.
All values are percentages 0-100, unrounded.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

import numpy as np

MAP_THRESHOLD = 0.3
HAPACT_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5)
MAX_PRED_WINDOWS = 10
LENGTH_BINS = {"short": (1, 2), "middle": (3, 6), "long": (7, None)}  # frames, inclusive


def temporal_iou(a: Sequence[float], b: Sequence[float]) -> float:
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


def _iou_row(pred: Sequence[float], gts: np.ndarray) -> np.ndarray:
    left = np.maximum(pred[0], gts[:, 0])
    right = np.minimum(pred[1], gts[:, 1])
    inter = np.clip(right - left, 0, None)
    union = (pred[1] - pred[0]) + (gts[:, 1] - gts[:, 0]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def interpolated_precision_recall(precision: np.ndarray, recall: np.ndarray) -> float:
    """ActivityNet: prepend (0, 0), append (recall 1, precision 0), make precision non-increasing
    from the right, sum (r[i+1] - r[i]) * p[i+1] where recall changes."""
    mprecision = np.hstack([[0.0], precision, [0.0]])
    mrecall = np.hstack([[0.0], recall, [1.0]])
    for i in range(len(mprecision) - 1)[::-1]:
        mprecision[i] = max(mprecision[i], mprecision[i + 1])
    idx = np.where(mrecall[1:] != mrecall[:-1])[0] + 1
    return float(np.sum((mrecall[idx] - mrecall[idx - 1]) * mprecision[idx]))


def average_precision(gt_windows: Sequence[Sequence[float]], pred_windows: Sequence[Sequence[float]],
                      thresholds: Sequence[float]) -> np.ndarray:
    """Per-query detection AP at each threshold (fractions 0-1). `pred_windows` [s, e, score]."""
    ap = np.zeros(len(thresholds))
    preds = list(pred_windows)[:MAX_PRED_WINDOWS]  # top 10 as listed, then sorted by score
    if not preds or not gt_windows:
        return ap
    preds = sorted(preds, key=lambda w: -w[2])  # stable
    gts = np.asarray([[g[0], g[1]] for g in gt_windows], dtype=float)
    lock_gt = np.full((len(thresholds), len(gts)), -1)
    tp = np.zeros((len(thresholds), len(preds)))
    fp = np.zeros((len(thresholds), len(preds)))
    for idx, pred in enumerate(preds):
        ious = _iou_row(pred, gts)
        order = ious.argsort()[::-1]  # visit GT windows in decreasing IoU (as the reference)
        for t_idx, thr in enumerate(thresholds):
            for j in order:
                if ious[j] < thr:
                    fp[t_idx, idx] = 1
                    break
                if lock_gt[t_idx, j] >= 0:
                    continue
                tp[t_idx, idx] = 1
                lock_gt[t_idx, j] = idx
                break
            if fp[t_idx, idx] == 0 and tp[t_idx, idx] == 0:
                fp[t_idx, idx] = 1
    tp_cum = np.cumsum(tp, axis=1)
    fp_cum = np.cumsum(fp, axis=1)
    recall = tp_cum / float(len(gts))
    precision = tp_cum / (tp_cum + fp_cum)
    for t_idx in range(len(thresholds)):
        ap[t_idx] = interpolated_precision_recall(precision[t_idx], recall[t_idx])
    return ap


def recall_matches_at_k(gt_windows: Sequence[Sequence[float]], pred_windows: Sequence[Sequence[float]],
                        k: int, threshold: float) -> int:
    """mR@k matching: top-k predictions in rank order, each to the unmatched GT of highest IoU,
    a match when that IoU >= threshold."""
    preds = sorted(pred_windows, key=lambda w: -w[2])[:k]
    unmatched = list(range(len(gt_windows)))
    matches = 0
    for pred in preds:
        if not unmatched:
            break
        best = max(unmatched, key=lambda j: temporal_iou(pred, gt_windows[j]))
        if temporal_iou(pred, gt_windows[best]) >= threshold:
            unmatched.remove(best)
            matches += 1
    return matches


def _pct(value: float | None) -> float | None:
    return None if value is None else float(value) * 100.0


def _pairs(gt: Iterable[dict], pred: Iterable[dict]) -> tuple[list[tuple[str, list, list]], int, int]:
    gt_by_qid = {str(g["qid"]): [list(w[:2]) for w in g["relevant_windows"]] for g in gt}
    pred_by_qid = {str(p["qid"]): [list(w[:3]) for w in p["pred_relevant_windows"]] for p in pred}
    pairs = [(qid, gt_by_qid[qid], pred_by_qid[qid]) for qid in gt_by_qid if qid in pred_by_qid]
    unknown = sum(1 for qid in pred_by_qid if qid not in gt_by_qid)
    missing = sum(1 for qid in gt_by_qid if qid not in pred_by_qid)
    return pairs, unknown, missing


def _core(pairs: list[tuple[str, list, list]], thresholds: Sequence[float]) -> dict:
    """mAP@0.3, R1@0.3, G-mAP and its groups, mR@1..3 over already-paired queries."""
    pairs = [p for p in pairs if p[1]]  # a GT line without windows cannot be scored
    out: dict = {"num_queries": len(pairs)}
    if not pairs:
        for key in ("mAP@0.3", "R1@0.3", "G-mAP", "@1_tgt", "@2_tgt", "@3+tgt", "mR@1", "mR@2", "mR@3"):
            out[key] = None
        return out
    ap_03 = [average_precision(g, p, [MAP_THRESHOLD])[0] for _, g, p in pairs]
    out["mAP@0.3"] = _pct(np.mean(ap_03))
    # R1: the first listed window against the GT window it overlaps most
    hits = []
    for _, g, p in pairs:
        top = p[0] if p else None
        hits.append(top is not None and max(temporal_iou(top, w) for w in g) >= MAP_THRESHOLD)
    out["R1@0.3"] = _pct(np.mean(hits))
    # G-mAP: per-query AP averaged over the thresholds, grouped by GT-window count
    groups: dict[int, list[float]] = defaultdict(list)
    for _, g, p in pairs:
        groups[len(g)].append(float(np.mean(average_precision(g, p, thresholds))))
    n_all = sum(len(v) for v in groups.values())
    out["G-mAP"] = _pct(sum(np.mean(v) * len(v) / n_all for v in groups.values()))
    out["@1_tgt"] = _pct(np.mean(groups[1])) if groups.get(1) else None
    out["@2_tgt"] = _pct(np.mean(groups[2])) if groups.get(2) else None
    big = [float(np.mean(v)) for count, v in groups.items() if count >= 3 and v]
    out["@3+tgt"] = _pct(np.mean(big)) if big else None  # unweighted mean of group means
    out["group_sizes"] = {str(count): len(v) for count, v in sorted(groups.items())}
    for k in (1, 2, 3):
        eligible_gt = [(g, p) for _, g, p in pairs if len(g) >= k]
        if not eligible_gt:
            out[f"mR@{k}"] = None
            continue
        eligible = [(g, p) for g, p in eligible_gt if len(p) >= k]
        per_thr = []
        for thr in thresholds:
            denom = sum(min(len(g), k) for g, _ in eligible)
            matched = sum(recall_matches_at_k(g, p, k, thr) for g, p in eligible)
            per_thr.append(matched / denom if denom else 0.0)
        out[f"mR@{k}"] = _pct(np.mean(per_thr))
        out[f"mR@{k}_queries"] = len(eligible)
    return out


def _map_summary(pairs: list[tuple[str, list, list]], thresholds: Sequence[float]) -> dict:
    pairs = [p for p in pairs if p[1]]
    if not pairs:
        return {"mAP@0.3": None, "mAP@0.1:0.5": None, "num_queries": 0}
    return {"mAP@0.3": _pct(np.mean([average_precision(g, p, [MAP_THRESHOLD])[0] for _, g, p in pairs])),
            "mAP@0.1:0.5": _pct(np.mean([np.mean(average_precision(g, p, thresholds))
                                          for _, g, p in pairs])),
            "num_queries": len(pairs)}


def length_breakdown(pairs: list[tuple[str, list, list]], fps: float,
                     thresholds: Sequence[float] = HAPACT_THRESHOLDS) -> dict:
    """Table 11(a). As QVHighlights' length ranges: keep only the GT windows whose length (frames)
    is in the bin; queries left without windows drop out of that bin; predictions are unchanged."""
    out = {}
    for name, (lo, hi) in LENGTH_BINS.items():
        chosen = []
        for qid, g, p in pairs:
            kept = [w for w in g if round((w[1] - w[0]) * fps) >= lo
                    and (hi is None or round((w[1] - w[0]) * fps) <= hi)]
            if kept:
                chosen.append((qid, kept, p))
        out[name] = _map_summary(chosen, thresholds)
    return out


def count_breakdown(pairs: list[tuple[str, list, list]],
                    thresholds: Sequence[float] = HAPACT_THRESHOLDS) -> dict:
    """Table 11(b): single-moment (1 GT window) vs multiple-moment (2+) queries."""
    return {"single": _map_summary([p for p in pairs if len(p[1]) == 1], thresholds),
            "multiple": _map_summary([p for p in pairs if len(p[1]) >= 2], thresholds)}


def evaluate_temporal(gt: Iterable[dict], pred: Iterable[dict], *, fps: float = 24.0,
                      thresholds: Sequence[float] = HAPACT_THRESHOLDS) -> dict:
    """All HAPACT temporal metrics. Keys of formats.md first, then breakdowns and counts."""
    pred = list(pred)
    pairs, unknown, missing = _pairs(gt, pred)
    out = _core(pairs, thresholds)
    out["by_length"] = length_breakdown(pairs, fps, thresholds)
    out["by_count"] = count_breakdown(pairs, thresholds)
    out["queries_without_prediction"] = missing
    out["unknown_pred_qids"] = unknown
    out["empty_predictions"] = sum(1 for _, _, p in pairs if not p)
    status = [p.get("status") for p in pred if p.get("status")]
    if status:
        out["unparsed"] = status.count("unparsed")
        out["answered_none"] = status.count("none")
    return out
