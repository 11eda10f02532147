"""HAPACT temporal metrics exactly as docs/metrics.md ("Impact moments in clips").

Inputs follow the QVHighlights JSONL convention: GT lines {"qid", "relevant_windows": [[s, e]]},
prediction lines {"qid", "pred_relevant_windows": [[s, e, score]]}. The per-query AP is the
ActivityNet/MMAction2 detection AP used by QVHighlights' and QV-M2's standalone_eval.

Which queries count (QV-M2's standalone_eval, `eval_submission` / `compute_mr_ap_by_gt` /
`compute_mr_all`; docs/metrics.md "Which queries are scored"):
- QV-M2 builds its per-query table from the predicted windows, so a query with no prediction (an
  empty window list: the model answered "None", or an unparsed / failed / fallback answer, whose
  windows are never scored) never enters it: it is left out of mAP@0.3, G-mAP, the group columns,
  the breakdowns and R1@0.3; mR@k takes only queries with >= k GT windows and >= k predictions.
  Counted in `left_out` (by reason in `empty_predictions`, `invalid`, `queries_without_prediction`)
  and said by `no_prediction_note`. A query with no prediction LINE is left out the same way here
  (QV-M2's `match_number=False`); `eval impact-temporal` refuses such a file by default, as QV-M2's
  qid check does (components/impact/eval_inputs.py), and takes it with `--partial`.
- `no_prediction=AS_MISS` (the stricter reading, never the default) scores every such query as a
  miss instead: AP 0, a top-1 miss, and in mR@k (where it has >= k GT windows) its min(#GT, k) in
  the denominator; `scored_as_miss` counts them;
- a GT line with no window (`[]`) has nothing to find: its AP is undefined (the reference divides
  by the GT count), so it is left out of every average and counted in `gt_without_windows`;
- windows are scored as written: a start a little before 0 s or an end past the clip is not
  clipped (the reference's IoU on the raw window; eval_inputs.py counts them);
- @3+tgt is 0.0 when no query has 3 or more GT windows, as the reference reports (the count of
  such queries is `@3+tgt_queries`), like mR@k;
- prediction lines whose qid is not in the GT are ignored and counted in `unknown_pred_qids`;
- a line whose status is "unparsed", "error" or "fallback:..." holds no model answer: it is scored
  as an empty prediction whatever windows it lists, and counted (`invalid`, `unparsed`, `errors`,
  `fallbacks`).
All values are percentages 0-100, unrounded. `intervals`: each core score's 95 % bootstrap
interval over queries (docs/metrics.md "Intervals"; `unit_scores`).

`average_precision` and `recall_matches_at_k` are the plain reference implementations (one query
at a time, as the reference code). `evaluate_temporal` goes through `_APTable` / `_QueryAP`, which
give bit-identical values much faster: per query the IoUs are computed once and the AP at every
threshold (0.3 included) in one pass, and the core metrics, the count breakdown and each length bin
(its own GT subset) reuse them; a test compares the two paths on a seeded random case.
"""
from __future__ import annotations

from collections import defaultdict
from math import isfinite
from collections.abc import Iterable, Sequence

import numpy as np

from components.common import stats
from components.common.intervals import iou

MAP_THRESHOLD = 0.3
HAPACT_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5)
MAX_PRED_WINDOWS = 10
LENGTH_BINS = {"short": (1, 2), "middle": (3, 6), "long": (7, None)}  # frames, inclusive
#: what happens to a query with GT windows and no prediction (an empty list, an invalid answer, no
#: line): left out of every score as QV-M2 leaves it out (the default), or scored as a miss
LEAVE_OUT, AS_MISS = "leave out", "miss"
NO_PREDICTION_RULES = (LEAVE_OUT, AS_MISS)


def temporal_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """IoU of two windows by their first two values ([s, e] or [s, e, score]); an invalid one
    (e <= s, non-finite) scores 0, as the plain formula gives for it.
    Shapes: a, b: (2,) or (3,) float [s, e(, score)] -> float"""
    return iou(tuple(a[:2]), tuple(b[:2]))


def _iou_row(pred: Sequence[float], gts: np.ndarray) -> np.ndarray:
    """Shapes: pred: (2+,) float, gts: (n_gt, 2) float -> (n_gt,) float IoU"""
    left = np.maximum(pred[0], gts[:, 0])
    right = np.minimum(pred[1], gts[:, 1])
    inter = np.clip(right - left, 0, None)
    union = (pred[1] - pred[0]) + (gts[:, 1] - gts[:, 0]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def interpolated_precision_recall(precision: np.ndarray, recall: np.ndarray) -> float:
    """ActivityNet: prepend (0, 0), append (recall 1, precision 0), make precision non-increasing
    from the right, sum (r[i+1] - r[i]) * p[i+1] where recall changes.
    Shapes: precision, recall: (n_pred,) float -> float"""
    mprecision = np.hstack([[0.0], precision, [0.0]])
    mrecall = np.hstack([[0.0], recall, [1.0]])
    for i in range(len(mprecision) - 1)[::-1]:
        mprecision[i] = max(mprecision[i], mprecision[i + 1])
    idx = np.where(mrecall[1:] != mrecall[:-1])[0] + 1
    return float(np.sum((mrecall[idx] - mrecall[idx - 1]) * mprecision[idx]))


def average_precision(gt_windows: Sequence[Sequence[float]], pred_windows: Sequence[Sequence[float]],
                      thresholds: Sequence[float]) -> np.ndarray:
    """Per-query detection AP at each threshold (fractions 0-1). `pred_windows` [s, e, score].
    Shapes: gt_windows: (n_gt, 2), pred_windows: (n_pred, 3) [s, e, score], thresholds: (n_thr,) -> (n_thr,) float"""
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
    """mR@k matching: the first k predictions as listed (the reference code, QV-M2, does not sort
    them by score first), each to the unmatched GT of highest IoU, a match when that IoU >=
    threshold.
    Shapes: gt_windows: (n_gt, 2), pred_windows: (n_pred, 2+) -> int matches (<= k)"""
    preds = list(pred_windows)[:k]
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


def _sum_like_numpy(values: Sequence[float]) -> float:
    """np.sum of a float64 vector, bit for bit: numpy adds fewer than 8 values left to right
    from 0.0 and only switches to pairwise (8-accumulator) summation from 8 values on.
    Shapes: values: (n,) float -> float"""
    if len(values) >= 8:
        return float(np.sum(np.asarray(values, dtype=float)))
    total = 0.0
    for value in values:
        total += value
    return total


def _mean_like_numpy(values: Sequence[float]) -> float:
    """float(np.mean(values)), bit for bit (np.mean is np.sum / n).
    Shapes: values: (n,) float -> float"""
    if not values or len(values) >= 8:
        return float(np.mean(np.asarray(values, dtype=float)))
    return _sum_like_numpy(values) / len(values)


def _interpolated_ap(hit_ranks: Sequence[int], num_gt: int) -> float:
    """`interpolated_precision_recall` for predictions whose TPs sit at `hit_ranks` (1-based),
    with the same float operations. Recall changes only at a TP (from (t-1)/#GT to t/#GT) and,
    unless every GT window was found, at the appended recall 1 (where precision is 0). The
    envelope at a TP is the highest precision t/rank over this and later TPs: between TPs
    precision only falls, and the appended precision is 0.
    Shapes: hit_ranks: (n_hits,) int (1-based) -> float"""
    terms = [0.0] * len(hit_ranks)
    envelope = 0.0
    for t in range(len(hit_ranks), 0, -1):
        precision = t / hit_ranks[t - 1]
        if precision > envelope:
            envelope = precision
        terms[t - 1] = (t / num_gt - (t - 1) / num_gt) * envelope
    if len(hit_ranks) / num_gt != 1.0:
        terms.append((1.0 - len(hit_ranks) / num_gt) * 0.0)
    return _sum_like_numpy(terms)


def _visit_order(row: list[float], floor: float) -> list[int]:
    """`np.asarray(row).argsort()[::-1]`, as far as the greedy matching can tell: GT indices by
    decreasing IoU. Values below `floor` (the lowest threshold) only ever end a visit, so their
    order is irrelevant; if the others are distinct the order is unique and Python sorts it,
    otherwise (ties) numpy decides, as in the reference.
    Shapes: row: (n_gt,) float IoU -> (n_gt,) int GT indices"""
    if len(row) == 1:
        return [0]
    considered = [v for v in row if v >= floor]
    if len(set(considered)) == len(considered):
        return sorted(range(len(row)), key=row.__getitem__, reverse=True)
    return np.asarray(row, dtype=float).argsort()[::-1].tolist()


def _iou_rows(preds: Sequence[Sequence[float]],
              gt_windows: Sequence[Sequence[float]]) -> list[list[float]] | None:
    """`_iou_row` for every prediction, in plain floats: for finite inputs these are the same IEEE
    operations (a zero's sign aside, which no comparison sees). None when an input is not finite
    or an IoU is NaN: those rows need numpy's NaN handling, so the caller uses the reference.
    Shapes: preds: (n_pred, 2+), gt_windows: (n_gt, 2) -> (n_pred, n_gt) float, or None"""
    gts = [(float(g[0]), float(g[1])) for g in gt_windows]
    rows = []
    for pred in preds:
        p0, p1 = float(pred[0]), float(pred[1])
        width = pred[1] - pred[0]
        if not (isfinite(p0) and isfinite(p1)):
            return None
        row = []
        for g0, g1 in gts:
            inter = (p1 if p1 < g1 else g1) - (p0 if p0 > g0 else g0)
            if not inter > 0.0:
                inter = 0.0
            union = width + (g1 - g0) - inter
            row.append(inter / union if union > 0 else 0.0)
        rows.append(row)
    if not all(isfinite(g0) and isfinite(g1) for g0, g1 in gts) or any(v != v for row in rows for v in row):
        return None
    return rows


class _QueryAP:
    """One query's AP at several thresholds for any subset of its GT windows, equal to
    `average_precision(subset, pred_windows, thresholds)` value for value. The top-10 predictions
    are sorted and their IoU with every GT window computed once; results are kept per subset.
    `ap_cache` maps (TP ranks, #GT) to AP and may be shared between queries."""

    def __init__(self, gt_windows: Sequence[Sequence[float]], pred_windows: Sequence[Sequence[float]],
                 thresholds: Sequence[float], ap_cache: dict | None = None):
        """Shapes: gt_windows: (n_gt, 2), pred_windows: (n_pred, 3) [s, e, score], thresholds: (n_thr,)"""
        self.gt_windows, self.pred_windows = gt_windows, pred_windows
        self.thresholds = list(thresholds)
        self._ap_cache = {} if ap_cache is None else ap_cache
        self._floor = min(self.thresholds) if self.thresholds and all(
            t == t for t in self.thresholds) else float("-inf")
        self._memo: dict[tuple[int, ...], list[float]] = {}
        preds = list(pred_windows)[:MAX_PRED_WINDOWS]
        self._rows: list[list[float]] | None = []
        if preds and gt_windows:
            preds = sorted(preds, key=lambda w: -w[2])  # stable, as average_precision
            self._rows = _iou_rows(preds, gt_windows)

    def ap(self, cols: Sequence[int] | None = None) -> list[float]:
        """AP per threshold (fractions) against the GT windows at indices `cols` (all if None).
        Shapes: cols: (k,) int GT indices or None -> (n_thr,) float"""
        key = tuple(range(len(self.gt_windows))) if cols is None else tuple(cols)
        if key not in self._memo:
            self._memo[key] = self._compute(key)
        return self._memo[key]

    def _compute(self, cols: tuple[int, ...]) -> list[float]:
        """Shapes: cols: (k,) int GT indices -> (n_thr,) float"""
        if self._rows is None:  # non-finite input: the reference's numpy semantics
            subset = [self.gt_windows[j] for j in cols]
            return [float(v) for v in average_precision(subset, self.pred_windows, self.thresholds)]
        if not self._rows or not cols:
            return [0.0] * len(self.thresholds)
        if len(cols) == len(self.gt_windows):
            rows = self._rows
        else:
            rows = [[row[j] for j in cols] for row in self._rows]
        orders = [_visit_order(row, self._floor) for row in rows]
        num_gt = len(cols)
        aps = []
        for thr in self.thresholds:
            locked = [False] * num_gt
            hit_ranks = []
            for rank, (row, order) in enumerate(zip(rows, orders), 1):
                for j in order:  # the reference's greedy matching
                    if row[j] < thr:
                        break
                    if locked[j]:
                        continue
                    locked[j] = True
                    hit_ranks.append(rank)
                    break
            key = (tuple(hit_ranks), num_gt)
            ap = self._ap_cache.get(key)
            if ap is None:
                ap = self._ap_cache[key] = _interpolated_ap(hit_ranks, num_gt)
            aps.append(ap)
        return aps


class _APTable:
    """Per-query `_QueryAP`s for one evaluation, scoring `thresholds` and 0.3 in one pass."""

    def __init__(self, thresholds: Sequence[float]):
        """Shapes: thresholds: (n_thr,) float"""
        self.thresholds = list(thresholds)
        scored = list(self.thresholds)
        if MAP_THRESHOLD not in scored:
            scored.append(MAP_THRESHOLD)
        self._scored = scored
        self._at_03 = scored.index(MAP_THRESHOLD)
        self._n = len(self.thresholds)
        self._queries: dict[int, _QueryAP] = {}
        self._ap_cache: dict = {}

    def _query(self, gt_windows: Sequence, pred_windows: Sequence) -> _QueryAP:
        # keyed by the prediction list (one per query; the entry keeps it alive, so its id stays
        # unique): breakdowns pass the same query's GT list with the indices they keep
        """Shapes: gt_windows: (n_gt, 2), pred_windows: (n_pred, 3) -> the query's _QueryAP"""
        query = self._queries.get(id(pred_windows))
        if query is None or query.gt_windows is not gt_windows:
            query = _QueryAP(gt_windows, pred_windows, self._scored, self._ap_cache)
            self._queries[id(pred_windows)] = query
        return query

    def ap_03(self, gt_windows: Sequence, pred_windows: Sequence,
              cols: Sequence[int] | None = None) -> float:
        """Shapes: gt_windows: (n_gt, 2), pred_windows: (n_pred, 3), cols: (k,) int or None -> float"""
        return self._query(gt_windows, pred_windows).ap(cols)[self._at_03]

    def mean_ap(self, gt_windows: Sequence, pred_windows: Sequence,
                cols: Sequence[int] | None = None) -> float:
        """The per-query AP averaged over `thresholds` (float(np.mean(...)) of the reference).
        Shapes: gt_windows: (n_gt, 2), pred_windows: (n_pred, 3), cols: (k,) int or None -> float"""
        return _mean_like_numpy(self._query(gt_windows, pred_windows).ap(cols)[:self._n])


def _matches_in_rank_order(iou_rows: Sequence[Sequence[float]], threshold: float) -> int:
    """`recall_matches_at_k` given the IoU rows of the top-k predictions (rank order).
    Shapes: iou_rows: (k, n_gt) float -> int matches"""
    unmatched = list(range(len(iou_rows[0]))) if iou_rows else []
    matches = 0
    for row in iou_rows:
        if not unmatched:
            break
        best = max(unmatched, key=row.__getitem__)
        if row[best] >= threshold:
            unmatched.remove(best)
            matches += 1
    return matches


def _pct(value: float | None) -> float | None:
    return None if value is None else float(value) * 100.0


#: prediction statuses that are no model answer: scored as an empty prediction, and counted
INVALID_STATUSES = ("unparsed", "error")


def is_invalid(record: dict) -> bool:
    """A prediction line that holds no parsed model answer (unparsed, a failed call, a fallback):
    never scored as a prediction (docs/metrics.md)."""
    status = str(record.get("status") or "ok")
    return status in INVALID_STATUSES or status.startswith("fallback")


def _pairs(gt: Iterable[dict], pred: Iterable[dict]) -> tuple[list[tuple[str, list, list]], int, int]:
    """(qid, GT windows, the windows scored) for every GT query, in GT order (a missing line or an
    invalid answer: no window), the number of prediction lines for unknown qids, and of GT qids
    without a line.
    Shapes: gt: (n_gt_lines,) records, pred: (n_pred_lines,) records -> (n_queries,) (qid, (n_gt, 2), (n_pred, 3))"""
    gt_by_qid = {str(g["qid"]): [list(w[:2]) for w in g["relevant_windows"]] for g in gt}
    pred_by_qid = {str(p["qid"]): [] if is_invalid(p) else [list(w[:3]) for w in p["pred_relevant_windows"]]
                   for p in pred}
    pairs = [(qid, gt_by_qid[qid], pred_by_qid.get(qid, [])) for qid in gt_by_qid]
    unknown = sum(1 for qid in pred_by_qid if qid not in gt_by_qid)
    missing = sum(1 for qid in gt_by_qid if qid not in pred_by_qid)
    return pairs, unknown, missing


def _check_rule(no_prediction: str) -> None:
    if no_prediction not in NO_PREDICTION_RULES:
        raise ValueError(f"no_prediction must be one of {NO_PREDICTION_RULES}, got {no_prediction!r}")


def _scored(pairs: list[tuple[str, list, list]], no_prediction: str) -> list[tuple[str, list, list]]:
    """The pairs every score averages over: GT windows to find, and (QV-M2's rule, LEAVE_OUT) a
    prediction listed; AS_MISS keeps the queries without one (scored as misses).
    Shapes: pairs: (n_queries,) (qid, (n_gt, 2), (n_pred, 3)) -> (n_scored,) of the same"""
    _check_rule(no_prediction)
    return [p for p in pairs if p[1] and (p[2] or no_prediction == AS_MISS)]


def _in_mr(gt: list, pred: list, k: int) -> bool:
    """Whether a query counts in mR@k: >= k GT windows and >= k predictions listed (QV-M2's
    `compute_mr_all`), or no prediction at all: only present under AS_MISS, where such a query is
    a miss in mR@k as in R1@0.3 (the LEAVE_OUT pairs hold none).
    Shapes: gt: (n_gt, 2), pred: (n_pred, 3) -> bool"""
    return len(gt) >= k and (len(pred) >= k or not pred)


def _core(pairs: list[tuple[str, list, list]], thresholds: Sequence[float],
          table: _APTable | None = None) -> dict:
    """mAP@0.3, R1@0.3, G-mAP and its groups, mR@1..3 over already-paired queries.
    Shapes: pairs: (n_queries,) (qid, (n_gt, 2), (n_pred, 3)), thresholds: (n_thr,) -> dict of floats"""
    table = table or _APTable(thresholds)
    pairs = [p for p in pairs if p[1]]  # a GT line without windows cannot be scored
    out: dict = {"num_queries": len(pairs)}
    if not pairs:
        for key in ("mAP@0.3", "R1@0.3", "G-mAP", "@1_tgt", "@2_tgt", "@3+tgt", "mR@1", "mR@2", "mR@3"):
            out[key] = None
        return out
    ap_03 = [table.ap_03(g, p) for _, g, p in pairs]
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
        groups[len(g)].append(table.mean_ap(g, p))
    n_all = sum(len(v) for v in groups.values())
    out["G-mAP"] = _pct(sum(np.mean(v) * len(v) / n_all for v in groups.values()))
    out["@1_tgt"] = _pct(np.mean(groups[1])) if groups.get(1) else None
    out["@2_tgt"] = _pct(np.mean(groups[2])) if groups.get(2) else None
    big = [float(np.mean(v)) for count, v in groups.items() if count >= 3 and v]
    # the unweighted mean of group means; 0.0 without such a group, as the reference reports
    out["@3+tgt"] = _pct(np.mean(big)) if big else 0.0
    out["@3+tgt_queries"] = sum(len(v) for count, v in groups.items() if count >= 3)
    out["group_sizes"] = {str(count): len(v) for count, v in sorted(groups.items())}
    # mR@k (recall_matches_at_k): IoUs of the first 3 predictions AS LISTED (the reference, QV-M2,
    # takes them in the file's order, not sorted by score), computed once
    top_ious = {}
    for qid, g, p in pairs:
        top_ious[qid] = [[temporal_iou(pred, w) for w in g] for pred in p[:3]]
    for k in (1, 2, 3):
        # as the reference: 0 where no query has >= k GT (and predicted) windows; the count shows it
        eligible = [(qid, g, p) for qid, g, p in pairs if _in_mr(g, p, k)]
        denom = sum(min(len(g), k) for _, g, _ in eligible)
        per_thr = []
        for thr in thresholds:
            matched = sum(_matches_in_rank_order(top_ious[qid][:k], thr) for qid, _, _ in eligible)
            # QV-M2 (`compute_mr_all`) rounds each threshold's Recall@k, in %, to 2 decimals
            # before the mean (MR-mRk): the same here, so the printed mR@k is the reference's
            per_thr.append(float(f"{100 * matched / denom:.2f}") if denom else 0.0)
        out[f"mR@{k}"] = float(np.mean(per_thr))
        out[f"mR@{k}_queries"] = len(eligible)
    return out


def unit_scores(pairs: list[tuple[str, list, list]], thresholds: Sequence[float] = HAPACT_THRESHOLDS,
                table: _APTable | None = None) -> list[stats.SumScore]:
    """The core scores of `_core` as sums over queries (the queries with GT windows, in `pairs`'
    order): mAP@0.3, R1@0.3, G-mAP (= the mean over queries of the threshold-averaged AP) and
    @1/@2_tgt are ratios; @3+tgt is the unweighted mean of the group means (recomputed on each
    resample, 0 when a resample holds no such group, as the metric); mR@k = the sum over eligible
    queries of the threshold-averaged matches over the sum of min(#GT, k) (0 when none).
    Shapes: pairs: (n_queries,) (qid, (n_gt, 2), (n_pred, 3)) -> (n_scores,) SumScore, each over (n_queries,)"""
    table = table or _APTable(thresholds)
    pairs = [p for p in pairs if p[1]]
    ap_03 = [table.ap_03(g, p) for _, g, p in pairs]
    mean_ap = [table.mean_ap(g, p) for _, g, p in pairs]
    hits = [float(bool(p) and max(temporal_iou(p[0], w) for w in g) >= MAP_THRESHOLD) for _, g, p in pairs]
    counts = [len(g) for _, g, _ in pairs]

    def pct(name, num, den=None, empty=None):
        return stats.ratio(name, num, den, unit="queries", scale=100.0, empty=empty)

    scores = [pct("mAP@0.3", ap_03), pct("R1@0.3", hits), pct("G-mAP", mean_ap)]
    for n in (1, 2):
        member = [float(c == n) for c in counts]
        scores.append(pct(f"@{n}_tgt", [v * m for v, m in zip(mean_ap, member)], member))
    scores.append(stats.group_mean("@3+tgt", mean_ap, [c if c >= 3 else None for c in counts],
                                   unit="queries", scale=100.0, empty=0.0))
    for k in (1, 2, 3):
        num, den = [], []
        for _, g, p in pairs:
            eligible = _in_mr(g, p, k)
            rows = [[temporal_iou(pred, w) for w in g] for pred in p[:k]] if eligible else []
            num.append(float(np.mean([_matches_in_rank_order(rows, t) for t in thresholds]))
                       if eligible and thresholds else 0.0)
            den.append(float(min(len(g), k)) if eligible else 0.0)
        scores.append(pct(f"mR@{k}", num, den, empty=0.0))
    return scores


def _map_summary(chosen: list[tuple[list, list, list[int] | None]], table: _APTable) -> dict:
    """mAP@0.3 and mAP@0.1:0.5 over (GT windows, predictions, indices of the GT windows scored).
    Shapes: chosen: (n_queries,) ((n_gt, 2), (n_pred, 3), (k,) int or None) -> dict of floats"""
    chosen = [c for c in chosen if c[0] and (c[2] is None or c[2])]
    if not chosen:
        return {"mAP@0.3": None, "mAP@0.1:0.5": None, "num_queries": 0}
    return {"mAP@0.3": _pct(np.mean([table.ap_03(g, p, cols) for g, p, cols in chosen])),
            "mAP@0.1:0.5": _pct(np.mean([table.mean_ap(g, p, cols) for g, p, cols in chosen])),
            "num_queries": len(chosen)}


def length_breakdown(pairs: list[tuple[str, list, list]], fps: float,
                     thresholds: Sequence[float] = HAPACT_THRESHOLDS, table: _APTable | None = None) -> dict:
    """Table 11(a). As QVHighlights' length ranges: keep only the GT windows whose length (frames)
    is in the bin; queries left without windows drop out of that bin; predictions are unchanged.
    Shapes: pairs: (n_queries,) (qid, (n_gt, 2), (n_pred, 3)) -> dict per bin"""
    table = table or _APTable(thresholds)
    out = {}
    for name, (lo, hi) in LENGTH_BINS.items():
        chosen = []
        for _qid, g, p in pairs:
            kept = [j for j, w in enumerate(g) if round((w[1] - w[0]) * fps) >= lo
                    and (hi is None or round((w[1] - w[0]) * fps) <= hi)]
            if kept:
                chosen.append((g, p, kept))
        out[name] = _map_summary(chosen, table)
    return out


def count_breakdown(pairs: list[tuple[str, list, list]],
                    thresholds: Sequence[float] = HAPACT_THRESHOLDS, table: _APTable | None = None) -> dict:
    """Table 11(b): single-moment (1 GT window) vs multiple-moment (2+) queries.
    Shapes: pairs: (n_queries,) (qid, (n_gt, 2), (n_pred, 3)) -> dict per group"""
    table = table or _APTable(thresholds)
    return {"single": _map_summary([(g, p, None) for _, g, p in pairs if len(g) == 1], table),
            "multiple": _map_summary([(g, p, None) for _, g, p in pairs if len(g) >= 2], table)}


def evaluate_temporal(gt: Iterable[dict], pred: Iterable[dict], *, fps: float = 24.0,
                      thresholds: Sequence[float] = HAPACT_THRESHOLDS, no_prediction: str = LEAVE_OUT) -> dict:
    """All HAPACT temporal metrics. Keys of docs/formats.md first, then breakdowns and counts.
    `no_prediction`: LEAVE_OUT (QV-M2, the default) or AS_MISS (module docstring).
    Shapes: gt: (n_gt_lines,) records, pred: (n_pred_lines,) records -> dict of floats"""
    pred = list(pred)
    all_pairs, unknown, missing = _pairs(gt, pred)
    pairs = _scored(all_pairs, no_prediction)
    table = _APTable(thresholds)  # per-query APs shared by the core metrics and the breakdowns
    out = _core(pairs, thresholds, table)
    out["by_length"] = length_breakdown(pairs, fps, thresholds, table)
    out["by_count"] = count_breakdown(pairs, thresholds, table)
    out["intervals"] = {k: e.to_json() for k, e in stats.estimates(unit_scores(pairs, thresholds, table)).items()}
    without = [(qid, g, p) for qid, g, p in all_pairs if g and not p]
    out["no_prediction_rule"] = no_prediction
    out["left_out"] = len(without) if no_prediction == LEAVE_OUT else 0
    out["scored_as_miss"] = len(without) if no_prediction == AS_MISS else 0
    out["queries_with_windows"] = sum(1 for _, g, _ in all_pairs if g)
    out["queries_without_prediction"] = missing
    out["gt_without_windows"] = sum(1 for _, g, _ in all_pairs if not g)
    out["unknown_pred_qids"] = unknown
    answered = {str(p.get("qid")) for p in pred}
    out["empty_predictions"] = sum(1 for qid, _, _ in without if qid in answered)
    gt_qids = {qid for qid, _, _ in all_pairs}
    scored = [p for p in pred if str(p.get("qid")) in gt_qids]
    status = [str(p.get("status") or "ok") for p in scored]
    # unparsed / failed / fallback lines are scored as empty predictions (left out, or misses)
    out["invalid"] = sum(1 for p in scored if is_invalid(p))
    invalid_qids = {str(p.get("qid")) for p in scored if is_invalid(p)}
    out["no_prediction_invalid"] = sum(1 for qid, _, _ in without if qid in invalid_qids)
    out["unparsed"] = status.count("unparsed")
    out["errors"] = status.count("error")
    out["fallbacks"] = sum(1 for st in status if st.startswith("fallback"))
    out["answered_none"] = status.count("none")
    return out


def no_prediction_note(result: dict) -> str | None:
    """One sentence on the queries with no prediction and what the score did with them, e.g. "2
    queries with no prediction (2 empty lists), left out as the reference (QV-M2) does ..."."""
    count = result.get("left_out") or result.get("scored_as_miss") or 0
    if not count:
        return None
    missing = result.get("queries_without_prediction") or 0
    invalid = result.get("no_prediction_invalid", 0)
    empty = count - missing - invalid
    why = [f"{n} {what}" for n, what in ((empty, "empty window list(s), e.g. an answer \"None\""),
                                         (invalid, "unparsed, failed or fallback answer(s)"),
                                         (missing, "without a prediction line")) if n]
    head = f"{count} quer{'y' if count == 1 else 'ies'} with no prediction ({'; '.join(why)})"
    if result.get("no_prediction_rule") == AS_MISS:
        return (f"{head}, scored as misses (AP 0, top-1 miss, in mR@k): the stricter reading "
                "asked for; QV-M2 leaves them out, and so does the default.")
    return (f"{head}, left out as the reference (QV-M2) does: not in mAP, G-mAP, the group "
            "columns, R1 or mR@k; the scores are over "
            f"{result.get('num_queries', 0)} of {result.get('queries_with_windows', 0)} queries.")


def scored_pairs(gt: Iterable[dict], pred: Iterable[dict], *,
                 no_prediction: str = LEAVE_OUT) -> list[tuple[str, list, list]]:
    """(qid, GT windows, the windows scored) for every query `evaluate_temporal` scores under the
    `no_prediction` rule, in GT order (AS_MISS: every GT query with windows, a missing line or an
    invalid answer scored as no window, so two runs on one GT line up unit for unit and
    `unit_scores` of each is a paired comparison).
    Shapes: gt, pred: (n_lines,) records -> (n_scored,) (qid, (n_gt, 2), (n_pred, 3))"""
    return _scored(_pairs(gt, list(pred))[0], no_prediction)


def disagreements(gt: Sequence[dict], pred_a: Sequence[dict], pred_b: Sequence[dict],
                  thresholds: Sequence[float] = HAPACT_THRESHOLDS) -> list[dict]:
    """Queries where the runs differ in AP@0.3 or in whether the top-1 window hits (IoU >= 0.3),
    the largest AP gap first (ties in GT order).
    Shapes: gt, pred_a, pred_b: (n_lines,) records -> (n_differing,) dicts"""
    table = _APTable(thresholds)
    rows = []
    for (qid, g, pa), (_, _, pb) in zip(scored_pairs(gt, pred_a, no_prediction=AS_MISS),
                                        scored_pairs(gt, pred_b, no_prediction=AS_MISS)):
        ap_a, ap_b = table.ap_03(g, pa), table.ap_03(g, pb)
        hit_a = bool(pa) and max(temporal_iou(pa[0], w) for w in g) >= MAP_THRESHOLD
        hit_b = bool(pb) and max(temporal_iou(pb[0], w) for w in g) >= MAP_THRESHOLD
        if abs(ap_a - ap_b) <= 1e-12 and hit_a == hit_b:
            continue
        rows.append({"qid": qid, "gt_windows": len(g), "ap_a": round(100 * ap_a, 2),
                     "ap_b": round(100 * ap_b, 2), "top1_hit_a": hit_a, "top1_hit_b": hit_b,
                     "top1_a": pa[0][:2] if pa else None, "top1_b": pb[0][:2] if pb else None})
    rows.sort(key=lambda r: -abs(r["ap_a"] - r["ap_b"]))
    return rows
