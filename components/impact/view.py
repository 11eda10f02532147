"""What the Impact tab shows, as pure functions (no gradio, no files written): the "regions this
frame" line and the painting's legend, the metrics tables with the paper's rows, the clip list and
the frame box (deep links: links.py; the timeline itself: timeline.py; the painting:
painting.py; the turntable on disk: render.py)."""
from __future__ import annotations

import html
import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from components.base.errors import UserError
from components.impact.links import shown_value
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


def legend_html(legend: Sequence[tuple[str, str]]) -> str:
    return " · ".join(f'<span style="color:{color}">&#9632;</span> {html.escape(text)}'
                      for text, color in legend)


# -- the frame box ---------------------------------------------------------------------------------

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


def first_frame(item: ImpactItem) -> int:
    """The frame a clip opens at: its first moment's first frame, else 1."""
    return item.moments[0][0] if item.moments else 1


def shown_frame(item: ImpactItem, value: Any) -> int:
    """The frame box's value as a frame of `item`, or the clip's first frame when it holds none."""
    return first_frame(item) if frame_problem(value, item) else int(float(value))


def checked_frame(item: ImpactItem, value: Any) -> int:
    """The frame box's value as a frame of `item`; a UserError saying what to type otherwise."""
    problem = frame_problem(value, item)
    if problem:
        raise UserError(problem)
    return int(float(value))
