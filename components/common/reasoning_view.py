"""A model's reasoning and token counts as the tabs show them (pure HTML; no gradio): collapsed
beside the step it belongs to, never mixed into the answer, and the marks that tell the two
models of a "compare with" session apart.

`usage` is a reply's token counts as traces and records keep them (backends.base.Usage.as_dict:
prompt_tokens, completion_tokens and, when the server counted them, reasoning_tokens)."""
from __future__ import annotations

import html
from collections.abc import Mapping

#: the session's model (its answers steer) and the model it is compared with, in every tab
SIDE_MARKS = ("①", "②")
#: characters of a reasoning shown (a long one is cut, saying how much was left out)
REASONING_SHOWN = 20_000
#: the background a place where the two models disagree is marked with
DIFFERS_BG = "#fff1c2"

_E = html.escape


def side_label(side: int, backend: str) -> str:
    """'① openai:model-a' (side 0: the session's model, 1: the compared one), HTML-escaped; a
    no-model method says so: '① method baseline:edge1'."""
    kind = "<span class='vb-kind'>method</span> " if (backend or "").startswith("baseline") else ""
    return f"<span class='vb-side vb-side-{side + 1}'>{SIDE_MARKS[side]}</span> {kind}{_E(backend or '?')}"


def _count(usage: Mapping, key: str) -> int | None:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_text(usage: Mapping | None) -> str:
    """'tokens: 1,204 prompt · 96 out (80 reasoning, 16 answer)'; '' without counts. The answer's
    share is given only when the server counted the reasoning tokens."""
    if not isinstance(usage, Mapping):
        return ""
    prompt, out = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
    thought = _count(usage, "reasoning_tokens")
    bits = []
    if prompt is not None:
        bits.append(f"{prompt:,} prompt")
    if out is not None:
        split = f" ({thought:,} reasoning, {max(0, out - thought):,} answer)" if thought is not None else ""
        bits.append(f"{out:,} out{split}")
    elif thought is not None:
        bits.append(f"{thought:,} reasoning")
    return "tokens: " + " · ".join(bits) if bits else ""


def reasoning_html(reasoning: str | None, usage: Mapping | None = None, *, step: str = "") -> str:
    """The reasoning of `step` (e.g. "② Decompose"; "" beside the step itself) collapsed, its
    summary line giving the token counts; only the counts, as a muted note, when there is no
    reasoning; '' when there is neither."""
    counts = usage_text(usage)
    text = (reasoning or "").strip()
    if not text:
        if not counts:
            return ""
        return (f"<span class='vb-tokens' style='color:#57606a;font-size:11px'>"
                f"{_E(step + ' · ' if step else '')}{_E(counts)}</span>")
    cut = (f"\n… ({len(text) - REASONING_SHOWN:,} more characters)" if len(text) > REASONING_SHOWN else "")
    label = f"{step} reasoning" if step else "reasoning"
    summary = _E(label) + (f" · {_E(counts)}" if counts else "")
    return (f"<details class='vb-reasoning' style='margin:2px 0;font-size:12px'><summary "
            f"style='cursor:pointer;color:#57606a'>{summary}</summary><pre class='vb-reasoning-text' "
            f"style='white-space:pre-wrap;word-break:break-word;max-height:220px;overflow:auto;margin:2px 0;"
            f"padding:4px 6px;background:#f6f8fa;border-radius:4px'>{_E(text[:REASONING_SHOWN] + cut)}</pre>"
            "</details>")


def agree_badge(agree: bool) -> str:
    """'= agree' or a marked '≠ differ' (the class names let a page or a test find them)."""
    if agree:
        return "<span class='vb-agree' style='color:#1a7f37;font-weight:bold'>= agree</span>"
    return (f"<span class='vb-differs' style='background:{DIFFERS_BG};padding:0 4px;border-radius:3px;"
            "font-weight:bold;color:#9a6700'>≠ differ</span>")
