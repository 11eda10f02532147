"""What the Impact tab shows, as pure functions (no gradio): the frame-accurate timeline, the
"regions this frame" line, painted-body caching, and the metrics tables with the paper's rows."""
from __future__ import annotations

import hashlib
import html
import json
import math
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

import numpy as np

from components.impact.body import vertex_mask_from_annotation
from components.impact.render import color_legend, export_glb, render_turntable, vertex_colors
from components.impact.spatial_metrics import prf
from components.impact.temporal_metrics import temporal_iou

if TYPE_CHECKING:
    from components.impact.annotations import ImpactAnnotations, ImpactItem

REFERENCE_ROWS = Path(__file__).resolve().parents[2] / "assets" / "hapact_reference_rows.json"
TEMPORAL_KEYS = ("mAP@0.3", "R1@0.3", "G-mAP", "@1_tgt", "@2_tgt", "@3+tgt", "mR@1", "mR@2", "mR@3")
SPATIAL_KEYS = ("F1", "precision", "recall", "geodesic_cm")
GT_COLOR, PRED_COLOR, CURSOR_COLOR = "#2e7d32", "#1565c0", "#d84315"


def clip_choices(annotations: ImpactAnnotations) -> list[tuple[str, str]]:
    """Dropdown entries "qid · query" -> qid."""
    return [(f"{item.qid} · {item.query}", item.qid) for item in annotations.items]


def window_to_frames(start: float, end: float, fps: float) -> tuple[int, int]:
    """Seconds -> the 1-based inclusive frames the window touches (frame f spans [(f-1)/fps, f/fps])."""
    fs = int(math.floor(start * fps + 1e-6)) + 1
    fe = max(fs, int(math.ceil(end * fps - 1e-6)))
    return fs, fe


def moment_ious(gt: Sequence[Sequence[float]], pred: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    """Best IoU of each GT moment with any prediction, and of each prediction with any GT moment."""
    gt_best = [max((temporal_iou(g, p) for p in pred), default=0.0) for g in gt]
    pred_best = [max((temporal_iou(p, g) for g in gt), default=0.0) for p in pred]
    return gt_best, pred_best


def timeline_html(item: ImpactItem, pred_windows: Sequence[Sequence[float]] | None,
                  current_frame: int | None = None, method: str = "") -> str:
    """Ground-truth moments vs predicted ones on a frame axis. Every block carries data-frame (its
    first frame) so a click seeks the player; its title gives frames, seconds and the IoU."""
    n, fps = item.num_frames, item.fps
    gt_s = item.moments_seconds()
    preds = [list(w) for w in (pred_windows or [])]
    gt_iou, pred_iou = moment_ious(gt_s, preds)

    def pct(frame0: float) -> float:
        return 100.0 * frame0 / n

    def block(fs: int, fe: int, color: str, label: str, title: str, opacity: float = 1.0) -> str:
        left, width = pct(fs - 1), max(pct(fe) - pct(fs - 1), 100.0 / n)
        return (f'<div class="impact-block" data-frame="{fs}" title="{html.escape(title)}" '
                f'style="position:absolute;left:{left:.4f}%;width:{width:.4f}%;top:2px;bottom:2px;'
                f'background:{color};opacity:{opacity:.2f};cursor:pointer;border-radius:2px;'
                f'min-width:3px;color:#fff;font-size:10px;overflow:visible;white-space:nowrap">'
                f'<span style="position:relative;top:-16px;color:{color}">{html.escape(label)}</span></div>')

    gt_blocks = []
    for (fs, fe), (s, e), iou in zip(item.moments, gt_s, gt_iou):
        label = f"{fs}-{fe}" if fe > fs else f"{fs}"
        gt_blocks.append(block(fs, fe, GT_COLOR, f"{label} IoU {iou:.2f}",
                               f"truth: frames {fs}-{fe} ({s:.3f}-{e:.3f} s); best IoU {iou:.2f}"))
    pred_blocks = []
    for rank, (w, iou) in enumerate(zip(preds, pred_iou), 1):
        fs, fe = window_to_frames(w[0], w[1], fps)
        fs, fe = max(1, fs), min(n, fe)
        score = f"; score {w[2]:.2f}" if len(w) > 2 else ""
        pred_blocks.append(block(fs, fe, PRED_COLOR, f"#{rank} IoU {iou:.2f}",
                                 f"prediction #{rank}: {w[0]:.3f}-{w[1]:.3f} s (frames {fs}-{fe}){score}; "
                                 f"best IoU {iou:.2f}", opacity=max(0.35, 1.0 - 0.12 * (rank - 1))))
    cursor = ""
    if current_frame:
        cursor = (f'<div title="frame {current_frame}" style="position:absolute;left:{pct(current_frame - 1):.4f}%;'
                  f'width:{max(100.0 / n, 0.3):.4f}%;top:0;bottom:0;background:{CURSOR_COLOR};opacity:.5;'
                  'pointer-events:none"></div>')
    ticks = "".join(
        f'<div class="impact-tick" data-frame="{f}" style="position:absolute;left:{pct(f - 1):.4f}%;'
        f'font-size:10px;cursor:pointer">|{f}</div>'
        for f in sorted({1, n, *(m[0] for m in item.moments), *([current_frame] if current_frame else [])}))

    def row(name: str, blocks: list[str], empty: str) -> str:
        inner = "".join(blocks) or f'<span style="font-size:11px;opacity:.7">{html.escape(empty)}</span>'
        return (f'<div style="display:flex;align-items:center;margin:14px 0 4px">'
                f'<div style="width:90px;font-size:12px">{name}</div>'
                f'<div style="position:relative;flex:1;height:20px;background:rgba(127,127,127,.15)">'
                f'{inner}{cursor}</div></div>')

    pred_note = ("no prediction yet: press Run temporal" if pred_windows is None
                 else "no interval predicted")
    legend = (f'<div style="font-size:11px;margin-top:2px">truth <span style="color:{GT_COLOR}">&#9632;</span> '
              f'· predicted <span style="color:{PRED_COLOR}">&#9632;</span> (rank #1 darkest) '
              f'· current frame <span style="color:{CURSOR_COLOR}">&#9632;</span> '
              f'· {n} frames at {fps:g} fps · click a moment to seek'
              + (f' · {html.escape(method)}' if method else "") + "</div>")
    axis = (f'<div style="display:flex"><div style="width:90px"></div>'
            f'<div style="position:relative;flex:1;height:14px">{ticks}</div></div>')
    return (f'<div class="impact-timeline-body">{row("truth", gt_blocks, "no moment")}'
            f'{row("predicted", pred_blocks, pred_note)}{axis}{legend}</div>')


def regions_line(pred: Sequence[str] | None, truth: Sequence[str] | None, f1: float | None) -> str:
    """'regions this frame: predicted [..] · truth [..] · F1 0.67'."""
    def fmt(labels):
        return "—" if labels is None else "[" + ", ".join(labels) + "]"

    score = "—" if f1 is None else f"{f1:.2f}"
    return f"**Regions this frame:** predicted {fmt(pred)} · truth {fmt(truth)} · F1 {score}"


def paint_key(colors: np.ndarray, body_id: str) -> str:
    """Names a painting by what it looks like (its vertex colours on this body), not by its frame:
    frames painted alike share one GLB and one turntable, so scrubbing them reloads nothing."""
    digest = hashlib.sha256(body_id.encode())
    digest.update(np.ascontiguousarray(colors, dtype=np.uint8).tobytes())
    return digest.hexdigest()[:20]


def render_dir() -> Path:
    """Where painted GLBs and turntables are cached ($IMPACT_RENDER_DIR, else a temp folder)."""
    path = Path(os.environ.get("IMPACT_RENDER_DIR") or Path(tempfile.gettempdir()) / "impact-render")
    path.mkdir(parents=True, exist_ok=True)
    return path


@lru_cache(maxsize=1)
def reference_rows() -> dict:
    return json.loads(REFERENCE_ROWS.read_text(encoding="utf-8"))


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


#: the data the paper's rows were measured on (HAPACT test split; Tables 2-4, 11)
PAPER_QUERIES, PAPER_FRAMES = 433, 3142
NOT_COMPARABLE = ("_Rows on different data are not comparable: each row names its data set and "
                  "size. This app's rows are on {data}; the paper's rows are on the HAPACT test "
                  "split ({paper})._")


def data_label(annotations: ImpactAnnotations | None, split: str | None, count: int,
               unit: str = "clips") -> str:
    """Which data a row of this app was measured on, e.g. "examples, split test (7 clips)"."""
    name = "this data"
    if annotations is not None and getattr(annotations, "path", None):
        path = Path(annotations.path)
        name = path.parent.name if path.stem == "annotations" else path.stem
    return f"{name}{f', split {split}' if split else ''} ({count} {unit})"


def temporal_table(runs: Sequence[tuple[str, dict]], *, with_reference: bool = True,
                   data: str | None = None) -> str:
    """Markdown: this app's runs first, then the paper's Tables 2-3 rows; every row names its data
    set and size, and the table says that rows on different data are not comparable."""
    head = ("| Method | " + " | ".join(TEMPORAL_KEYS) + " | queries | Data |\n|"
            + "---|" * (len(TEMPORAL_KEYS) + 3))
    lines = [head]
    for name, result in runs:
        n = result.get("num_queries", "")
        lines.append(f"| **{name}** (this app) | " + " | ".join(_cell(result.get(k)) for k in TEMPORAL_KEYS)
                     + f" | {n} | {data or f'this data ({n} queries)'} |")
    if with_reference:
        for row in reference_rows()["temporal"]:
            setting = f" {row['setting']}" if row.get("setting") else ""
            lines.append(f"| {row['method']}{setting} (paper, {row['table']}) | "
                         + " | ".join(_cell(row.get(k)) for k in TEMPORAL_KEYS)
                         + f" | {PAPER_QUERIES} | HAPACT test ({PAPER_QUERIES} queries), paper {row['table']} |")
    notes = [NOT_COMPARABLE.format(data=data or "the data loaded here",
                                   paper=f"{PAPER_QUERIES} queries")] if with_reference else []
    for name, result in runs:
        counts = [result.get(f"mR@{k}_queries") for k in (1, 2, 3)]
        if any(c is not None for c in counts):
            notes.append(f"_{name}: mR@1/2/3 scored on {'/'.join(str(c or 0) for c in counts)} "
                         "queries (>= k GT and predicted windows; 0 where none, as the reference)._")
    return "\n\n".join(notes + ["\n".join(lines)])


def breakdown_table(runs: Sequence[tuple[str, dict]], *, with_reference: bool = True,
                    data: str | None = None) -> str:
    cols = ("long", "middle", "short", "single", "multiple")
    lines = ["| Method (mAP@0.3) | Long (7+f) | Middle (3-6f) | Short (1-2f) | Single (1) | Multiple (2+) | Data |",
             "|---|---|---|---|---|---|---|"]
    for name, result in runs:
        groups = {**result.get("by_length", {}), **result.get("by_count", {})}
        n = result.get("num_queries", "")
        lines.append(f"| **{name}** (this app) | " + " | ".join(
            f"{_cell(groups.get(c, {}).get('mAP@0.3'))} ({groups.get(c, {}).get('num_queries', 0)} q)"
            for c in cols) + f" | {data or f'this data ({n} queries)'} |")
    if with_reference:
        for row in reference_rows()["breakdowns"]:
            lines.append(f"| {row['method']} (paper, Table 11) | " + " | ".join(_cell(row[c]) for c in cols)
                         + f" | HAPACT test ({PAPER_QUERIES} queries), paper Table 11 |")
        return NOT_COMPARABLE.format(data=data or "the data loaded here",
                                     paper=f"{PAPER_QUERIES} queries") + "\n\n" + "\n".join(lines)
    return "\n".join(lines)


def spatial_table(runs: Sequence[tuple[str, dict]], *, data: str | None = None) -> str:
    groups = ("head", "torso", "arms", "hips", "legs", "hands", "feet")
    keys = SPATIAL_KEYS + tuple(f"F1_{g}" for g in groups) + ("label_F1",)
    lines = ["| Method | " + " | ".join(k.replace("_cm", " (cm)") for k in keys) + " | frames | Data |",
             "|" + "---|" * (len(keys) + 3)]
    for name, result in runs:
        n = result.get("num_frames", "")
        lines.append(f"| **{name}** (this app, {result.get('body', '')} body) | "
                     + " | ".join(_cell(result.get(k)) for k in keys)
                     + f" | {n} | {data or f'this data ({n} frames)'} |")
    for row in reference_rows()["spatial"]:
        lines.append(f"| {row['method']} {row['setting']} (paper, {row['table']}) | "
                     + " | ".join(_cell(row.get(k)) for k in keys)
                     + f" | {PAPER_FRAMES} | HAPACT test ({PAPER_FRAMES} frames), paper {row['table']} |")
    return NOT_COMPARABLE.format(data=data or "the data loaded here",
                                 paper=f"{PAPER_FRAMES:,} frames") + "\n\n" + "\n".join(lines)


# -- painting the body for one frame -----------------------------------------------------------------

class PaintedFrame:
    """Masks, colours and the cached GLB of one (clip, frame, prediction) state."""

    def __init__(self, key: str, glb: Path, legend: list[tuple[str, str]], pred: list[str] | None,
                 truth: list[str] | None, f1: float | None, colors):
        self.key, self.glb, self.legend = key, glb, legend
        self.pred, self.truth, self.f1, self.colors = pred, truth, f1, colors


def paint_frame(body, item: ImpactItem, frame: int, pred_labels: Sequence[str] | None,
                pred_vertices: Sequence[int] | None = None) -> PaintedFrame:
    """Paint the prediction and/or the truth of `frame`: TP/FP/missed when both exist, else the one
    there is. The GLB is written once per state into a temp folder and reused."""
    truth_ann = item.frames.get(frame)
    truth = list(truth_ann.regions) if truth_ann is not None else None
    pred = list(pred_labels) if pred_labels is not None else None
    gt_mask = (vertex_mask_from_annotation(body, truth_ann.regions, truth_ann.vertices)
               if truth_ann is not None else None)
    pred_mask = vertex_mask_from_annotation(body, pred, pred_vertices) if pred is not None else None
    f1 = prf(pred_mask, gt_mask)[2] if pred_mask is not None and gt_mask is not None else None
    colors = vertex_colors(body, pred_mask, gt_mask)
    legend = color_legend(pred_mask, gt_mask)
    key = paint_key(colors, getattr(body, "kind", "") + body.fingerprint())
    glb = render_dir() / f"{key}.glb"
    if not glb.exists():
        export_glb(body, colors, glb)
    return PaintedFrame(key, glb, legend, pred, truth, f1, colors)


def turntable_path(painted: PaintedFrame) -> Path:
    return render_dir() / f"{painted.key}-turntable.mp4"


def turntable_for(body, painted: PaintedFrame, frames: int = 36, size: int = 384) -> Path:
    """The rotating view of a painted state (rendered once, then reused). Raises RenderUnavailable."""
    out = turntable_path(painted)
    if not out.exists():
        render_turntable(body, painted.colors, out, frames=frames, size=size)
    return out


def legend_html(legend: Sequence[tuple[str, str]]) -> str:
    return " · ".join(f'<span style="color:{color}">&#9632;</span> {html.escape(text)}'
                      for text, color in legend)
