"""What the Impact tab shows, as pure functions (no gradio): the "regions this frame" line,
painted-body caching and its camera, the metrics tables with the paper's rows, the clip list and
the frame box (deep links: links.py; the timeline itself: timeline.py)."""
from __future__ import annotations

import hashlib
import html
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Sequence

import numpy as np

from components.base.lru import SingleFlightLRU
from components.impact.links import shown_value
from components.impact.body import vertex_mask_from_annotation
from components.impact.render import (FRONT_CAMERA, camera_for, color_legend,
                                      render_turntable, vertex_colors, vertex_normals)
from components.impact.metrics.spatial import prf
from components.impact.timeline import moment_ious, timeline_html, window_to_frames  # noqa: F401 (re-exported)

if TYPE_CHECKING:
    from components.impact.data import ImpactAnnotations, ImpactItem

REFERENCE_ROWS = Path(__file__).resolve().parents[2] / "assets" / "hapact_reference_rows.json"
TEMPORAL_KEYS = ("mAP@0.3", "R1@0.3", "G-mAP", "@1_tgt", "@2_tgt", "@3+tgt", "mR@1", "mR@2", "mR@3")
SPATIAL_KEYS = ("F1", "precision", "recall", "geodesic_cm")


#: a set of at most this many clips lists them all in the clip list; a larger one (HAPACT's test
#: split: 433) lists the clips near the one shown and takes any qid or query words typed: every
#: event of the page copies the list's props, and 433 entries cost each click ~0.2 s in the browser
CLIPS_LISTED_MAX = 60
CLIPS_NEAR = 10


def clip_choices(annotations: ImpactAnnotations, qid: str | None = None) -> list[tuple[str, str]]:
    """Clip list entries "qid · query" -> qid: every clip of a small set; of a large one the first,
    the CLIPS_NEAR before and after `qid`, and the last."""
    items = annotations.items
    if len(items) <= CLIPS_LISTED_MAX:
        chosen = range(len(items))
    else:
        at = next((i for i, item in enumerate(items) if item.qid == qid), 0)
        chosen = sorted({0, *range(max(0, at - CLIPS_NEAR), min(len(items), at + CLIPS_NEAR + 1)), len(items) - 1})
    return [(f"{items[i].qid} · {items[i].query}", items[i].qid) for i in chosen]


def find_clip(annotations: ImpactAnnotations, typed: str | None) -> str | None:
    """The qid a clip box's value names: a qid (any case), a list entry "qid · query", or words of
    one clip's query (the first clip whose query holds them, ignoring case); None when none does."""
    text = " ".join(str(typed or "").split())
    if not text:
        return None
    by_qid = {item.qid.lower(): item.qid for item in annotations.items}
    head = text.split(" · ", 1)[0].strip().lower()
    if head in by_qid:
        return by_qid[head]
    words = text.lower()
    return next((item.qid for item in annotations.items if words in " ".join(item.query.split()).lower()), None)


def regions_line(pred: Sequence[str] | None, truth: Sequence[str] | None, f1: float | None) -> str:
    """'regions this frame: predicted [..] · truth [..] · F1 0.67'."""
    def fmt(labels):
        return "—" if labels is None else "[" + ", ".join(labels) + "]"

    score = "—" if f1 is None else f"{f1:.2f}"
    return f"**Regions this frame:** predicted {fmt(pred)} · truth {fmt(truth)} · F1 {score}"


def paint_key(colors: np.ndarray, body_id: str) -> str:
    """Names a painting by what it looks like (its vertex colours on this body), not by its frame:
    frames painted alike share one turntable, and the page's 3D view skips a painting it shows."""
    digest = hashlib.sha256(body_id.encode())
    digest.update(np.ascontiguousarray(colors, dtype=np.uint8).tobytes())
    return digest.hexdigest()[:20]


def render_dir() -> Path:
    """Where the body's mesh file and the turntables are kept ($IMPACT_RENDER_DIR, else a temp
    folder)."""
    path = Path(os.environ.get("IMPACT_RENDER_DIR") or Path(tempfile.gettempdir()) / "impact-render")
    path.mkdir(parents=True, exist_ok=True)
    return path


@lru_cache(maxsize=1)
def reference_rows() -> dict:
    return json.loads(REFERENCE_ROWS.read_text(encoding="utf-8"))


def md_text(text: str) -> str:
    """Text shown literally inside Markdown (a table cell): `mAP@0.3` must not become a mailto
    link, `<stem>` must not vanish as an HTML tag, `|` must not split the cell."""
    return "".join("\\" + ch if ch in "\\`*_[]<>|@#" else ch for ch in str(text))


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


def interval_cells(result: dict, keys: Sequence[str]) -> list[str]:
    """One "[low, high]" cell per key from the result's `intervals` ("" where it has none)."""
    cis = result.get("intervals") or {}
    return [f"[{cis[k]['low']:.2f}, {cis[k]['high']:.2f}]" if (cis.get(k) or {}).get("low") is not None
            else "" for k in keys]


def interval_row(name: str, result: dict, keys: Sequence[str], size: Any, data: str) -> str | None:
    """The Markdown row under a run's row: each score's 95 % interval and how it was made, then
    the run's size and data (every row names its data)."""
    cis = [ci for ci in (result.get("intervals") or {}).values() if ci.get("low") is not None]
    if not cis:
        return None
    how = f"95 % interval, bootstrap over {cis[0]['units']} {cis[0]['unit']}, {cis[0]['resamples']} resamples"
    return (f"| ↳ {md_text(name)} (this app): {md_text(how)} | " + " | ".join(interval_cells(result, keys))
            + f" | {size} | {md_text(data)} |")


def temporal_table(runs: Sequence[tuple[str, dict]], *, with_reference: bool = True,
                   data: str | None = None) -> str:
    """Markdown: this app's runs first, then the paper's Tables 2-3 rows; every row names its data
    set and size, and the table says that rows on different data are not comparable."""
    head = ("| Method | " + " | ".join(md_text(k) for k in TEMPORAL_KEYS) + " | queries | Data |\n|"
            + "---|" * (len(TEMPORAL_KEYS) + 3))
    lines = [head]
    for name, result in runs:
        n = result.get("num_queries", "")
        lines.append(f"| **{md_text(name)}** (this app) | " + " | ".join(_cell(result.get(k)) for k in TEMPORAL_KEYS)
                     + f" | {n} | {md_text(data or f'this data ({n} queries)')} |")
        ci_row = interval_row(name, result, TEMPORAL_KEYS, n, data or f"this data ({n} queries)")
        if ci_row:
            lines.append(ci_row)
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
            notes.append(f"_{md_text(name)}: mR\\@1/2/3 scored on {'/'.join(str(c or 0) for c in counts)} "
                         "queries (>= k GT and predicted windows; 0 where none, as the reference)._")
    return "\n\n".join(notes + ["\n".join(lines)])


def breakdown_table(runs: Sequence[tuple[str, dict]], *, with_reference: bool = True,
                    data: str | None = None) -> str:
    cols = ("long", "middle", "short", "single", "multiple")
    lines = ["| Method (mAP\\@0.3) | Long (7+f) | Middle (3-6f) | Short (1-2f) | Single (1) | Multiple (2+) | Data |",
             "|---|---|---|---|---|---|---|"]
    for name, result in runs:
        groups = {**result.get("by_length", {}), **result.get("by_count", {})}
        n = result.get("num_queries", "")
        lines.append(f"| **{md_text(name)}** (this app) | " + " | ".join(
            f"{_cell(groups.get(c, {}).get('mAP@0.3'))} ({groups.get(c, {}).get('num_queries', 0)} q)"
            for c in cols) + f" | {md_text(data or f'this data ({n} queries)')} |")
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
        lines.append(f"| **{md_text(name)}** (this app, {result.get('body', '')} body) | "
                     + " | ".join(_cell(result.get(k)) for k in keys)
                     + f" | {n} | {md_text(data or f'this data ({n} frames)')} |")
        ci_row = interval_row(name, result, keys, n, data or f"this data ({n} frames)")
        if ci_row:
            lines.append(ci_row)
    for row in reference_rows()["spatial"]:
        lines.append(f"| {row['method']} {row['setting']} (paper, {row['table']}) | "
                     + " | ".join(_cell(row.get(k)) for k in keys)
                     + f" | {PAPER_FRAMES} | HAPACT test ({PAPER_FRAMES} frames), paper {row['table']} |")
    return NOT_COMPARABLE.format(data=data or "the data loaded here",
                                 paper=f"{PAPER_FRAMES:,} frames") + "\n\n" + "\n".join(lines)


# -- painting the body for one frame -----------------------------------------------------------------

class PaintedFrame:
    """Masks, colours and the camera facing the painted vertices of one (clip, frame, prediction)
    state; `key` names the painting by its colours (paint_key)."""

    def __init__(self, key: str, legend: list[tuple[str, str]], pred: list[str] | None,
                 truth: list[str] | None, f1: float | None, colors,
                 camera: tuple[float, float, float] = FRONT_CAMERA):
        self.key, self.legend = key, legend
        self.pred, self.truth, self.f1, self.colors, self.camera = pred, truth, f1, colors, camera


_NORMALS: SingleFlightLRU[str, np.ndarray] = SingleFlightLRU(4)


def body_normals(body) -> np.ndarray:
    """The body's vertex normals, computed once per mesh."""
    return _NORMALS.get(body.fingerprint(), lambda: vertex_normals(body.vertices, body.faces))


def painted_mask(pred_mask: np.ndarray | None, gt_mask: np.ndarray | None) -> np.ndarray | None:
    """Every vertex painted in some colour (predicted and/or truth), None when nothing is."""
    masks = [np.asarray(m, dtype=bool) for m in (pred_mask, gt_mask) if m is not None]
    return np.logical_or.reduce(masks) if masks else None


def paint_frame(body, item: ImpactItem, frame: int, pred_labels: Sequence[str] | None,
                pred_vertices: Sequence[int] | None = None) -> PaintedFrame:
    """Paint the prediction and/or the truth of `frame`: TP/FP/missed when both exist, else the one
    there is."""
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
    camera = camera_for(body.vertices, body_normals(body), painted_mask(pred_mask, gt_mask))
    return PaintedFrame(key, legend, pred, truth, f1, colors, camera)


def turntable_path(painted: PaintedFrame) -> Path:
    return render_dir() / f"{painted.key}-turntable.mp4"


#: frames in one turn of the rotating view
TURNTABLE_FRAMES = 36


def turntable_for(body, painted: PaintedFrame, frames: int = TURNTABLE_FRAMES, size: int = 384,
                  on_frame: Callable[[int, int], None] | None = None) -> Path:
    """The rotating view of a painted state (rendered once, then reused; `on_frame(done, frames)`
    while it is drawn). Raises RenderUnavailable."""
    out = turntable_path(painted)
    if not out.exists():
        render_turntable(body, painted.colors, out, frames=frames, size=size, on_frame=on_frame)
    return out


def legend_html(legend: Sequence[tuple[str, str]]) -> str:
    return " · ".join(f'<span style="color:{color}">&#9632;</span> {html.escape(text)}'
                      for text, color in legend)


# -- deep links ------------------------------------------------------------------------------------

def frame_problem(value: Any, item: ImpactItem) -> str:
    """Why the frame box's value cannot be shown ("" when it can): empty, not a whole number, or
    outside the clip."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return f"The frame box is empty: type a frame from 1 to {item.num_frames}."
    try:
        number = float(value)
    except (TypeError, ValueError):
        return f"The frame box holds `{shown_value(value)}`: type a frame from 1 to {item.num_frames}."
    if not number.is_integer():
        return f"Frame {number:g} is not a whole frame: type a frame from 1 to {item.num_frames}."
    if not 1 <= number <= item.num_frames:
        return f"Frame {number:g} is outside {item.qid} (frames 1-{item.num_frames})."
    return ""
