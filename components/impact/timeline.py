"""The Impact tab's frame-accurate timeline as HTML (pure functions, no gradio): truth and predicted
moments on two rows, labels laid out in lanes so none collides, and a time axis."""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Sequence

from components.impact.metrics.temporal import temporal_iou

if TYPE_CHECKING:
    from components.impact.data import ImpactItem

GT_COLOR, PRED_COLOR, CURSOR_COLOR = "#2e7d32", "#1565c0", "#d84315"
SECOND_COLOR = "#8e24aa"   # the compared model's moments ("compare with")
ONLY_COLOR = "#f9a825"     # time one model's moments cover and the other's do not
LABEL_ROOM = 14.0    # percent of the bar a label may take before the next one in its lane
LANE_PX = 14         # height of one label lane
TICK_STEPS_S = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0)


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


@dataclass(frozen=True)
class LabelSlot:
    """Where one label goes: its lane (0 = nearest the bar), left edge and width, in percent."""

    lane: int
    left: float
    room: float


def label_lanes(starts: Sequence[float], room: float = LABEL_ROOM) -> list[LabelSlot]:
    """Lay out labels that begin at `starts` (percent of the bar, any order) in lanes.

    Each label gets `room` percent before the next label of its lane (the first lane with room
    for it, greedily from the left); a label near the right end is moved left so it keeps its
    room. A label's width is capped at the gap to its lane's next label, so two labels never
    overlap at any screen width (the page cuts a long one with an ellipsis)."""
    order = sorted(range(len(starts)), key=lambda i: starts[i])
    lefts = {i: max(0.0, min(float(starts[i]), 100.0 - room)) for i in order}
    lane_of: dict[int, int] = {}
    lane_last: list[float] = []
    for i in order:
        lane = next((k for k, last in enumerate(lane_last) if lefts[i] >= last + room), len(lane_last))
        if lane == len(lane_last):
            lane_last.append(lefts[i])
        lane_last[lane] = lefts[i]
        lane_of[i] = lane
    slots: dict[int, LabelSlot] = {}
    for lane in range(len(lane_last)):
        members = [i for i in order if lane_of[i] == lane]
        for i, after in zip(members, members[1:] + [None]):
            right = 100.0 if after is None else lefts[after]
            slots[i] = LabelSlot(lane, lefts[i], max(0.0, right - lefts[i]))
    return [slots[i] for i in range(len(starts))]


def time_ticks(num_frames: int, fps: float, max_ticks: int = 7) -> list[tuple[float, int]]:
    """Evenly spaced axis ticks (seconds, the 1-based frame starting there) at a round step."""
    duration = num_frames / fps
    step = next((s for s in TICK_STEPS_S if duration / s <= max_ticks - 1), TICK_STEPS_S[-1])
    count = int(math.floor(duration / step + 1e-9))
    return [(k * step, int(round(k * step * fps)) + 1) for k in range(count + 1)
            if int(round(k * step * fps)) + 1 <= num_frames]


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _predicted(preds: list[list[float]], pred_iou: list[float], n: int, fps: float, color: str,
               who: str = "") -> list[tuple]:
    blocks = []
    for rank, (w, iou) in enumerate(zip(preds, pred_iou), 1):
        fs, fe = window_to_frames(w[0], w[1], fps)
        fs, fe = max(1, fs), min(n, fe)
        score = f"; score {w[2]:.2f}" if len(w) > 2 else ""
        blocks.append((fs, fe, color, f"#{rank} IoU {iou:.2f}",
                       f"{who}prediction #{rank}: {w[0]:.3f}-{w[1]:.3f} s (frames {fs}-{fe}){score}; "
                       f"best IoU {iou:.2f}", max(0.35, 1.0 - 0.12 * (rank - 1))))
    return blocks


def _only_marks(spans: Sequence[Sequence[float]], n: int, fps: float, who: str) -> str:
    """Outlines over the time only this row's model predicts (the other's moments miss it)."""
    marks = []
    for start, end in spans:
        fs, fe = window_to_frames(start, end, fps)
        fs, fe = max(1, fs), min(n, fe)
        left, width = 100.0 * (fs - 1) / n, max(100.0 * (fe - fs + 1) / n, 100.0 / n)
        marks.append(f'<div class="impact-only" data-frame="{fs}" title="only {who} predicts {start:.3f}-{end:.3f} s '
                     f'(frames {fs}-{fe})" style="position:absolute;left:{left:.4f}%;width:{width:.4f}%;top:0;'
                     f'bottom:0;border:2px dashed {ONLY_COLOR};box-sizing:border-box;pointer-events:none;'
                     'border-radius:2px"></div>')
    return "".join(marks)


def timeline_html(item: ImpactItem, pred_windows: Sequence[Sequence[float]] | None,
                  current_frame: int | None = None, method: str = "", *,
                  second_windows: Sequence[Sequence[float]] | None = None, second_method: str = "",
                  only_first: Sequence[Sequence[float]] = (), only_second: Sequence[Sequence[float]] = ()) -> str:
    """Ground-truth moments vs predicted ones on a frame axis. Every block carries data-frame (its
    first frame) so a click seeks the player; its title gives frames, seconds and the IoU. With a
    compared model (`second_windows`), its moments get a row of their own under the first
    model's, and the time only one of them predicts (`only_first`, `only_second`, seconds) is
    outlined on that model's row."""
    n, fps = item.num_frames, item.fps
    gt_s = item.moments_seconds()
    preds = [list(w) for w in (pred_windows or [])]
    gt_iou, pred_iou = moment_ious(gt_s, preds)
    compared = second_windows is not None
    name_px = 84 if compared else 72

    def pct(frame0: float) -> float:
        return 100.0 * frame0 / n

    truth = []
    for (fs, fe), (s, e), iou in zip(item.moments, gt_s, gt_iou):
        label = f"{fs}-{fe}" if fe > fs else f"{fs}"
        scored = f" IoU {iou:.2f}" if preds else ""   # no prediction yet: nothing to score against
        truth.append((fs, fe, GT_COLOR, f"{label}{scored}",
                      f"truth: frames {fs}-{fe} ({s:.3f}-{e:.3f} s)" + (f"; best IoU {iou:.2f}" if preds else ""),
                      1.0))
    predicted = _predicted(preds, pred_iou, n, fps, PRED_COLOR, "① " if compared else "")
    cursor = ""
    if current_frame:
        cursor = (f'<div class="impact-cursor" title="frame {current_frame}" style="position:absolute;'
                  f'left:{pct(current_frame - 1):.4f}%;width:{max(100.0 / n, 0.3):.4f}%;top:0;bottom:0;'
                  f'background:{CURSOR_COLOR};opacity:.5;pointer-events:none"></div>')

    def row(name: str, blocks: list[tuple], empty: str, marks: str = "", kind: str = "") -> str:
        slots = label_lanes([pct(b[0] - 1) for b in blocks])
        lanes = max((s.lane for s in slots), default=-1) + 1
        bars, labels = [], []
        for (fs, fe, color, label, title, opacity), slot in zip(blocks, slots):
            left, width = pct(fs - 1), max(pct(fe) - pct(fs - 1), 100.0 / n)
            tip = html.escape(title)
            bars.append(f'<div class="impact-block" data-frame="{fs}" title="{tip}" style="position:absolute;'
                        f'left:{left:.4f}%;width:{width:.4f}%;top:2px;bottom:2px;background:{color};'
                        f'opacity:{opacity:.2f};cursor:pointer;border-radius:2px;min-width:3px"></div>')
            labels.append(f'<span class="impact-label" data-frame="{fs}" data-lane="{slot.lane}" title="{tip}" '
                          f'style="position:absolute;left:{slot.left:.4f}%;max-width:{slot.room:.4f}%;'
                          f'bottom:{slot.lane * LANE_PX}px;color:{color};font-size:12px;line-height:{LANE_PX}px;'
                          'white-space:nowrap;overflow:hidden;text-overflow:ellipsis;cursor:pointer">'
                          f'{html.escape(label)}</span>')
        inner = "".join(bars) or f'<span style="font-size:12px;opacity:.7;padding-left:4px">{html.escape(empty)}</span>'
        data = f' data-row="{kind}"' if kind else ""
        return (f'<div class="impact-row"{data} style="display:flex;align-items:flex-end;margin:4px 0">'
                f'<div class="impact-row-name" style="width:{name_px}px;flex:none;font-size:12px;padding-bottom:3px">{name}</div>'
                f'<div style="flex:1;min-width:0"><div class="impact-labels" style="position:relative;'
                f'height:{lanes * LANE_PX}px">{"".join(labels)}</div>'
                f'<div class="impact-bar" style="position:relative;height:20px;background:rgba(127,127,127,.15)">'
                f'{inner}{marks}{cursor}</div></div></div>')

    ticks = []
    for seconds, frame in time_ticks(n, fps):
        at = pct(frame - 1)
        shift = "0" if at < 3 else "-100%" if at > 92 else "-50%"
        ticks.append(f'<div class="impact-tick" data-frame="{frame}" title="{seconds:g} s = frame {frame}" '
                     f'style="position:absolute;left:{at:.4f}%;top:0;height:5px;border-left:1px solid '
                     'currentColor;opacity:.6"></div>'
                     f'<div class="impact-tick-label" data-frame="{frame}" style="position:absolute;'
                     f'left:{at:.4f}%;top:5px;transform:translateX({shift});font-size:12px;'
                     f'white-space:nowrap;cursor:pointer">{_seconds(seconds)}</div>')
    axis = (f'<div class="impact-axis" style="display:flex"><div class="impact-row-name" style="width:{name_px}px;flex:none;font-size:12px;'
            f'opacity:.7">time</div><div style="position:relative;flex:1;min-width:0;height:20px;'
            f'border-top:1px solid rgba(127,127,127,.5)">{"".join(ticks)}</div></div>')
    pred_note = ("no prediction yet: press Run temporal" if pred_windows is None
                 else "no interval predicted")
    at_frame = (f' · frame {current_frame} = {(current_frame - 1) / fps:.2f} s' if current_frame else "")
    if not compared:
        legend = (f'<div class="impact-timeline-legend" style="font-size:12px;margin-top:2px">truth <span style="color:{GT_COLOR}">&#9632;</span> '
                  f'· predicted <span style="color:{PRED_COLOR}">&#9632;</span> (rank #1 darkest) '
                  f'· current frame <span style="color:{CURSOR_COLOR}">&#9632;</span>{at_frame} '
                  f'· {n} frames at {fps:g} fps · click a moment to seek'
                  + (f' · {html.escape(method)}' if method else "") + "</div>")
        return (f'<div class="impact-timeline-body">{row("truth", truth, "no moment")}'
                f'{row("predicted", predicted, pred_note)}{axis}{legend}</div>')
    seconds = [list(w) for w in second_windows]
    second = _predicted(seconds, moment_ious(gt_s, seconds)[1], n, fps, SECOND_COLOR, "② ")
    legend = (f'<div class="impact-timeline-legend" style="font-size:12px;margin-top:2px">truth <span style="color:{GT_COLOR}">&#9632;</span> '
              f'· ① {html.escape(method or "the session model")} <span style="color:{PRED_COLOR}">&#9632;</span> '
              f'· ② {html.escape(second_method or "the compared model")} <span style="color:{SECOND_COLOR}">'
              f'&#9632;</span> · <span style="border:2px dashed {ONLY_COLOR};padding:0 3px">only this model</span>'
              f' · current frame <span style="color:{CURSOR_COLOR}">&#9632;</span>{at_frame} '
              f'· {n} frames at {fps:g} fps · click a moment to seek</div>')
    return (f'<div class="impact-timeline-body" data-compared="1">{row("truth", truth, "no moment")}'
            f'{row("① predicted", predicted, "no interval predicted", _only_marks(only_first, n, fps, "①"), "first")}'
            f'{row("② predicted", second, "no interval predicted", _only_marks(only_second, n, fps, "②"), "second")}'
            f'{axis}{legend}</div>')
