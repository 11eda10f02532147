"""What the Cloze tab shows of a model's answer beyond its letter (pure HTML; no gradio): its
reasoning collapsed with the token counts, both models' answers side by side with "compare
with" (the disagreement marked), and the leaderboard's rows that cannot be told apart.

A record is the released result record the solvers write (components/cloze/solvers.py: answer,
correct, raw, reason, reasoning, usage, error, truncated, attempts, backend, option_map)."""
from __future__ import annotations

import html

from components.cloze.pairs import ClozePair
from components.common import outcome
from components.common.reasoning_view import DIFFERS_BG, agree_badge, reasoning_html, side_label

_E = html.escape
RAW_SHOWN = 4000  # characters of a raw reply shown in the side-by-side view


def answer_html(rec: dict) -> str:
    """One model's reasoning for the question, collapsed with its token counts ('' when the
    model gave neither: the answer boxes above hold everything else)."""
    shown = reasoning_html(rec.get("reasoning"), rec.get("usage"))
    return f"<div class='cloze-reasoning'>{shown}</div>" if shown else ""


def verdict(rec: dict) -> str:
    """A record's outcome in words (plain text): correct / wrong, truncated, "not reached:
    <reason>" (no reply came back: components/common/outcome.py) or unparsed."""
    if rec.get("answer"):
        return "correct" if rec.get("correct") else "wrong"
    if rec.get("truncated"):
        return "truncated at max_tokens - recorded as truncated, not scored"
    if outcome.is_not_reached(rec.get("error")):
        return outcome.not_reached(rec.get("error")) + " - asked again by the next run"
    error = str(rec.get("error") or "unparsed")
    if error.startswith("media"):
        return f"no answer ({error}; recorded as an error)"
    return f"unparsed ({error.removeprefix('unparsed: ')}) - counted as unparsed, not guessed"


def _verdict(rec: dict) -> str:
    if rec.get("answer"):
        return "✓ correct" if rec.get("correct") else "✗ wrong"
    return _E(verdict(rec))


#: reason characters in the headline (the whole reason is in the Reason box below)
HEADLINE_REASON = 220


def headline_html(rec: dict, expected: str) -> str:
    """Run this question's answer in one line, where the question's buttons are (the first
    screen): the backend, the letter it picked with ✓ / ✗ and the expected letter, and the
    reason's start; a call that brought no answer says why, once."""
    backend = _E(str(rec.get("backend", "")))
    letter = rec.get("answer")
    if letter:
        mark = "✓" if rec.get("correct") else "✗"
        why = " ".join(str(rec.get("reason") or "").split())
        cut = why[:HEADLINE_REASON] + ("…" if len(why) > HEADLINE_REASON else "")
        return (f"<div class='cloze-model-answer' data-state='answered' data-letter='{_E(letter)}'>"
                f"<b>{backend}</b> chose <b class='cloze-model-letter'>{_E(letter)}</b> "
                f"<span class='cloze-model-mark'>{mark}</span> (expected {_E(expected)})"
                + (f" · <span class='cloze-model-reason' title='{_E(why)}'>{_E(cut)}</span>" if cut else "") + "</div>")
    state = "not-reached" if outcome.is_not_reached(rec.get("error"), truncated=bool(rec.get("truncated"))) else \
        "truncated" if rec.get("truncated") else "unparsed"
    return (f"<div class='cloze-model-answer' data-state='{state}'><b>{backend}</b>: "
            f"{_E(verdict(rec))} (expected {_E(expected)})</div>")


def _side(side: int, rec: dict, differs: bool) -> str:
    letter = rec.get("answer") or "—"
    clip = (rec.get("option_map") or {}).get(rec.get("answer") or "", "")
    raw = rec.get("raw") or "(empty reply)"
    cut = f"\n… ({len(raw) - RAW_SHOWN} more characters)" if len(raw) > RAW_SHOWN else ""
    mark = f"background:{DIFFERS_BG};" if differs else ""
    return (f"<div class='cloze-pair-side' data-side='{side + 1}' data-letter='{_E(letter)}' "
            f"style='{mark}border:1px solid #d0d7de;border-radius:6px;padding:6px 8px;min-width:0'>"
            f"<div style='font-size:13px'>{side_label(side, str(rec.get('backend', '')))}</div>"
            f"<div class='cloze-pair-letter' style='font-size:22px;font-weight:bold'>{_E(letter)}"
            f"<span style='font-size:13px;font-weight:normal'>{' = ' + _E(clip) if clip else ''} · "
            f"{_verdict(rec)} · attempts {_E(str(rec.get('attempts', '-')))}</span></div>"
            f"<pre class='cloze-pair-raw' style='white-space:pre-wrap;word-break:break-word;max-height:140px;"
            f"overflow:auto;margin:4px 0;font-size:12px'>{_E(raw[:RAW_SHOWN] + cut)}</pre>"
            f"{reasoning_html(rec.get('reasoning'), rec.get('usage'))}</div>")


def pair_html(pair: ClozePair) -> str:
    """Both models' choices and raw replies side by side, the disagreement named and marked."""
    line = agree_badge(pair.agree) + (f" · {_E(pair.disagreement)}" if pair.disagreement else
                                      f" · both chose {_E(str(pair.first.get('answer') or 'nothing'))}")
    same = "" if pair.same_request else (" · <span style='color:#9a6700'>the two requests differed (a "
                                         "server refused the frame count)</span>")
    return (f"<div class='cloze-pair' data-agree='{int(pair.agree)}'><div class='cloze-pair-line' "
            f"style='font-size:13px;margin:4px 0'>{line}{same}</div><div style='display:grid;"
            "grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:8px'>"
            f"{_side(0, pair.first, not pair.agree)}{_side(1, pair.second, not pair.agree)}</div></div>")


