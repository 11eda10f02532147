"""One rule for every reply parser: what part of a model's reply is its answer.

- Reasoning is kept in the record, never parsed as the answer: closed `<think>...</think>` (and
  `<thinking>`, `<reasoning>`, `<thought>`) blocks are removed. Backends already move them to
  `GenerationResult.reasoning` (backends.reasoning); this rule also covers text from elsewhere.
  An unclosed opening tag means the model never got past its reasoning, so there is no answer
  (the reply counts as unparsed).
- A reply longer than `MAX_REPLY_CHARS` is refused (unparsed) instead of scanned: every parser stays
  linear and bounded, whatever a server sends.
"""
from __future__ import annotations

from backends.reasoning import OPEN_TAG, STRAY_CLOSE, reasoning_blocks, without_blocks

#: longest reply any parser reads (a 240-frame Inspect reply is a few kB; 64 kB leaves room for
#: verbose models and refuses runaway generations)
MAX_REPLY_CHARS = 65_536


class ReplyRefused(ValueError):
    """A reply no parser should read (too long, or only unfinished reasoning)."""


def answer_part(text: str | None, *, max_chars: int = MAX_REPLY_CHARS) -> str:
    """The reply without its reasoning; raises ReplyRefused for an oversized reply or one whose
    reasoning never closed."""
    text = text or ""
    if len(text) > max_chars:
        raise ReplyRefused(f"reply of {len(text):,} characters is longer than the {max_chars:,} "
                           "a parser reads")
    spans, _unclosed = reasoning_blocks(text)
    body = without_blocks(text, spans)
    # a template that opens <think> in the prompt leaves only the closing tag in the reply
    body = STRAY_CLOSE.sub(" ", body, count=1) if not OPEN_TAG.search(body) else body
    opened = OPEN_TAG.search(body)
    if opened:
        raise ReplyRefused("the reply stops inside unfinished reasoning (<think> never closed)")
    return body.strip()

