"""A model's reasoning, kept apart from its answer (docs/decisions.md, "Backends").

Reasoning reaches the app in three ways, and every backend turns all three into
`GenerationResult.reasoning`, leaving only the answer in `GenerationResult.text`:
- a server field beside the answer: `reasoning_content` (vLLM's and SGLang's reasoning parsers,
  DeepSeek) or `reasoning` (newer vLLM, OpenRouter);
- a closed block in the text itself: `<think>...</think>` (Qwen3, DeepSeek-R1 without a reasoning
  parser), `<thinking>`, `<reasoning>`, or `<thought>` (Gemini's thought summaries through its
  OpenAI-compatible endpoint when `include_thoughts` is on);
- a reply whose chat template opened `<think>` in the prompt: the reply holds only the closing
  tag, and everything before it is reasoning.

A block that never closed is left in the text: the model never got past its reasoning, and every
parser refuses such a reply (components.common.replies), so no half-thought is read as an answer.
The scan is one pass from left to right (each opening tag looks for its own closing tag once).
"""
from __future__ import annotations

import re

TAGS = ("think", "thinking", "reasoning", "thought")
_ALTERNATION = "|".join(TAGS)
# [^<>]* (not [^>]*): an opener never scans past the next tag, so many openers stay linear
OPEN_TAG = re.compile(rf"<({_ALTERNATION})\b[^<>]*>", re.IGNORECASE)
_CLOSE_TAG = {tag: re.compile(rf"</{tag}\s*>", re.IGNORECASE) for tag in TAGS}
STRAY_CLOSE = re.compile(rf"^(.*?)</(?:{_ALTERNATION})\s*>", re.IGNORECASE | re.DOTALL)


def reasoning_blocks(text: str) -> tuple[list[tuple[int, int, int, int]], bool]:
    """Every closed reasoning block as (start, inner start, inner end, end), in order, and whether
    a block opened after them never closed."""
    spans: list[tuple[int, int, int, int]] = []
    pos = 0
    while True:
        opened = OPEN_TAG.search(text, pos)
        if opened is None:
            return spans, False
        closed = _CLOSE_TAG[opened.group(1).lower()].search(text, opened.end())
        if closed is None:
            return spans, True
        spans.append((opened.start(), opened.end(), closed.start(), closed.end()))
        pos = closed.end()


def without_blocks(text: str, spans: list[tuple[int, int, int, int]]) -> str:
    """`text` with each block replaced by one space (words either side stay apart)."""
    parts, pos = [], 0
    for start, _inner_start, _inner_end, end in spans:
        parts.append(text[pos:start])
        parts.append(" ")
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def split_reasoning(text: str | None) -> tuple[str, str]:
    """(answer, reasoning) of a reply's text. A text without reasoning comes back unchanged, byte
    for byte, with reasoning ''."""
    text = text or ""
    spans, _unclosed = reasoning_blocks(text)
    inner = [text[a:b].strip() for _s, a, b, _e in spans]
    answer = without_blocks(text, spans) if spans else text
    if not OPEN_TAG.search(answer):
        stray = STRAY_CLOSE.match(answer)
        if stray is not None:  # the template opened <think> in the prompt
            inner.insert(0, stray.group(1).strip())
            answer = answer[stray.end():]
            spans = spans or [(0, 0, 0, 0)]
    if not spans:
        return text, ""
    return answer.strip(), join_reasoning(*inner)


def join_reasoning(*parts: str | None) -> str:
    """The non-empty parts, in order, one blank line apart."""
    return "\n\n".join(p.strip() for p in parts if p and p.strip())
