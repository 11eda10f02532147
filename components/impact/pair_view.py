"""What the Impact tab shows of a model's reasoning and, with "compare with", of the second model
(pure; no gradio): the body painted where the two models' regions differ (both, only ①, only ②),
the regions line with both answers, and each call's reasoning collapsed with its token counts.

Answers are the records the session keeps: a temporal prediction record
(`TemporalPrediction.to_record`, the compared one with "only_first" / "only_second" spans in
seconds) and a region answer dict (`RegionAnswer.as_dict`: regions, raw, error, reasoning, usage).
The timeline's second row is components/impact/timeline.py's."""
from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from components.common import outcome
from components.common.reasoning_view import agree_badge, reasoning_html, side_label
from components.impact.body import vertex_mask_from_annotation
from components.impact.metrics.spatial import prf
from components.impact.regions import PALETTE
from components.impact.painting import PaintedFrame, body_normals, camera_for, hex_to_rgba, paint_key, painted_mask
from components.impact.view import md_text

if TYPE_CHECKING:
    from components.impact.data import ImpactItem

#: the difference painting's colours (neither the truth overlay's hit / miss colours: another meaning)
PAIR_PALETTE = {"both": "#1f77d4", "only_first": "#e377c2", "only_second": "#ff7f0e"}
#: the body's painting choices once two models answered a frame (ImpactSession.paint)
PAINT_CHOICES = [("① vs ②: where they differ", "difference"), ("① vs the truth", "first"),
                 ("② vs the truth", "second")]
_E = html.escape


def _mask(body, labels: Sequence[str] | None) -> np.ndarray:
    return np.asarray(vertex_mask_from_annotation(body, list(labels or []), None), dtype=bool)


def difference_colors(body, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """(N, 4) uint8: grey body; vertices both models chose, only the first, only the second."""
    colors = np.tile(hex_to_rgba(PALETTE["body"]), (body.num_vertices, 1))
    colors[first & second] = hex_to_rgba(PAIR_PALETTE["both"])
    colors[first & ~second] = hex_to_rgba(PAIR_PALETTE["only_first"])
    colors[~first & second] = hex_to_rgba(PAIR_PALETTE["only_second"])
    return colors


def paint_difference(body, item: ImpactItem, frame: int, first: Sequence[str], second: Sequence[str],
                     names: tuple[str, str] = ("", "")) -> PaintedFrame:
    """The body painted where the two models' regions for `frame` agree and differ (like
    painting.paint_frame); `pred` is the first model's labels."""
    a, b = _mask(body, first), _mask(body, second)
    colors = difference_colors(body, a, b)
    key = paint_key(colors, getattr(body, "kind", "") + body.fingerprint())
    truth_ann = item.frames.get(frame)
    legend = [("body", PALETTE["body"]), ("both models", PAIR_PALETTE["both"]),
              (f"only ① {names[0]}".strip(), PAIR_PALETTE["only_first"]),
              (f"only ② {names[1]}".strip(), PAIR_PALETTE["only_second"])]
    camera = camera_for(body.vertices, body_normals(body), painted_mask(a, b))
    return PaintedFrame(key, legend, list(first), list(truth_ann.regions) if truth_ann else None, None,
                        colors, camera)


def frame_f1(body, item: ImpactItem, frame: int, labels: Sequence[str] | None) -> float | None:
    """F1 of `labels` against the frame's truth on the body's vertices (None without a truth)."""
    truth = item.frames.get(frame)
    if truth is None or labels is None:
        return None
    gt = np.asarray(vertex_mask_from_annotation(body, truth.regions, truth.vertices), dtype=bool)
    return prf(_mask(body, labels), gt)[2]


def _labels(labels: Sequence[str] | None) -> str:
    return "—" if labels is None else "[" + ", ".join(md_text(x) for x in labels) + "]"


def _f1(value: float | None) -> str:
    return "" if value is None else f" (F1 {value:.2f})"


def regions_pair_line(first: dict, second: dict, truth: Sequence[str] | None, f1_first: float | None,
                      f1_second: float | None) -> str:
    """Markdown: both models' regions for the frame, the truth, and where they differ."""
    a, b = list(first.get("regions") or []), list(second.get("regions") or [])
    only_a, only_b = [x for x in a if x not in b], [x for x in b if x not in a]
    differ = (f" · **≠** only ① {_labels(only_a)} · only ② {_labels(only_b)}" if only_a or only_b
              or bool(first.get("error")) != bool(second.get("error")) else " · **=** both chose alike")
    return (f"**Regions this frame:** ① {_labels(a)}{_f1(f1_first)} · ② {_labels(b)}{_f1(f1_second)} · "
            f"truth {_labels(truth)}{differ}")


def _missed(error: object) -> str:
    """'not reached: <reason>' for a transport failure (components/common/outcome.py), else ''."""
    text = str(error or "").removeprefix("backend error: ")
    return outcome.not_reached(text) if outcome.is_not_reached(text) and " failed" in text else ""


def _problem(side: int, answer: dict) -> str:
    if not answer.get("error"):
        return ""
    if _missed(answer["error"]):
        return (f"<div style='font-size:12px;color:#9a6700'>{side_label(side, str(answer.get('source', '')))}: "
                f"{_E(_missed(answer['error']))}</div>")
    return (f"<div style='font-size:12px;color:#9a6700'>{side_label(side, str(answer.get('source', '')))}: not "
            f"usable ({_E(str(answer['error']))}); raw: <code>{_E(str(answer.get('raw', ''))[:200])}</code></div>")


def region_beside(first: dict | None, second: dict | None) -> str:
    """Beside the body: each model's reasoning for this frame's regions (collapsed, with token
    counts) and, compared, whether the two agree. '' when there is nothing to show."""
    if first is None:
        return ""
    if second is None:
        shown = reasoning_html(first.get("reasoning"), first.get("usage"), step="regions")
        return f"<div class='impact-reasoning'>{shown}</div>" if shown else ""
    agree = sorted(first.get("regions") or []) == sorted(second.get("regions") or []) and \
        bool(first.get("error")) == bool(second.get("error"))
    return (f"<div class='impact-pair-regions' data-agree='{int(agree)}' style='font-size:13px'>"
            f"Regions: {side_label(0, str(first.get('source', '')))} and "
            f"{side_label(1, str(second.get('source', '')))} · {agree_badge(agree)}"
            f"{_problem(0, first)}{_problem(1, second)}"
            f"{reasoning_html(first.get('reasoning'), first.get('usage'), step='① regions')}"
            f"{reasoning_html(second.get('reasoning'), second.get('usage'), step='② regions')}</div>")


def _said(record: dict) -> str:
    status = record.get("status")
    if status == "ok":
        n = len(record.get("pred_relevant_windows") or [])
        return f"{n} interval{'s' if n != 1 else ''}"
    return {"none": "no such impact (empty prediction)", "unparsed": "not read (counted as unparsed)",
            "error": _missed(record.get("error")) or f"backend error: {record.get('error')}"}.get(status, str(status))


def _spans(spans: Sequence[Sequence[float]]) -> str:
    return ", ".join(f"{s:.2f}-{e:.2f} s" for s, e in spans) or "—"


def temporal_beside(first: dict | None, second: dict | None) -> str:
    """Under the timeline: the temporal call's reasoning (collapsed, with token counts) and,
    compared, what each model answered and the time only one of them predicts."""
    if first is None:
        return ""
    if second is None:
        shown = reasoning_html(first.get("reasoning"), first.get("usage"), step="temporal")
        return f"<div class='impact-reasoning'>{shown}</div>" if shown else ""
    only_a, only_b = second.get("only_first") or [], second.get("only_second") or []
    agree = first.get("status") == second.get("status") and not only_a and not only_b
    differ = "" if agree else (f"<div class='impact-only-spans'>only ① {_E(_spans(only_a))} · only ② "
                               f"{_E(_spans(only_b))}</div>")
    return (f"<div class='impact-pair-temporal' data-agree='{int(agree)}' style='font-size:13px'>"
            f"Temporal: ① {_E(str(first.get('method', '')))}: {_E(_said(first))} · ② "
            f"{_E(str(second.get('method', '')))}: {_E(_said(second))} · {agree_badge(agree)}{differ}"
            f"{reasoning_html(first.get('reasoning'), first.get('usage'), step='① temporal')}"
            f"{reasoning_html(second.get('reasoning'), second.get('usage'), step='② temporal')}</div>")
