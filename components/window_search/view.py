"""HTML/Markdown views of a search trace for the tab (pure; no gradio): timeline, checklist, result.

Colours: accepted window green, rejected grey, expanded (window grew past its chunk) outlined;
status chips true ✓ / false ✗ / cutoff △ (the paper's check, cross and triangle, Appendix F).
"""
from __future__ import annotations

import html
from collections.abc import Iterable

from components.window_search.types import FALLBACKS, MODEL_SOURCES, UNPARSED, CandidateTrace, \
    SearchTrace, is_scored_source

CHIP = {"true": ("✓", "#1a7f37", "true"), "false": ("✗", "#cf222e", "false"),
        "cutoff": ("△", "#bf8700", "cutoff")}
BASELINE_LABEL = "text-only baseline (subtitles only)"

# Clicking a ranked chunk on the timeline clicks the matching "#r" choice of the Window radio.
TIMELINE_JS = """
element.addEventListener('click', (e) => {
  const block = e.target.closest('[data-rank]');
  if (!block) return;
  const want = '#' + block.dataset.rank;
  const labels = document.querySelectorAll('#ws-window-pick label');
  for (const l of labels) { if (l.textContent.trim() === want) { l.click(); break; } }
});
"""


def fmt_t(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def candidate(trace: SearchTrace, rank: int | None) -> CandidateTrace | None:
    for c in trace.candidates:
        if c.rank == rank:
            return c
    return None


def candidate_at(trace: SearchTrace, t: float) -> int | None:
    """Rank of the inspected window under time t (the accepted one first), else the nearest."""
    hits = [c for c in trace.candidates if c.span[0] <= t <= c.span[1]]
    if hits:
        hits.sort(key=lambda c: (c.outcome not in ("accepted", "selected"), c.rank))
        return hits[0].rank
    if not trace.candidates:
        return None
    return min(trace.candidates, key=lambda c: min(abs(t - c.span[0]), abs(t - c.span[1]))).rank


def _pct(t: float, duration: float) -> float:
    return max(0.0, min(100.0, 100.0 * t / duration)) if duration > 0 else 0.0


def timeline_html(trace: SearchTrace | None, duration: float, *, n_chunks: int = 0,
                  chunk_seconds: float = 180.0, playhead: float | None = None,
                  selected: int | None = None) -> str:
    """Chunks as blocks (ranked ones labelled #r and clickable via data-rank), the final window,
    the prediction and the ground truth as bars, and a playhead marker."""
    if duration <= 0:
        return "<div class='ws-tl-empty'>Pick a movie to see its timeline.</div>"
    ranked = {c.index: c for c in (trace.chunks if trace else [])}
    by_rank = {c.rank: c for c in (trace.candidates if trace else [])}
    parts = ["<div class='ws-tl' style='position:relative;height:96px;margin:6px 0 6px 52px;font:12px sans-serif'>"]
    for i in range(n_chunks):
        s, e = i * chunk_seconds, min((i + 1) * chunk_seconds, duration)
        c = ranked.get(i)
        bg, border, label, attrs = "#eef1f4", "1px solid #d0d7de", "", ""
        if c is not None and c.rank is not None:
            cand = by_rank.get(c.rank)
            outcome = cand.outcome if cand else "not_inspected"
            bg = {"accepted": "#2da44e", "selected": "#2da44e", "rejected": "#8c959f"}.get(outcome, "#ddf4ff")
            expanded = cand is not None and cand.final_window is not None and \
                (cand.final_window[0] < c.start - 1e-6 or cand.final_window[1] > c.end + 1e-6)
            border = "2px dashed #0969da" if expanded else "1px solid #57606a"
            if c.rank == selected:
                border = "3px solid #fb8500"
            label = f"#{c.rank}"
            attrs = (f" data-rank='{c.rank}' data-start='{s:.1f}' "
                     f"title='rank {c.rank} · {fmt_t(s)}-{fmt_t(e)} · {outcome}'")
        parts.append(f"<div class='ws-chunk'{attrs} style='position:absolute;top:0;height:34px;"
                     f"left:{_pct(s, duration):.3f}%;width:{_pct(e - s, duration):.3f}%;background:{bg};"
                     f"border:{border};box-sizing:border-box;cursor:{'pointer' if attrs else 'default'};"
                     f"text-align:center;line-height:30px;font-weight:bold;color:#111'>{label}</div>")

    def bar(iv, top, colour, name):
        if iv is None:
            return
        s, e = iv
        parts.append(f"<div title='{name} {fmt_t(s)}-{fmt_t(e)}' style='position:absolute;top:{top}px;"
                     f"height:10px;left:{_pct(s, duration):.3f}%;width:{max(0.4, _pct(e - s, duration)):.3f}%;"
                     f"background:{colour};border-radius:3px'></div>"
                     f"<div style='position:absolute;top:{top - 2}px;left:-50px;width:46px;text-align:right;"
                     f"font-size:10px;color:#444'>{name}</div>")

    if trace is not None:
        bar(trace.window, 42, "#0969da", "window")
        bar(trace.prediction, 58, "#bf3989", "pred")
        bar(trace.ground_truth, 74, "#1a7f37", "GT")
    if playhead is not None:
        parts.append(f"<div class='ws-playhead' title='{fmt_t(playhead)}' style='position:absolute;top:0;"
                     f"bottom:0;left:{_pct(playhead, duration):.3f}%;width:2px;background:#fb8500'></div>")
    parts.append("</div>")
    parts.append("<div style='font:11px sans-serif;color:#57606a'>chunks: "
                 "<span style='background:#2da44e;padding:0 4px'>accepted</span> "
                 "<span style='background:#8c959f;padding:0 4px'>rejected</span> "
                 "<span style='background:#ddf4ff;padding:0 4px'>not inspected</span> "
                 "<span style='border:2px dashed #0969da;padding:0 4px'>expanded</span> · bars: "
                 "<span style='color:#0969da'>window</span> <span style='color:#bf3989'>prediction</span> "
                 "<span style='color:#1a7f37'>ground truth</span> · click a ranked chunk to open it</div>")
    return "".join(parts)


def _chip(status: str) -> str:
    sym, colour, word = CHIP.get(status, ("?", "#57606a", status))
    return (f"<span class='ws-chip ws-chip-{html.escape(word)}' style='display:inline-block;min-width:64px;"
            f"padding:1px 6px;border-radius:10px;color:white;background:{colour};font-weight:bold'>"
            f"{sym} {html.escape(word)}</span>")


def checklist_html(trace: SearchTrace | None, rank: int | None) -> str:
    """One window's checklist: statements with status chips and notes; before/after rows when the
    window was expanded; decision and confidence."""
    if trace is None:
        return "<div class='ws-cl-empty'>Run a query or load a trace; then click a window.</div>"
    cand = candidate(trace, rank)
    texts = {s.sid: s.text for s in trace.statements}
    head = []
    if trace.text_only_baseline:
        head.append(f"<div style='color:#9a6700;font-weight:bold'>{BASELINE_LABEL}</div>")
    if cand is None:
        body = "".join(f"<li>{html.escape(s.sid)} {html.escape(s.text)}</li>" for s in trace.statements)
        return "".join(head) + (f"<div>Statements:</div><ul>{body}</ul>" if body else
                                "<div>No window inspected yet.</div>")
    w = cand.span
    n_cands = len(trace.chunks) or len(trace.candidates)
    head.append(f"<div style='font-weight:bold'>Window rank #{cand.rank} of {n_cands} · "
                f"[{fmt_t(w[0])} - {fmt_t(w[1])}] · {html.escape(cand.outcome)}</div>")
    if not cand.steps:
        return "".join(head) + "<div>Not inspected (handed straight to the localizer).</div>"
    last = cand.steps[-1]
    rows = ["<table class='ws-checklist' style='width:100%;border-collapse:collapse;font-size:13px'>"]
    for chk in last.checks:
        before = ""
        if len(cand.steps) > 1:
            history = [next((c.status for c in st.checks if c.sid == chk.sid), "") for st in cand.steps[:-1]]
            before = " ".join(f"<span title='before expansion {k + 1}'>B{k + 1}:"
                              f"{CHIP.get(h, ('?',))[0]}</span>" for k, h in enumerate(history))
        rows.append(f"<tr style='border-top:1px solid #eee'><td style='padding:3px'>{html.escape(chk.sid)}</td>"
                    f"<td>{html.escape(texts.get(chk.sid, ''))}</td><td>{_chip(chk.status)}</td>"
                    f"<td style='color:#57606a'>{html.escape(chk.note)}</td><td>{before}</td></tr>")
    rows.append("</table>")
    steps = []
    for st in cand.steps:
        extra = ""
        if st.decision == "EXPAND":
            extra = f" {st.expand_side or ''} {st.applied_seconds if st.applied_seconds is not None else st.expand_seconds or ''} s"
        if st.converted_from_expand:
            extra += " (budget spent: EXPAND → REJECT)"
        if st.parse_error:
            extra += f" · unparsed reply kept raw: {html.escape(st.parse_error)}"
        conf = f" · confidence {st.confidence:.2f}" if st.confidence is not None else ""
        steps.append(f"<li>step {st.n}: [{fmt_t(st.window[0])} - {fmt_t(st.window[1])}] · "
                     f"<b>{html.escape(st.decision)}</b>{html.escape(extra)}{conf} · {st.num_frames} frames"
                     f"{(' · ' + html.escape(st.summary)) if st.summary else ''}</li>")
    return "".join(head) + "".join(rows) + f"<ol class='ws-steps' style='font-size:12px'>{''.join(steps)}</ol>"


def result_markdown(trace: SearchTrace | None, *, iou: float | None = None,
                    partner: tuple[str, str, float | None] | None = None, theta: float = 0.5) -> str:
    """One line of result, one of calls; partner = (qid, query, its IoU if run in this session)."""
    if trace is None:
        return ""
    bits = []
    if trace.text_only_baseline:
        bits.append(f"**{BASELINE_LABEL}**")
    if trace.stopped:
        bits.append("stopped")
    how = ("accepted" if trace.accepted_rank else "selected" if trace.selected_rank else "window")
    if trace.window:
        bits.append(f"{how} window [{trace.window[0]:.0f} s, {trace.window[1]:.0f} s]")
    if trace.prediction:
        scored = is_scored_source(trace.source)
        what = "prediction" if scored else "fallback (not scored, IoU 0)"
        bits.append(f"{what} [{trace.prediction[0]:.1f} s, {trace.prediction[1]:.1f} s]")
    if trace.source:
        bits.append(f"source: `{trace.source}` ({source_meaning(trace.source)})")
    if iou is not None:
        bits.append(f"IoU {iou:.2f}")
    if partner is not None:
        pq, ptext, piou = partner
        if piou is not None and iou is not None:
            ok = iou >= theta and piou >= theta
            bits.append(f"pair: {'both' if ok else 'not both'} ≥ {theta} (partner {pq} IoU {piou:.2f})")
        else:
            bits.append(f"partner {pq} ({html.escape(ptext)}) not run yet")
    calls = trace.calls
    line2 = (f"Calls: {calls.get('decompose', 0)} decompose, {calls.get('inspect', 0)} inspect, "
             f"{calls.get('select', 0)} select, {calls.get('localize', 0)} localize"
             f"{', ' + str(calls['retries']) + ' retries' if calls.get('retries') else ''} · {trace.elapsed_s:.1f} s")
    errors = "".join(f"\n\n⚠ {e}" for e in trace.errors)
    return " · ".join(bits) + "\n\n" + line2 + errors


def source_meaning(source: str) -> str:
    """What a prediction's source label means (types.MODEL_SOURCES / FALLBACKS)."""
    if source in MODEL_SOURCES:
        return MODEL_SOURCES[source]
    if source.startswith("fallback:"):
        return FALLBACKS.get(source.split(":", 1)[1], "a fallback")
    return "no interval could be read" if source == UNPARSED else source


def progress_text(trace: SearchTrace, k: int, done: bool) -> str:
    if done:
        return "Done." if not trace.stopped else "Stopped."
    if trace.window is not None and trace.prediction is None:
        return "Localizing inside the window…"
    inspected = sum(1 for c in trace.candidates if c.steps)
    if not trace.statements and not trace.candidates:
        return "Retrieving chunks and decomposing the query…"
    return f"Inspecting candidate {max(1, inspected)} of {k}…"


def query_choices(queries: Iterable) -> list[tuple[str, str]]:
    """Dropdown (label, qid) pairs: 'qid · contrast attribute · query'."""
    return [(f"{q.qid} · {q.contrast_attribute} · {q.query}", q.qid) for q in queries]


def metrics_rows(metrics: dict) -> list[list]:
    keys = ["mIoU", "R@1@0.3", "R@1@0.5", "R@1@0.7", "PairSuccess@0.3", "PairSuccess@0.5", "PairSuccess@0.7"]
    rows = [[k, round(metrics[k], 2)] for k in keys]
    rows += [["num_queries", metrics["num_queries"]], ["num_pairs", metrics["num_pairs"]]]
    counts = metrics.get("counts")
    if counts:  # fallbacks and unparsed items score 0: say how many there were
        rows += [["model answers", counts["model"]], ["fallbacks (IoU 0)", counts["fallback"]],
                 ["unparsed (IoU 0)", counts["unparsed"]]]
    diag = metrics.get("diagnostics")
    if diag:
        rows += [["retrieval miss %", round(diag["retrieval_miss"], 2)],
                 ["oracle-localizer mIoU", round(diag["oracle_localizer_mIoU"], 2)]]
    return rows
