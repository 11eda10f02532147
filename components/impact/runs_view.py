"""What the Impact tab shows of "What the runs answered" (pure; no gradio): each run's moments as a
row under the clip's truth on the frame axis (the timeline's own x range: its 72 px name column),
for the frame under the playhead how many runs named each region ("k of N runs say left arm"),
the annotated regions marked, and the same counts painted on the body as a heat colouring (each
region in a sequential colour for k/N, the annotated regions striped green). The table comes from
components/impact/runs.py."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING

import numpy as np

from components.common.runs_view import note_html as runs_note_html, refused_html
from components.impact.body import region_vertex_mask, vertex_mask_from_annotation
from components.impact.regions import PALETTE, REGION_LABELS
from components.impact.painting import PaintedFrame, body_normals, camera_for, hex_to_rgba, paint_key
from components.impact.runs import ClipRuns, FrameRuns

if TYPE_CHECKING:
    from components.impact.data import ImpactItem

TRUTH_COLOUR, RUN_COLOUR = "#2e7d32", "#1565c0"
#: the heat scale from one run of N (light) to all N (dark), yellow-orange-red: none of the body's
#: other meanings (grey body, the truth stripes' green, the hit / miss colours) lies on it
HEAT_SCALE = ("#ffeda0", "#feb24c", "#f03b20", "#800026")
HEAT_STEPS = 60   # k/N shown to 1/60 (exact for N up to 6): a painting has at most 256 colours, runs may be many
STRIPE_PERIOD, STRIPE_SHARE = 0.05, 0.3   # the annotated regions' green stripes: every 5 cm, 30 % of it
HEAT_LEGEND_MAX = 6   # up to this many runs the legend lists every k; more: five steps of the scale


def _bar(s: float, e: float, duration: float, colour: str, title: str) -> str:
    left = max(0.0, min(100.0, 100.0 * s / duration))
    width = max(0.4, min(100.0, 100.0 * e / duration) - left)
    return (f"<span class='impact-runs-bar' title='{escape(title)}' style='position:absolute;top:2px;bottom:2px;"
            f"left:{left:.3f}%;width:{width:.3f}%;background:{colour};border-radius:2px'></span>")


def _row(name: str, bars: str, note: str, attrs: str = "") -> str:
    """A row: its name and note on one line, the bars under it on the timeline's own x range."""
    return (f"<div class='impact-runs-row'{attrs}><div class='impact-runs-text'><span class='impact-runs-name'>"
            f"{name}</span> <span class='impact-runs-note'>{note}</span></div>"
            f"<div class='impact-runs-track'>{bars}</div></div>")


def moments_html(clip: ClipRuns, truth: Sequence[tuple[float, float]], duration: float) -> str:
    """The truth's row, then one row per run (its windows; an invalid answer says its status)."""
    rows = [_row("truth", "".join(_bar(s, e, duration, TRUTH_COLOUR, f"truth {s:.2f}-{e:.2f} s") for s, e in truth),
                 f"{len(truth)} moment(s)", " data-row='truth'")]
    for m in clip.moments:
        bars = "".join(_bar(s, e, duration, RUN_COLOUR, f"{m.run} {s:.2f}-{e:.2f} s") for s, e, _ in m.windows)
        note = f"{len(m.windows)} moment(s)" if m.status == "ok" else escape(m.status)
        rows.append(_row(escape(m.run), bars, note, f" data-run='{escape(m.run)}'"))
    return "".join(rows)


def frame_html(frame: FrameRuns | None, number: int) -> str:
    """"k of N runs say <region>" for every region a run named at this frame (truth marked ✓)."""
    if frame is None:
        return f"<p class='impact-runs-frame' data-frame='{number}'>Frame {number} is not annotated: no region answers.</p>"
    counts = frame.counts()
    if not counts:
        items = "<li>no run named a region</li>"
    else:
        items = "".join(f"<li data-region='{escape(r)}' data-count='{n}'>{escape(frame.summary(r))}"
                        f"{' ✓ annotated' if r in frame.truth else ''}</li>" for r, n in counts.items())
    truth = ", ".join(frame.truth) or "none"
    return (f"<div class='impact-runs-frame' data-frame='{number}'><p><strong>Frame {number}</strong> · "
            f"annotated: {escape(truth)}</p><ul>{items}</ul></div>")


def clip_runs_html(clip: ClipRuns, truth: Sequence[tuple[float, float]], duration: float, frame: int,
                   refused: Sequence[str] = ()) -> str:
    if not clip.moments and not clip.frames:
        body = "<p>No run answered this clip.</p>"
    else:
        body = moments_html(clip, truth, duration) + frame_html(clip.frames.get(frame), frame)
    return (f"<div class='impact-runs' data-state='ready' data-qid='{escape(clip.qid)}'>"
            f"<p class='impact-runs-title'><strong>What the runs answered</strong></p>{body}{refused_html(refused)}</div>")


def heat_colour(k: int, total: int) -> str:
    """"#rrggbb" of k of `total` runs (1 <= k <= total) on HEAT_SCALE, linear in k/total."""
    if total < 1 or not 1 <= k <= total:
        raise ValueError(f"{k} of {total} runs: k must be 1..{total}")
    share = round(HEAT_STEPS * k / total) / HEAT_STEPS
    anchors = np.array([hex_to_rgba(c)[:3] for c in HEAT_SCALE], dtype=float)
    at = share * (len(anchors) - 1)
    low = min(int(at), len(anchors) - 2)
    rgb = anchors[low] + (at - low) * (anchors[low + 1] - anchors[low])
    return "#" + "".join(f"{int(round(v)):02x}" for v in rgb)


def heat_legend_counts(total: int) -> list[int]:
    """The k the legend shows: every one of a few runs, else 1, N/4, N/2, 3N/4 and N."""
    if total <= HEAT_LEGEND_MAX:
        return list(range(1, total + 1))
    return sorted({1, *(max(1, round(total * q)) for q in (0.25, 0.5, 0.75)), total})


def heat_legend(total: int, truth: bool) -> list[tuple[str, str]]:
    """(text, colour) entries: the body no run named, "k of N runs" steps, the truth's stripes."""
    entries = [("no run", PALETTE["body"])]
    entries += [(f"{k} of {total} runs", heat_colour(k, total)) for k in heat_legend_counts(total)]
    return entries + ([("annotated (green stripes)", TRUTH_COLOUR)] if truth else [])


def stripes(body, mask: np.ndarray, period: float = STRIPE_PERIOD, share: float = STRIPE_SHARE) -> np.ndarray:
    """The vertices of `mask` on thin diagonal stripes (`period` in mesh units, metres; `share`
    of each period): the annotated regions' marking, seen from any side and on every region. A
    border would not do: the truth's edge hides under the chin for the head, and the mannequin's
    limbs are separate pieces with no edge shared with their neighbours. Diagonal (x + y + z),
    so the T-posed arms are striped as well as the legs."""
    inside = np.asarray(mask, dtype=bool)
    phase = (np.asarray(body.vertices, dtype=float).sum(axis=1) / period) % 1.0
    return inside & (phase < share)


def heat_colors(body, counts: Mapping[str, int], total: int, truth_mask: np.ndarray | None = None) -> np.ndarray:
    """(N, 4) uint8: each region in the heat colour of how many of `total` runs named it, the
    rest grey; the truth (`truth_mask`) striped in TRUTH_COLOUR over it. Labels not of the 18
    regions are left out (a run's free text is never painted)."""
    colors = np.tile(hex_to_rgba(PALETTE["body"]), (body.num_vertices, 1))
    for region, k in sorted(counts.items(), key=lambda kv: kv[1]):
        if k >= 1 and region in REGION_LABELS:
            colors[region_vertex_mask(body, [region])] = hex_to_rgba(heat_colour(min(k, total), total))
    if truth_mask is not None:
        colors[stripes(body, truth_mask)] = hex_to_rgba(TRUTH_COLOUR)
    return colors


def heat_line(frame: FrameRuns) -> str:
    """Markdown: what the heat painting shows ("k of N runs say <region>", most named first)."""
    said = " · ".join(escape(frame.summary(r)) for r in frame.counts()) or f"none of {len(frame.answers)} runs named a region"
    truth = ", ".join(frame.truth) or "none"
    return f"**Runs at frame {frame.frame}** (painted): {said} · annotated (striped green): {escape(truth)}"


def paint_runs_heat(body, item: ImpactItem, frame: FrameRuns) -> PaintedFrame:
    """The body painted with how many runs named each region at `frame` (like painting.paint_frame;
    the camera faces the regions most runs named, else the truth)."""
    counts = {r: k for r, k in frame.counts().items() if r in REGION_LABELS}
    truth_ann = item.frames.get(frame.frame)
    truth_mask = (np.asarray(vertex_mask_from_annotation(body, truth_ann.regions, truth_ann.vertices), dtype=bool)
                  if truth_ann is not None else None)
    total = max(1, len(frame.answers))
    colors = heat_colors(body, counts, total, truth_mask)
    top = max(counts.values(), default=0)
    facing = region_vertex_mask(body, [r for r, k in counts.items() if k == top]) if top else truth_mask
    camera = camera_for(body.vertices, body_normals(body), facing)
    key = paint_key(colors, getattr(body, "kind", "") + body.fingerprint())
    return PaintedFrame(key, heat_legend(total, truth_mask is not None and truth_mask.any()), None,
                        list(frame.truth), None, colors, camera)


def note_html(text: str, state: str) -> str:
    return runs_note_html("impact-runs", text, state)


CSS = """
#impact-runs-panel .html-container{padding:0 !important}
.impact-runs{margin-top:6px}
.impact-runs-title{margin:0 0 2px 0}
.impact-runs-row{margin:3px 0}
.impact-runs-text{margin-left:72px;font-size:11px;line-height:1.3;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.impact-runs-name{font-weight:600}
.impact-runs-note{opacity:.75}
.impact-runs-track{position:relative;margin-left:72px;height:10px;background:rgba(127,127,127,.15)}
.impact-runs-frame{margin-left:72px}
"""
