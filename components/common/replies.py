"""One rule for every reply parser: what part of a model's reply is its answer.

- Reasoning is kept in the record, never parsed as the answer: closed `<think>...</think>` (and
  `<thinking>`, `<reasoning>`) blocks are removed; an unclosed opening tag means the model never got
  past its reasoning, so there is no answer (the reply counts as unparsed).
- A reply longer than `MAX_REPLY_CHARS` is refused (unparsed) instead of scanned: every parser stays
  linear and bounded, whatever a server sends.
"""
from __future__ import annotations

import re

#: longest reply any parser reads (a 240-frame Inspect reply is a few kB; 64 kB leaves room for
#: verbose models and refuses runaway generations)
MAX_REPLY_CHARS = 65_536

_TAGS = "think|thinking|reasoning"
_CLOSED = re.compile(rf"<({_TAGS})\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_OPEN = re.compile(rf"<(?:{_TAGS})\b[^>]*>", re.IGNORECASE)
_STRAY_CLOSE = re.compile(rf"^.*?</(?:{_TAGS})\s*>", re.IGNORECASE | re.DOTALL)


class ReplyRefused(ValueError):
    """A reply no parser should read (too long, or only unfinished reasoning)."""


def answer_part(text: str | None, *, max_chars: int = MAX_REPLY_CHARS) -> str:
    """The reply without its reasoning; raises ReplyRefused for an oversized reply or one whose
    reasoning never closed."""
    text = text or ""
    if len(text) > max_chars:
        raise ReplyRefused(f"reply of {len(text):,} characters is longer than the {max_chars:,} "
                           "a parser reads")
    body = _CLOSED.sub(" ", text)
    # a template that opens <think> in the prompt leaves only the closing tag in the reply
    body = _STRAY_CLOSE.sub(" ", body, count=1) if not _OPEN.search(body) else body
    opened = _OPEN.search(body)
    if opened:
        raise ReplyRefused("the reply stops inside unfinished reasoning (<think> never closed)")
    return body.strip()


def reasoning_part(text: str | None) -> str:
    """The reasoning blocks of a reply, joined (kept in records beside the raw reply)."""
    return "\n".join(m.group(0) for m in _CLOSED.finditer(text or ""))
