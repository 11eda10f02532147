"""HTML of Window search's "What the runs answered" (pure; no gradio): under the query's ground
truth, one row per run on the movie's time axis (the timeline's own x range: the same left gutter) (its interval, a fallback's striped and marked),
with its IoU and source; "k of N runs reach IoU ≥ 0.5" and, on a confusable pair, how many runs
put the query on its partner's moment. The table comes from components/window_search/runs.py."""
from __future__ import annotations

from collections.abc import Sequence
from html import escape

from components.common.runs_view import note_html as runs_note_html, refused_html
from components.window_search.runs import QueryRuns, RunInterval
from components.window_search.timeline import fmt_t

GT_COLOUR = "#1a7f37"
PARTNER_COLOUR = "#9a6700"
RUN_COLOUR = "#bf3989"
FALLBACK = "repeating-linear-gradient(135deg,#8c959f 0 5px,#eaeef2 5px 10px)"


def _pct(t: float, duration: float) -> float:
    return max(0.0, min(100.0, 100.0 * t / duration)) if duration > 0 else 0.0


def _bar(iv: tuple[float, float] | None, background: str, title: str, duration: float) -> str:
    if iv is None:
        return ""
    s, e = iv
    return (f"<span class='ws-runs-bar' title='{escape(title)}' style='position:absolute;top:2px;bottom:2px;"
            f"left:{_pct(s, duration):.3f}%;width:{max(0.4, _pct(e, duration) - _pct(s, duration)):.3f}%;"
            f"background:{background};border-radius:3px'></span>")


def _row(label: str, bar: str, note: str, attrs: str = "") -> str:
    """A row: its name and note on one line, the bar under it on the timeline's own x range."""
    return (f"<div class='ws-runs-row'{attrs}><div class='ws-runs-text'><span class='ws-runs-name'>{label}</span>"
            f" <span class='ws-runs-note'>{note}</span></div><div class='ws-runs-track'>{bar}</div></div>")


def _run_row(a: RunInterval, duration: float) -> str:
    shown = "no interval" if a.interval is None else f"{fmt_t(a.interval[0])}-{fmt_t(a.interval[1])}"
    source = a.source + (" (fallback: scored 0)" if a.fallback else "")
    partner = " · on the partner's moment" if a.on_partner else ""
    note = f"IoU {a.iou:.2f} · {escape(source)}{partner}"
    bar = _bar(a.interval, FALLBACK if a.fallback else RUN_COLOUR, f"{a.run} {shown}", duration)
    return _row(escape(a.run), bar, note,
                f" data-run='{escape(a.run)}' data-iou='{a.iou:.4f}' data-fallback='{int(a.fallback)}'")


def query_runs_html(qr: QueryRuns, duration: float, refused: Sequence[str] = ()) -> str:
    """The rows: the ground truth, the partner's (on a pair), then every run."""
    duration = duration if duration > 0 else max([qr.gt[1], *(a.interval[1] for a in qr.answers if a.interval)])
    rows = [_row("GT", _bar(qr.gt, GT_COLOUR, f"GT {fmt_t(qr.gt[0])}-{fmt_t(qr.gt[1])}", duration),
                 f"{fmt_t(qr.gt[0])}-{fmt_t(qr.gt[1])}", " data-row='gt'")]
    if qr.partner_gt is not None:
        rows.append(_row("partner", _bar(qr.partner_gt, PARTNER_COLOUR, f"partner {qr.partner_qid}", duration),
                         f"{escape(str(qr.partner_qid))}: its ground truth", " data-row='partner'"))
    rows += [_run_row(a, duration) for a in qr.answers]
    summary = escape(qr.summary()) if qr.answers else "No run answered this query."
    return (f"<div class='ws-runs' data-state='ready' data-qid='{escape(qr.qid)}'>"
            f"<p class='ws-runs-summary'><strong>What the runs answered:</strong> {summary}</p>{''.join(rows)}"
            f"{refused_html(refused, 'ws-runs-refused')}</div>")


def note_html(text: str, state: str) -> str:
    return runs_note_html("ws-runs", text, state, title="What the runs answered:")


CSS = """
#ws-runs-panel .html-container{padding:0 !important}
body.present #ws-runs-panel{--ws-gutter:92px}
.ws-runs{margin:8px 4px 0 var(--ws-gutter, 50px)}
.ws-runs-summary{margin:0 0 4px 0;font-size:var(--ws-font, 12px)}
.ws-runs-row{margin:3px 0}
.ws-runs-text{font-size:var(--ws-font, 11px);line-height:1.3;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.ws-runs-name{font-weight:600}
.ws-runs-note{color:#57606a}
.ws-runs-track{position:relative;height:10px;background:#f6f8fa;border:1px solid #d0d7de;box-sizing:border-box}
"""
