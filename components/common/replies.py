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
# [^<>]* (not [^>]*): an opener never scans past the next tag, so many openers stay linear
_OPEN = re.compile(rf"<(?:{_TAGS})\b[^<>]*>", re.IGNORECASE)
_OPEN_TAG = re.compile(rf"<({_TAGS})\b[^<>]*>", re.IGNORECASE)
_CLOSE_TAG = {tag: re.compile(rf"</{tag}\s*>", re.IGNORECASE) for tag in _TAGS.split("|")}
_STRAY_CLOSE = re.compile(rf"^.*?</(?:{_TAGS})\s*>", re.IGNORECASE | re.DOTALL)


def _blocks(text: str) -> tuple[list[tuple[int, int]], bool]:
    """(start, end) of every closed reasoning block, in order, and whether one never closed.
    One left-to-right scan (each opener looks for its own closing tag once): linear, where a
    backreferencing regex is quadratic on many unclosed openers."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        opened = _OPEN_TAG.search(text, pos)
        if opened is None:
            return spans, False
        closed = _CLOSE_TAG[opened.group(1).lower()].search(text, opened.end())
        if closed is None:
            return spans, True
        spans.append((opened.start(), closed.end()))
        pos = closed.end()


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    parts, pos = [], 0
    for start, end in spans:
        parts.append(text[pos:start])
        parts.append(" ")
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


class ReplyRefused(ValueError):
    """A reply no parser should read (too long, or only unfinished reasoning)."""


def answer_part(text: str | None, *, max_chars: int = MAX_REPLY_CHARS) -> str:
    """The reply without its reasoning; raises ReplyRefused for an oversized reply or one whose
    reasoning never closed."""
    text = text or ""
    if len(text) > max_chars:
        raise ReplyRefused(f"reply of {len(text):,} characters is longer than the {max_chars:,} "
                           "a parser reads")
    spans, _unclosed = _blocks(text)
    body = _without(text, spans)
    # a template that opens <think> in the prompt leaves only the closing tag in the reply
    body = _STRAY_CLOSE.sub(" ", body, count=1) if not _OPEN.search(body) else body
    opened = _OPEN.search(body)
    if opened:
        raise ReplyRefused("the reply stops inside unfinished reasoning (<think> never closed)")
    return body.strip()


def reasoning_part(text: str | None) -> str:
    """The reasoning blocks of a reply, joined (kept in records beside the raw reply)."""
    text = text or ""
    return "\n".join(text[start:end] for start, end in _blocks(text)[0])
