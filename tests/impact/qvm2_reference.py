"""An independent transcription of QV-M2's standalone evaluation core (github Zhuo-Cao/QV-M2,
standalone_eval/eval.py and utils.py: `compute_average_precision_detection`,
`compute_mr_ap_by_gt`, `compute_mr_all`, `eval_submission`), written for the tests from reading
that code; it shares nothing with components/impact/metrics/temporal.py.

What it keeps of the reference, rule for rule:
- the per-query table is built from the PREDICTED windows (`pred_qid2data`, a defaultdict filled
  window by window): a query whose list is empty never enters it, so it is in no AP, no G-mAP
  group, and in no Recall@k (`compute_mr_all` takes a query into Recall@k only with >= k GT
  windows and >= k predictions);
- AP: the top 10 predictions as listed, sorted by score (stable), greedy matching in decreasing
  IoU with GT locking, VOC-2011 interpolated precision;
- G-mAP groups by GT count, weights each group mean by its share; >=3 is the unweighted mean of
  the group means; Recall@k per threshold is rounded to 2 decimals before the mean (MR-mRk);
- `eval_submission`: the qid sets must match (AssertionError) unless match_number=False, which
  keeps only the shared qids;
- windows are used as written (no clipping).
HAPACT reads mAP@0.3 as the mean AP at 0.3 over the same per-query table and R1@0.3 as Recall@1
at 0.3; its thresholds are 0.1:0.5.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

HAPACT_THDS = (0.1, 0.2, 0.3, 0.4, 0.5)


def _cross_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU matrix (len(a), len(b)) of [start, end] rows, inter clipped at 0."""
    lo = np.maximum(a[:, None, 0], b[None, :, 0])
    hi = np.minimum(a[:, None, 1], b[None, :, 1])
    inter = np.clip(hi - lo, 0, None)
    union = (a[:, 1] - a[:, 0])[:, None] + (b[:, 1] - b[:, 0])[None, :] - inter
    return inter / union


def _interpolated_ap(precision: np.ndarray, recall: np.ndarray) -> float:
    p = np.hstack([[0], precision, [0]])
    r = np.hstack([[0], recall, [1]])
    for i in range(len(p) - 2, -1, -1):
        p[i] = max(p[i], p[i + 1])
    steps = np.where(r[1:] != r[:-1])[0] + 1
    return float(np.sum((r[steps] - r[steps - 1]) * p[steps]))


def detection_ap(gts: list, preds: list, thds=HAPACT_THDS) -> np.ndarray:
    """`compute_average_precision_detection` for one query: gts [[s, e]], preds [[s, e, score]]."""
    ap = np.zeros(len(thds))
    if not preds:
        return ap
    preds = sorted(preds, key=lambda w: -w[2])
    gt_arr = np.array([[g[0], g[1]] for g in gts], dtype=float)
    lock = -np.ones((len(thds), len(gts)))
    tp = np.zeros((len(thds), len(preds)))
    fp = np.zeros((len(thds), len(preds)))
    for i, w in enumerate(preds):
        ious = _cross_iou(np.array([[w[0], w[1]]], dtype=float), gt_arr).reshape(-1)
        order = ious.argsort()[::-1]
        for t, thd in enumerate(thds):
            for j in order:
                if ious[j] < thd:
                    fp[t, i] = 1
                    break
                if lock[t, j] >= 0:
                    continue
                tp[t, i] = 1
                lock[t, j] = i
                break
            if fp[t, i] == 0 and tp[t, i] == 0:
                fp[t, i] = 1
    tpc = np.cumsum(tp, axis=1).astype(float)
    fpc = np.cumsum(fp, axis=1).astype(float)
    rec = tpc / float(len(gts))
    prec = tpc / (tpc + fpc)
    for t in range(len(thds)):
        ap[t] = _interpolated_ap(prec[t], rec[t])
    return ap


def mr_ap_by_gt(submission: list[dict], ground_truth: list[dict], thds=HAPACT_THDS) -> dict:
    """`compute_mr_ap_by_gt` (unrounded, in %), plus HAPACT's mAP@0.3 over the same table."""
    pred_table = defaultdict(list)
    for d in submission:
        for w in d["pred_relevant_windows"][:10]:
            pred_table[d["qid"]].append(list(w))
    gt_table = {d["qid"]: d["relevant_windows"] for d in ground_truth}
    per_query = {qid: detection_ap(gt_table[qid], preds, thds) for qid, preds in pred_table.items()}
    groups = defaultdict(list)
    for qid, aps in per_query.items():
        groups[len(gt_table[qid])].append(aps)
    total = sum(len(v) for v in groups.values())
    out = {"Generalized_mAP": 0.0, ">=3_tgt_mAP": 0.0}
    n3 = 0
    for count, aps in groups.items():
        mean = np.array(aps).mean(axis=0).mean()
        out[f"{count}_tgt_mAP"] = 100 * mean
        out["Generalized_mAP"] += 100 * mean * len(aps) / total
        if count >= 3:
            n3 += 1
            out[">=3_tgt_mAP"] += 100 * mean
    out[">=3_tgt_mAP"] /= n3 if n3 else 1
    at03 = list(thds).index(0.3)
    out["mAP@0.3"] = 100 * float(np.mean([aps[at03] for aps in per_query.values()]))
    out["queries"] = len(per_query)
    return out


def _topk_matches(preds: list, gts: list, thd: float) -> int:
    ious = _cross_iou(np.array(preds, dtype=float), np.array(gts, dtype=float))
    taken: set[int] = set()
    for i in range(ious.shape[0]):
        best, best_j = -1.0, None
        for j in range(ious.shape[1]):
            if j not in taken and ious[i, j] > best:
                best, best_j = ious[i, j], j
        if best >= thd and best_j is not None:
            taken.add(best_j)
    return len(taken)


def mr_all(submission: list[dict], ground_truth: list[dict], thds=HAPACT_THDS) -> dict:
    """`compute_mr_all`: Recall@1/2/3 per threshold (rounded to 2 decimals, in %) and their means
    rounded as MR-mR1..3."""
    top3 = {d["qid"]: [w[:2] for w in d["pred_relevant_windows"][:3]] for d in submission}
    gt_table = {d["qid"]: d["relevant_windows"] for d in ground_truth}
    out = {}
    for k in (1, 2, 3):
        per_thd = []
        for thd in thds:
            matched = denom = 0
            for qid, preds in top3.items():
                gts = gt_table[qid]
                if len(gts) >= k and len(preds) >= k:
                    matched += _topk_matches(preds[:k], gts, thd)
                    denom += min(len(gts), k)
            per_thd.append(float(f"{(matched / denom * 100) if denom else 0.0:.2f}"))
        out[f"R{k}"] = dict(zip(thds, per_thd))
        out[f"mR@{k}"] = round(float(np.mean(per_thd)), 2)
    return out


def eval_submission(submission: list[dict], ground_truth: list[dict], match_number: bool = True,
                    thds=HAPACT_THDS) -> dict:
    """The numbers of HAPACT's row, as QV-M2 gives them (2 decimals)."""
    pred_qids = {d["qid"] for d in submission}
    gt_qids = {d["qid"] for d in ground_truth}
    if match_number:
        assert pred_qids == gt_qids, "qids in ground_truth and submission must match"
    else:
        shared = pred_qids & gt_qids
        submission = [d for d in submission if d["qid"] in shared]
        ground_truth = [d for d in ground_truth if d["qid"] in shared]
    ap = mr_ap_by_gt(submission, ground_truth, thds)
    recall = mr_all(submission, ground_truth, thds)
    row = {"mAP@0.3": round(ap["mAP@0.3"], 2), "R1@0.3": recall["R1"][0.3],
           "G-mAP": round(ap["Generalized_mAP"], 2), "@3+tgt": round(ap[">=3_tgt_mAP"], 2),
           "mR@1": recall["mR@1"], "mR@2": recall["mR@2"], "mR@3": recall["mR@3"],
           "queries": ap["queries"]}
    for n in (1, 2):
        if f"{n}_tgt_mAP" in ap:  # the reference raises a KeyError without such a group
            row[f"@{n}_tgt"] = round(ap[f"{n}_tgt_mAP"], 2)
    return row
