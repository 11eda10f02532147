"""HTML of the Impact tab's "What the runs answered" (pure; no gradio): each run's moments as a row
under the clip's truth on the frame axis (the timeline's own x range: its 72 px name column), and for the frame under the playhead how many runs named
each region ("k of N runs say left arm"), the annotated regions marked. The table comes from
components/impact/runs.py."""
from __future__ import annotations

from collections.abc import Sequence
from html import escape

from components.impact.runs import ClipRuns, FrameRuns

TRUTH_COLOUR, RUN_COLOUR = "#2e7d32", "#1565c0"


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


def refused_html(lines: Sequence[str]) -> str:
    if not lines:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return f"<details><summary>{len(lines)} run file(s) not loaded</summary><ul>{items}</ul></details>"


def note_html(text: str, state: str) -> str:
    return f"<div class='impact-runs' data-state='{state}'><p>{escape(text)}</p></div>"


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
