"""HTML/Markdown views of a search trace for the tab (pure; no gradio): the checklist of one window,
the result line, the progress line, the benchmark table with the paper's rows. The timeline is in
timeline.py.

Status chips true ✓ / false ✗ / cutoff △ are the paper's check, cross and triangle (Appendix F);
an expanded window shows, under each statement, its rows before each expansion (Figure 5).
"""
from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from components.common import outcome
from components.common.reasoning_view import reasoning_html
from components.window_search.timeline import TIMELINE_JS, fmt_t, timeline_html, verdict
from components.window_search.types import FALLBACKS, MODEL_SOURCES, UNPARSED, CandidateTrace, \
    InspectStep, SearchTrace, is_scored_source

__all__ = ["TIMELINE_JS", "fmt_t", "timeline_html", "checklist_html", "not_inspected_html",
           "result_markdown", "progress_text", "query_choices", "bench_table", "candidate",
           "candidate_at", "chunk_at", "source_meaning"]

CHIP = {"true": ("✓", "#1a7f37", "true"), "false": ("✗", "#cf222e", "false"),
        "cutoff": ("△", "#bf8700", "cutoff")}
BASELINE_LABEL = "text-only baseline (subtitles only)"
RAW_SHOWN = 4000  # characters of an unparsed reply shown in the checklist
REFERENCE_ROWS = Path(__file__).resolve().parents[2] / "assets" / "com2bench_reference_rows.json"
BENCH_HEADERS = ["data set", "method", "P@0.3", "P@0.5", "P@0.7", "R@1@0.3", "R@1@0.5", "R@1@0.7", "mIoU"]
OUTCOME_WORDS = {"accepted": "accepted (EMIT)", "rejected": "rejected",
                 "selected": "selected (fallback: every candidate was rejected)",
                 "chosen": "chosen chunk (no verifier)", "not_inspected": "not inspected"}
_E = html.escape
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")


def md_text(text: str) -> str:
    """Plain text for a Markdown line: its Markdown characters escaped (never HTML entities)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


# -- finding a window -------------------------------------------------------------------------------
def candidate(trace: SearchTrace, rank: int | None) -> CandidateTrace | None:
    for c in trace.candidates:
        if c.rank == rank:
            return c
    return None


def candidate_at(trace: SearchTrace, t: float) -> int | None:
    """Rank of the inspected window under time t (the accepted / selected one first); None when no
    inspected window covers t."""
    hits = [c for c in trace.candidates if c.span[0] <= t <= c.span[1]]
    if not hits:
        return None
    hits.sort(key=lambda c: (c.outcome not in ("accepted", "selected"), c.rank))
    return hits[0].rank


def chunk_at(t: float, chunk_seconds: float, duration: float) -> tuple[int, float, float]:
    """(0-based chunk index, start, end) of the fixed chunk under time t."""
    n = max(1, int(-(-duration // chunk_seconds)))
    i = min(n - 1, max(0, int(t // chunk_seconds)))
    return i, i * chunk_seconds, min((i + 1) * chunk_seconds, duration)


# -- the checklist ----------------------------------------------------------------------------------
def _chip(status: str) -> str:
    sym, colour, word = CHIP.get(status, ("?", "#57606a", status))
    return (f"<span class='ws-chip ws-chip-{_E(word)}' style='display:inline-block;white-space:nowrap;"
            f"padding:1px 6px;border-radius:10px;color:white;background:{colour};font-weight:bold'>"
            f"{sym} {_E(word)}</span>")


def _step_label(k: int, step: InspectStep) -> str:
    span = f"[{fmt_t(step.window[0])} - {fmt_t(step.window[1])}]"
    return f"before expansion {span}" if k == 0 else f"after expansion {k} {span}"


def _decision(step: InspectStep) -> str:
    bits = [f"<b>{_E(step.decision)}</b>"]
    if step.decision == "EXPAND":
        secs = step.applied_seconds if step.applied_seconds is not None else step.expand_seconds
        bits.append(_E(f"{step.expand_side or ''} {secs if secs is not None else ''} s".strip()))
    if step.converted_from_expand:
        bits.append("budget spent: EXPAND → REJECT")
    if step.confidence is not None:
        bits.append(f"confidence {step.confidence:.2f}")
    bits.append(f"{step.num_frames} frames")
    if step.summary:
        bits.append(_E(step.summary))
    return " · ".join(bits)


def _raw_reply(step: InspectStep) -> str:
    raw = step.raw or "(empty reply)"
    cut = f"\n… ({len(raw) - RAW_SHOWN} more characters)" if len(raw) > RAW_SHOWN else ""
    return (f"<div class='ws-unparsed' style='margin:4px 0;padding:4px 6px;background:#fff8c5;"
            f"border-radius:4px'>Step {step.n + 1}: the reply could not be read ({_E(step.parse_error or '')}), "
            f"so it counts as REJECT. The model's raw reply:<pre class='ws-raw' style='white-space:pre-wrap;"
            f"word-break:break-word;max-height:160px;overflow:auto;margin:4px 0 0'>{_E(raw[:RAW_SHOWN] + cut)}"
            f"</pre></div>")


def _rows(cand: CandidateTrace, texts: dict[str, str]) -> list[str]:
    """One row per statement (its verdict in the final window), then, for an expanded window, a
    row per earlier step: how the statement stood before each expansion."""
    last = next((st for st in reversed(cand.steps) if st.checks), cand.steps[-1])
    earlier = [(k, st) for k, st in enumerate(cand.steps) if st is not last and st.checks]
    rows = []
    for chk in last.checks:
        rows.append(f"<tr class='ws-stmt'><td><b>{_E(chk.sid)}</b> {_E(texts.get(chk.sid, ''))}</td>"
                    f"<td>{_chip(chk.status)}</td><td class='ws-note'>{_E(chk.note)}</td></tr>")
        for k, st in earlier:
            before = next((c for c in st.checks if c.sid == chk.sid), None)
            if before is None:
                continue
            rows.append(f"<tr class='ws-before' style='color:#57606a;font-size:12px'><td style='padding-left:14px'>"
                        f"↳ {_step_label(k, st)}</td><td>{_chip(before.status)}</td>"
                        f"<td class='ws-note'>{_E(before.note)}</td></tr>")
    return rows


TABLE_HEAD = ("<table class='ws-checklist' style='width:100%;table-layout:fixed;border-collapse:collapse;"
              "font-size:13px;overflow-wrap:anywhere'><colgroup><col style='width:44%'><col style='width:84px'>"
              "<col></colgroup><thead><tr style='text-align:left;border-bottom:2px solid #d0d7de'>"
              "<th>statement</th><th>verdict</th><th>evidence</th></tr></thead><tbody>")


def _header(trace: SearchTrace, cand: CandidateTrace) -> str:
    w = cand.span
    kind = verdict(cand)
    n = len(trace.chunks) or len(trace.candidates)
    grew = " · expanded" if len(cand.steps) > 1 else ""
    return (f"<div class='ws-cl-head' style='font-weight:bold'>Window rank #{cand.rank} of {n} · "
            f"[{fmt_t(w[0])} - {fmt_t(w[1])}]{grew} · <span class='ws-verdict-{kind}'>"
            f"{_E(OUTCOME_WORDS.get(kind, cand.outcome))}</span></div>")


def checklist_html(trace: SearchTrace | None, rank: int | None) -> str:
    """One window's checklist: a header row (statement, verdict, evidence), each statement's chip
    and note, before/after rows for an expanded window, each step's decision, and the raw reply of
    a step that could not be read."""
    if trace is None:
        return "<div class='ws-cl-empty'>Press Run (or Load trace); then click a chunk on the timeline.</div>"
    cand = candidate(trace, rank)
    texts = {s.sid: s.text for s in trace.statements}
    head = [f"<div style='color:#9a6700;font-weight:bold'>{BASELINE_LABEL}</div>"] if trace.text_only_baseline else []
    if cand is None:
        body = "".join(f"<li>{_E(s.sid)} {_E(s.text)}</li>" for s in trace.statements)
        return "".join(head) + (f"<div>Statements:</div><ul>{body}</ul>" if body else
                                "<div>No window inspected yet.</div>")
    head.append(_header(trace, cand))
    if not cand.steps:
        return "".join(head) + ("<div class='ws-not-inspected'>Not inspected: this method hands the chunk "
                                "straight to the localizer.</div>")
    parts = head + [TABLE_HEAD] + _rows(cand, texts) + ["</tbody></table>"]
    steps = "".join(f"<li>{_decision(st)} {reasoning_html(st.reasoning, st.usage)}</li>" for st in cand.steps)
    parts.append(f"<ol class='ws-steps' style='font-size:12px;margin:6px 0 0 18px;padding:0'>{steps}</ol>")
    parts += [_raw_reply(st) for st in cand.steps if st.parse_error]
    return "".join(parts)


def not_inspected_html(trace: SearchTrace | None, index: int, start: float, end: float) -> str:
    """The note shown when the playhead is on a chunk no Inspect call saw."""
    span = f"[{fmt_t(start)} - {fmt_t(end)}]"
    chunk = next((c for c in (trace.chunks if trace else []) if c.index == index), None)
    if trace is None:
        why = "no search has run yet: press Run to check the top-K chunks."
    elif chunk is None or chunk.rank is None:
        why = f"it is not among the top {len(trace.chunks)} chunks retrieval ranked for this query."
    else:
        why = (f"retrieval ranked it #{chunk.rank}, but the search ended before reaching it "
               "(an earlier window was accepted or the run stopped).")
    return (f"<div class='ws-not-inspected' style='padding:6px;background:#f6f8fa;border-radius:6px'>"
            f"<b>Chunk {index + 1} {span}: not inspected</b> — {_E(why)}</div>")


# -- the result line --------------------------------------------------------------------------------
def result_markdown(trace: SearchTrace | None, *, iou: float | None = None,
                    partner: tuple[str, str, float | None] | None = None, theta: float = 0.5,
                    reason_shown: bool = False) -> str:
    """One line of result, one of calls; partner = (qid, query, its IoU from a run with the same
    backend and method in this session, else None). A model that was not reached (a transport
    failure: components/common/outcome.py) is said once, as "not reached: <reason>", here or, with
    `reason_shown`, on the tab's message line only; never as an unparsed reply."""
    if trace is None:
        return ""
    missed = outcome.transport_errors(trace.errors)
    bits = []
    if trace.text_only_baseline:
        bits.append(f"**{BASELINE_LABEL}**")
    if trace.stopped:
        bits.append("stopped")
    how = ("accepted" if trace.accepted_rank else "selected (fallback)" if trace.selected_rank and trace.method == "aws"
           else "chosen" if trace.selected_rank else "window")
    if trace.window:
        bits.append(f"{how} window [{trace.window[0]:.0f} s, {trace.window[1]:.0f} s]")
    if trace.prediction:
        what = "prediction" if is_scored_source(trace.source) else "fallback (not scored, IoU 0)"
        bits.append(f"{what} [{trace.prediction[0]:.1f} s, {trace.prediction[1]:.1f} s]")
    if trace.source == UNPARSED and missed and not trace.prediction:
        bits.append(f"source: `{outcome.NOT_REACHED}` (no reply came back)")
    elif trace.source == UNPARSED and trace.stopped and not trace.prediction \
            and not any("unparsed" in f for f in trace.fallbacks):
        bits.append("no answer came back")   # stopped before any reply: none was unparsed
    elif trace.source:
        bits.append(f"source: `{trace.source}` ({md_text(source_meaning(trace.source))})")
    if iou is not None:
        bits.append(f"IoU {iou:.2f}")
    if partner is not None:
        pq, ptext, piou = partner
        run = " · ".join(x for x in (f"`{trace.backend}`" if trace.backend else "", trace.method) if x)
        if piou is not None and iou is not None:
            ok = iou >= theta and piou >= theta
            bits.append(f"pair{f' ({run})' if run else ''}: {'both' if ok else 'not both'} ≥ {theta} "
                        f"(partner {pq} IoU {piou:.2f})")
        else:
            bits.append(f"partner {pq} (“{md_text(ptext)}”) not run yet{f' with {run}' if run else ''}")
    calls = trace.calls
    line2 = (f"Calls: {calls.get('decompose', 0)} decompose, {calls.get('inspect', 0)} inspect, "
             f"{calls.get('select', 0)} select, {calls.get('localize', 0)} localize"
             f"{', ' + str(calls['retries']) + ' retries' if calls.get('retries') else ''} · {trace.elapsed_s:.1f} s")
    shown = [e for e in trace.errors if e not in missed]
    if missed and not reason_shown:
        shown.insert(0, outcome.step_not_reached(missed[0]))
    errors = "".join(f"\n\n⚠ {md_text(e)}" for e in dict.fromkeys(shown))
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
        if trace.stopped:
            return "Stopped."
        if trace.errors and trace.window is None:
            return "**Failed**: no window was accepted or selected (the reason is above the player)."
        return "Done, with problems (listed in the result)." if trace.errors else "Done."
    if trace.window is not None and trace.prediction is None:
        return "Localizing inside the window…"
    inspected = sum(1 for c in trace.candidates if c.steps)
    if not trace.statements and not trace.candidates:
        return "Retrieving chunks and decomposing the query…"
    return f"Inspecting candidate {max(1, inspected)} of {k}…"


def query_choices(queries: Iterable) -> list[tuple[str, str]]:
    """Dropdown (label, qid) pairs: 'qid · contrast attribute · query'."""
    return [(f"{q.qid} · {q.contrast_attribute} · {q.query}", q.qid) for q in queries]


# -- the benchmark table ----------------------------------------------------------------------------
@lru_cache(maxsize=1)
def reference_rows() -> tuple[str, list[str], tuple[tuple[str, tuple[float, ...]], ...]]:
    """(data-set label, metric keys, ((method, values), ...)) of the paper's Table 3."""
    data = json.loads(REFERENCE_ROWS.read_text(encoding="utf-8"))
    return (data["data_set"], list(data["metric_keys"]),
            tuple((r["method"], tuple(r["values"])) for r in data["rows"]))


def bench_table(metrics: dict | None, *, data_set: str = "", method: str = "") -> list[list]:
    """The paper's Table 3 rows, then this run's row (when there is one), each labelled with its
    data set: [data set, method, P@0.3, P@0.5, P@0.7, R@1@0.3, R@1@0.5, R@1@0.7, mIoU]."""
    label, keys, rows = reference_rows()
    table = [[label, name, *values] for name, values in rows]
    if metrics is not None:
        table.append([data_set, method, *(round(float(metrics[k]), 1) for k in keys)])
    return table


def bench_interval_row(metrics: dict, *, data_set: str = "", method: str = "") -> list:
    """The row to show under this run's row of `bench_table`: each score's 95 % interval as
    "[low, high]" (percent, 1 decimal; "" without one), in BENCH_HEADERS' order."""
    _, keys, _ = reference_rows()
    cis = metrics.get("intervals") or {}
    cells = [f"[{cis[k]['low']:.1f}, {cis[k]['high']:.1f}]" if (cis.get(k) or {}).get("low") is not None
             else "" for k in keys]
    return [data_set, f"{method} 95 % interval", *cells]


def bench_notes(metrics: dict) -> str:
    """What the table's own row does not show: counts of fallbacks / unparsed, the diagnostics."""
    bits = [f"{metrics['num_queries']} queries, {metrics['num_pairs']} pairs"]
    counts = metrics.get("counts")
    if counts:  # fallbacks and unparsed items score 0: say how many there were
        bits.append(f"{counts['model']} model answers, {counts['fallback']} fallbacks (IoU 0), "
                    f"{counts['unparsed']} unparsed (IoU 0)")
    diag = metrics.get("diagnostics")
    if diag:
        bits.append(f"retrieval miss {diag['retrieval_miss']:.1f} %, oracle-localizer mIoU "
                    f"{diag['oracle_localizer_mIoU']:.1f}")
    cis = metrics.get("intervals") or {}
    shown = [k for k in ("mIoU", "R@1@0.5", "PairSuccess@0.5") if (cis.get(k) or {}).get("low") is not None]
    if shown:
        first = cis[shown[0]]
        bits.append("95 % intervals: " + ", ".join(
            f"{k} [{cis[k]['low']:.1f}, {cis[k]['high']:.1f}] over {cis[k]['units']} {cis[k]['unit']}"
            for k in shown) + f" (bootstrap, {first['resamples']} resamples, seed {first['seed']})")
    return " · ".join(bits)
