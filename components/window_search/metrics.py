"""Grounding metrics (docs/metrics.md; paper §2 and §5), pure functions.

IoU of [s,e] and [s',e'] = |intersection| / |union| (durations); missing or invalid predictions
score 0, and so do fallbacks and unparsed items (only a model's parsed answer, or the text-only
baseline's, is scored; `score_fallbacks` scores fallbacks for a diagnostic). mIoU and R@1@θ average over ALL queries of the annotation file; PairSuccess@θ is the share
of ALL pairs whose two queries both reach IoU >= θ. Percentages 0-100, unrounded.

Intervals (docs/metrics.md "Intervals"): mIoU and R@1@θ are resampled over queries, PairSuccess@θ
over pairs (`unit_scores`); `evaluate` carries them under "intervals".

Diagnostics (paper Table 2), when predictions carry the `window` handed to the localizer:
- retrieval_miss: share of queries with a window whose window does not overlap the GT at all;
- oracle_localizer_mIoU: mean over those queries of the IoU a localizer would reach by returning
  exactly window ∩ GT, i.e. |W ∩ G| / |G| (the "†" upper bound of rows 3 and 8).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from components.common import stats
from components.common.intervals import iou, overlap, valid_interval
from components.common.tables import format_table
from components.window_search.data import GroundingAnnotations, Prediction
from components.window_search.types import UNPARSED, is_scored_source

THRESHOLDS = (0.3, 0.5, 0.7)
METRIC_KEYS = ("mIoU", "R@1@0.3", "R@1@0.5", "R@1@0.7", "PairSuccess@0.3", "PairSuccess@0.5",
               "PairSuccess@0.7", "num_queries", "num_pairs")


#: IoU of a prediction and the ground truth (an invalid or missing interval scores 0)
temporal_iou = iou


def window_bound_iou(window: Sequence[float] | None, gt: Sequence[float]) -> float:
    """IoU if the localizer returned window ∩ GT: |W ∩ G| / |G| (0 when they do not overlap).
    Shapes: window: (2,) float or None, gt: (2,) float -> float"""
    g = valid_interval(gt)
    if g is None:
        return 0.0
    return overlap(window, g) / (g[1] - g[0])


def grounding_metrics(pairs: Iterable[tuple[str, Sequence[tuple[str, Sequence[float]]]]],
                      predictions: Mapping[str, Sequence[float] | None]) -> dict:
    """Core metrics. `pairs`: (pair_id, [(qid, gt interval), (qid, gt interval)]);
    `predictions`: qid -> interval (None / absent = failure).
    Shapes: pairs: (n_pairs,) (pair_id, 2 x (qid, (2,) float)), predictions: qid -> (2,) float or None -> dict of floats"""
    ious: list[float] = []
    pair_hits = {t: 0 for t in THRESHOLDS}
    n_pairs = 0
    for _pid, queries in pairs:
        n_pairs += 1
        pair_ious = []
        for qid, gt in queries:
            score = temporal_iou(predictions.get(qid), gt)
            ious.append(score)
            pair_ious.append(score)
        for t in THRESHOLDS:
            if pair_ious and all(i >= t for i in pair_ious):
                pair_hits[t] += 1
    n = len(ious)
    out: dict = {"mIoU": 100.0 * sum(ious) / n if n else 0.0}
    for t in THRESHOLDS:
        out[f"R@1@{t}"] = 100.0 * sum(1 for i in ious if i >= t) / n if n else 0.0
    for t in THRESHOLDS:
        out[f"PairSuccess@{t}"] = 100.0 * pair_hits[t] / n_pairs if n_pairs else 0.0
    out["num_queries"] = n
    out["num_pairs"] = n_pairs
    return out


def scored_interval(pred: Prediction | None, *, score_fallbacks: bool = False
                    ) -> Sequence[float] | None:
    """The interval a prediction is scored with: a model answer's interval (types.MODEL_SOURCES,
    or a line without a source); a fallback or an unparsed item scores as invalid (IoU 0) unless
    `score_fallbacks` (a diagnostic) asks for its fallback interval.
    Shapes: -> (2,) float [s, e] or None"""
    if pred is None:
        return None
    if is_scored_source(pred.source):
        return pred.interval
    if score_fallbacks and str(pred.source or "").startswith("fallback:"):
        return pred.fallback_interval or pred.interval
    return None


def source_counts(annotations: GroundingAnnotations, predictions: Mapping[str, Prediction]) -> dict:
    """How the annotation file's queries were answered: model answers with a valid interval,
    fallbacks, unparsed (no valid interval: unparsed, or invalid such as numeric strings),
    other sources (unknown labels, not scored), missing lines; and the count per source.
    Shapes: predictions: qid -> Prediction (n_queries) -> dict of counts"""
    counts = {"model": 0, "fallback": 0, "unparsed": 0, "other": 0, "missing": 0}
    by_source: dict[str, int] = {}
    for q in annotations.queries:
        pred = predictions.get(q.qid)
        if pred is None:
            counts["missing"] += 1
            continue
        label = pred.source or "(no source)"
        by_source[label] = by_source.get(label, 0) + 1
        if str(pred.source or "").startswith("fallback:"):
            counts["fallback"] += 1
        elif is_scored_source(pred.source) and pred.interval is not None:
            counts["model"] += 1
        elif is_scored_source(pred.source) or pred.source == UNPARSED:
            counts["unparsed"] += 1
        else:
            counts["other"] += 1
    counts["by_source"] = dict(sorted(by_source.items()))
    return counts


def evaluate(annotations: GroundingAnnotations, predictions: Mapping[str, Prediction], *,
             score_fallbacks: bool = False) -> dict:
    """docs/formats.md keys, "counts" (source_counts) and "scored_fallbacks" (whether fallbacks were
    scored, a diagnostic); plus "diagnostics" when any prediction carries a window.
    Shapes: predictions: qid -> Prediction -> dict of floats"""
    pairs = [(p.pair_id, [(p.target.qid, p.target.interval), (p.confusable.qid, p.confusable.interval)])
             for p in annotations.pairs]
    intervals = {qid: scored_interval(pred, score_fallbacks=score_fallbacks)
                 for qid, pred in predictions.items()}
    out = grounding_metrics(pairs, intervals)
    out["counts"] = source_counts(annotations, predictions)
    out["scored_fallbacks"] = score_fallbacks
    out["intervals"] = score_intervals(unit_scores(annotations, predictions, score_fallbacks=score_fallbacks))
    diag = window_diagnostics(annotations, predictions)
    if diag is not None:
        out["diagnostics"] = diag
    return out


def query_ious(annotations: GroundingAnnotations, predictions: Mapping[str, Prediction], *,
               score_fallbacks: bool = False) -> list[float]:
    """The IoU of every query of the annotation file, in its order (a missing prediction: 0).
    Shapes: predictions: qid -> Prediction -> (n_queries,) float"""
    return [temporal_iou(scored_interval(predictions.get(q.qid), score_fallbacks=score_fallbacks),
                         q.interval) for q in annotations.queries]


def unit_scores(annotations: GroundingAnnotations, predictions: Mapping[str, Prediction], *,
                score_fallbacks: bool = False) -> dict[str, list[stats.SumScore]]:
    """The scores as sums over their units: "queries" (mIoU, R@1@θ) and "pairs" (PairSuccess@θ,
    both queries of a pair at IoU >= θ), in the annotation file's order, so two runs on the same
    file line up unit for unit.
    Shapes: -> {'queries': (n_scores,) SumScore over (n_queries,), 'pairs': SumScore over (n_pairs,)}"""
    ious = query_ious(annotations, predictions, score_fallbacks=score_fallbacks)
    queries = [stats.ratio("mIoU", ious, unit="queries", scale=100.0)]
    queries += [stats.ratio(f"R@1@{t}", [float(i >= t) for i in ious], unit="queries", scale=100.0)
                for t in THRESHOLDS]
    by_pair = [ious[2 * k: 2 * k + 2] for k in range(len(annotations.pairs))]
    pairs = [stats.ratio(f"PairSuccess@{t}", [float(bool(p) and all(i >= t for i in p)) for p in by_pair],
                         unit="pairs", scale=100.0) for t in THRESHOLDS]
    return {"queries": queries, "pairs": pairs}


def score_intervals(groups: Mapping[str, Sequence[stats.SumScore]]) -> dict[str, dict]:
    """Every score's 95 % bootstrap interval over its own unit (stats defaults: fixed seed).
    Shapes: groups: name -> (n_scores,) SumScore -> score -> interval dict"""
    out: dict[str, dict] = {}
    for scores in groups.values():
        out.update({k: e.to_json() for k, e in stats.estimates(scores).items()})
    return out


def disagreements(annotations: GroundingAnnotations, a: Mapping[str, Prediction],
                  b: Mapping[str, Prediction], *, score_fallbacks: bool = False) -> list[dict]:
    """Queries on which the two runs land on different sides of at least one threshold θ, the
    largest IoU gap first (ties in the annotation file's order).
    Shapes: a, b: qid -> Prediction -> (n_differing,) dicts"""
    ious_a = query_ious(annotations, a, score_fallbacks=score_fallbacks)
    ious_b = query_ious(annotations, b, score_fallbacks=score_fallbacks)
    rows = []
    for q, ia, ib in zip(annotations.queries, ious_a, ious_b):
        if all((ia >= t) == (ib >= t) for t in THRESHOLDS):
            continue
        pa, pb = a.get(q.qid), b.get(q.qid)
        rows.append({"qid": q.qid, "pair_id": q.pair_id, "gt": list(q.interval),
                     "a": _shown(pa), "b": _shown(pb), "iou_a": round(100 * ia, 2),
                     "iou_b": round(100 * ib, 2), "source_a": _source(pa), "source_b": _source(pb)})
    rows.sort(key=lambda r: -abs(r["iou_a"] - r["iou_b"]))
    return rows


def _shown(pred: Prediction | None) -> list[float] | None:
    """Shapes: -> (2,) float [s, e] or None"""
    return None if pred is None or pred.interval is None else list(pred.interval)


def _source(pred: Prediction | None) -> str:
    return "missing" if pred is None else str(pred.source or "(no source)")


def window_diagnostics(annotations: GroundingAnnotations,
                       predictions: Mapping[str, Prediction]) -> dict | None:
    """Shapes: predictions: qid -> Prediction -> dict of floats, or None"""
    with_window = [(q, predictions[q.qid].window) for q in annotations.queries
                   if q.qid in predictions and predictions[q.qid].window is not None]
    if not with_window:
        return None
    misses = sum(1 for q, w in with_window if overlap(w, q.interval) <= 0)
    bounds = [window_bound_iou(w, q.interval) for q, w in with_window]
    n = len(with_window)
    return {"retrieval_miss": 100.0 * misses / n, "oracle_localizer_mIoU": 100.0 * sum(bounds) / n,
            "num_with_window": n,
            "missing_predictions": sum(1 for q in annotations.queries if q.qid not in predictions)}


def stats_note(cis: Mapping[str, Mapping]) -> str:
    """How the intervals were made, in one line (every table that prints them says so)."""
    first = next(iter(cis.values()))
    return (f"intervals: {round(100 * first['level'])} % percentile bootstrap, {first['resamples']} "
            f"resamples, seed {first['seed']}; the same files give the same interval")


def format_metrics(metrics: dict) -> str:
    """A readable table for the CLI (values rounded for display only)."""
    cis = metrics.get("intervals") or {}
    rows = [("metric", "value", "  95 % interval")]
    for k in METRIC_KEYS:
        ci = cis.get(k)
        rows.append((k, metrics[k], f"  [{ci['low']:.2f}, {ci['high']:.2f}] over {ci['units']} {ci['unit']}"
                     if ci and ci.get("low") is not None else ""))
    lines = [format_table(rows, name_width=22, value_width=10, gap="")]
    if cis:
        lines.append(stats_note(cis))
    counts = metrics.get("counts")
    if counts:
        lines.append(f"answered by the model {counts['model']}, fallbacks {counts['fallback']}, "
                     f"unparsed {counts['unparsed']}, other {counts['other']}, missing "
                     f"{counts['missing']}")
        if metrics.get("scored_fallbacks"):
            lines.append("DIAGNOSTIC: fallbacks were scored as if they were answers "
                         "(--score-fallbacks); these are not the model's numbers")
        elif counts["fallback"] or counts["unparsed"] or counts["other"]:
            lines.append("fallbacks, unparsed and other items score IoU 0 (not the model's answers)")
    diag = metrics.get("diagnostics")
    if diag:
        lines.append("diagnostics (windows handed to the localizer)")
        lines.append(format_table([("retrieval miss %", float(diag["retrieval_miss"])),
                                   ("oracle-localizer mIoU", float(diag["oracle_localizer_mIoU"])),
                                   ("queries with window", diag["num_with_window"])],
                                  name_width=22, value_width=10, gap=""))
    return "\n".join(lines)
