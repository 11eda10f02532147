"""What Window search shows of a model's reasoning and, with "compare with", of the second model
(pure HTML; no gradio): both checklists of each inspected window side by side (the statements
the two judged differently marked), both accepted windows and predictions, the disagreements,
and each step's reasoning collapsed with its token counts.

`checklist(trace, rank)` and `calls_html(trace)` are what the handlers show: a trace with no
compared backend (`trace.partner_backend` empty) looks exactly as it did with one model, plus
its reasoning where the model gave some. The timeline's second-model bars are timeline.py's.
"""
from __future__ import annotations

import html

from components.common.reasoning_view import DIFFERS_BG, agree_badge, reasoning_html, side_label
from components.window_search import view
from components.window_search.metrics import temporal_iou
from components.window_search.pairs import Checklist, SearchPair, StepPair, search_pair
from components.window_search.timeline import fmt_t
from components.window_search.types import CandidateTrace, InspectStep, SearchTrace, Window

_E = html.escape
ROLES = (("decompose", "Decompose"), ("select", "Select"), ("localize", "Localize"))
HOW = {"emitted": "the first window it would have accepted (EMIT)",
       "selected": "its Select answer among the rejected windows", "": "none"}


def checklist(trace: SearchTrace | None, rank: int | None) -> str:
    """The checklist of window `rank`: both models' side by side when the search was compared,
    else the one model's (view.checklist_html)."""
    pair = search_pair(trace) if trace is not None else None
    cand = view.candidate(trace, rank) if trace is not None else None
    if pair is None or cand is None or not cand.steps:
        return view.checklist_html(trace, rank)
    return pair_checklist_html(trace, pair, cand)


def _span(w: Window | None) -> str:
    return "none" if w is None else f"[{fmt_t(w[0])} - {fmt_t(w[1])}]"


def _decision_text(c: Checklist) -> str:
    if c.decision is None:
        return "<i>not read</i>"
    conf = f" · conf {c.confidence:.2f}" if isinstance(c.confidence, (int, float)) else ""
    return f"<b>{_E(c.decision)}</b>{conf}"


def _raw(side: int, c: Checklist) -> str:
    if c.decision is not None:
        return ""
    raw = c.raw or "(empty reply)"
    cut = f"\n… ({len(raw) - view.RAW_SHOWN} more characters)" if len(raw) > view.RAW_SHOWN else ""
    return (f"<div class='ws-unparsed' style='margin:4px 0;padding:4px 6px;background:#fff8c5;"
            f"border-radius:4px'>{side_label(side, c.backend)}: the reply was not read "
            f"({_E(c.error or 'unparsed')}), so it counts as REJECT. Its raw reply:<pre class='ws-raw' "
            f"style='white-space:pre-wrap;word-break:break-word;max-height:120px;overflow:auto;margin:4px 0 0'>"
            f"{_E(raw[:view.RAW_SHOWN] + cut)}</pre></div>")


def _rows(texts: dict[str, str], pair: StepPair) -> list[str]:
    first = {c.sid: c for c in pair.first.checks}
    second = {c.sid: c for c in pair.second.checks}
    differ = set(pair.differing_statements)
    sids = list(dict.fromkeys([*first, *second]))
    rows = []
    for sid in sids:
        a, b = first.get(sid), second.get(sid)
        marked = sid in differ
        style = f" style='background:{DIFFERS_BG}'" if marked else ""
        notes = "<br>".join(f"{mark} {_E(c.note)}" for mark, c in (("①", a), ("②", b)) if c is not None and c.note)
        # the evidence under the statement: two verdict columns leave no room for a third column
        rows.append(f"<tr class='ws-stmt{' ws-differs' if marked else ''}' data-sid='{_E(sid)}'{style}>"
                    f"<td><b>{_E(sid)}</b> {_E(texts.get(sid, ''))}{' <b>≠</b>' if marked else ''}"
                    f"<div class='ws-note' style='font-size:11px;color:#57606a'>{notes}</div></td>"
                    f"<td>{view._chip(a.status) if a else '—'}</td><td>{view._chip(b.status) if b else '—'}</td></tr>")
    return rows


PAIR_HEAD = ("<table class='ws-checklist ws-pair-checklist' style='width:100%;table-layout:fixed;"
             "border-collapse:collapse;font-size:13px;overflow-wrap:anywhere'><colgroup><col>"
             "<col style='width:84px'><col style='width:84px'></colgroup><thead><tr style='text-align:left;"
             "border-bottom:2px solid #d0d7de'><th>statement · evidence</th><th>①</th><th>②</th></tr>"
             "</thead><tbody>")


def _step_block(trace: SearchTrace, k: int, step: InspectStep, pair: StepPair | None, texts: dict[str, str]) -> str:
    label = "before expansion" if k == 0 else f"after expansion {k}"
    head = f"Call {k + 1} ({label}) {_span(step.window)}"
    if pair is None:  # the compared model gave no answer to this call (the run stopped first)
        return (f"<div class='ws-pair-step' data-n='{step.n}'><div style='font-weight:bold;margin-top:6px'>{head}"
                f"</div><div>① {view._decision(step)} · ② no answer recorded</div>"
                f"{reasoning_html(step.reasoning, step.usage, step='①')}</div>")
    partner = step.partner or {}
    same = "" if pair.same_request else (" · <span style='color:#9a6700'>the two requests differed "
                                         "(a server refused the frame count)</span>")
    parts = [f"<div class='ws-pair-step' data-n='{step.n}' data-agree='{int(pair.agree)}'>"
             f"<div style='font-weight:bold;margin-top:6px'>{head} · ① {_decision_text(pair.first)} · "
             f"② {_decision_text(pair.second)} · {agree_badge(pair.agree)}{same}</div>",
             PAIR_HEAD, *_rows(texts, pair), "</tbody></table>",
             _raw(0, pair.first), _raw(1, pair.second),
             reasoning_html(pair.first.reasoning, step.usage, step="①"),
             reasoning_html(pair.second.reasoning, partner.get("usage"), step="②"), "</div>"]
    return "".join(parts)


def pair_checklist_html(trace: SearchTrace, pair: SearchPair, cand: CandidateTrace) -> str:
    """Window `cand` as both models judged it: one block per Inspect call (before and after each
    expansion), each statement's verdict by each model, the differing ones marked."""
    texts = {s.sid: s.text for s in trace.statements}
    by_call = {(p.rank, p.n): p for p in pair.steps}
    # a no-model method is sent no request: it checks the same windows and checklist
    second_does = ("checks the same windows" if pair.second_backend.startswith("baseline")
                   else "is sent the same requests")
    legend = (f"<div class='ws-pair-legend' style='font-size:12px;color:#57606a'>{side_label(0, pair.first_backend)}"
              f" steers the search · {side_label(1, pair.second_backend)} {second_does}</div>")
    blocks = [_step_block(trace, k, st, by_call.get((cand.rank, st.n)), texts) for k, st in enumerate(cand.steps)]
    return view._header(trace, cand) + legend + "".join(blocks)


def _iou(w: Window | None, trace: SearchTrace) -> str:
    if w is None or trace.ground_truth is None:
        return ""
    return f" · IoU {temporal_iou(w, trace.ground_truth):.2f}"


def _role_reasonings(trace: SearchTrace, partner: bool) -> list[str]:
    out = []
    for role, name in ROLES:
        first = reasoning_html(getattr(trace, f"{role}_reasoning", ""), (trace.usage or {}).get(role),
                               step=f"{'① ' if partner else ''}{name}")
        second = ""
        if partner and role in trace.partner:
            reply = trace.partner.get(role) or {}
            second = reasoning_html(reply.get("reasoning", ""), reply.get("usage"), step=f"② {name}")
        if first or second:
            out.append(f"<div class='ws-role-reasoning' data-role='{role}'>{first}{second}</div>")
    return out


def calls_html(trace: SearchTrace | None) -> str:
    """Under the result: with a compared backend, both accepted windows and predictions and the
    list of disagreements; then each role's reasoning (Decompose, Select, Localize), collapsed
    with its token counts. '' when there is nothing to show (one model, no reasoning)."""
    if trace is None:
        return ""
    pair = search_pair(trace)
    if pair is None:
        reasonings = _role_reasonings(trace, partner=False)
        return f"<div class='ws-calls'>{''.join(reasonings)}</div>" if reasonings else ""
    lines = pair.disagreements
    verdict = (agree_badge(True) + " on every call" if not lines else
               agree_badge(False) + f" in {len(lines)} place{'s' if len(lines) != 1 else ''}")
    parts = [f"<div class='ws-calls ws-pair-summary' style='font-size:13px'><div><b>Compared</b>: "
             f"{side_label(0, pair.first_backend)} and {side_label(1, pair.second_backend)} · {verdict}</div>",
             f"<div class='ws-pair-windows'>accepted window: ① {_span(pair.first_window)} · ② "
             f"{_span(pair.second_window)} ({_E(HOW.get(pair.second_window_how, pair.second_window_how))})</div>",
             f"<div class='ws-pair-predictions'>prediction: ① {_span(pair.first_prediction)}"
             f"{_iou(pair.first_prediction, trace)} · ② {_span(pair.second_prediction)}"
             f"{_iou(pair.second_prediction, trace)}</div>"]
    if lines:
        parts.append("<ul class='ws-disagreements' style='margin:4px 0 4px 18px;padding:0'>"
                     + "".join(f"<li>{_E(line)}</li>" for line in lines) + "</ul>")
    if pair.second_statements and pair.second_statements != pair.first_statements:
        parts.append("<div style='font-size:12px;color:#57606a'>② would have split the query into: "
                     + "; ".join(_E(s) for s in pair.second_statements) + "</div>")
    parts += [f"<div style='color:#9a6700'>{_E(note)}</div>" for note in pair.notes]
    parts += _role_reasonings(trace, partner=True)
    parts.append("</div>")
    return "".join(parts)

