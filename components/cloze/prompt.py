"""The request a model sees and how its answer is read, as in the released evaluation.

Content order: prompt text, "[BEGINNING]" + 16 images, "[END]" + 16 images, then
"[Candidate A]" + 16 images ... "[Candidate D]" + 16 images (96 images); temperature 0.

`parse_answer` reproduces the released evaluation's parser letter for letter (fence, JSON, first
"{" to last "}", exactly one of A-D), so scores stay comparable with the paper. It is deliberately
separate from the shared reply and interval parsers (components.common.intervals): do not merge it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Sequence

from components.cloze.questions import LETTERS

if TYPE_CHECKING:
    from PIL import Image

PROMPT_PATH = Path(__file__).resolve().parents[2] / "assets" / "prompts" / "cloze_eval.txt"
MAX_HEIGHT = 360
JPEG_QUALITY = 85


@lru_cache(maxsize=1)
def eval_prompt() -> str:
    """Appendix G.2 prompt (released form: the PDF's line breaks inside sentences removed)."""
    return PROMPT_PATH.read_text(encoding="utf-8").strip()


def request_content(prompt: str, beginning: Sequence[Image.Image], end: Sequence[Image.Image],
                    candidates: Sequence[Sequence[Image.Image]]) -> list:
    """Interleaved text/images in the upstream order."""
    content: list = [prompt, "[BEGINNING]", *beginning, "[END]", *end]
    for letter, frames in zip(LETTERS, candidates):
        content.append(f"[Candidate {letter}]")
        content.extend(frames)
    return content


@dataclass(frozen=True)
class ParsedAnswer:
    letter: str | None   # A-D, or None when unparsed
    reason: str
    why: str = ""        # why parsing failed ("" when it worked)

    @property
    def ok(self) -> bool:
        return self.letter is not None


def _strip_fence(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text[3:]
        newline = text.find("\n")
        # drop a language tag such as ```json
        if newline != -1 and re.fullmatch(r"[A-Za-z0-9_-]*", text[:newline].strip()):
            text = text[newline + 1:]
    if text.endswith("```"):
        text = text[:-3]
    return text.strip()


def _load_object(text: str):
    body = _strip_fence(text)
    try:
        return json.loads(body)
    except (json.JSONDecodeError, ValueError, RecursionError):
        pass
    first, last = body.find("{"), body.rfind("}")
    if first == -1 or last <= first:
        return None
    try:
        return json.loads(body[first:last + 1])
    except (json.JSONDecodeError, ValueError, RecursionError):
        return None


def unwrap_letter(value: str) -> str:
    s = value.strip().upper()
    if len(s) >= 2 and s[0] == "<" and s[-1] == ">":
        s = s[1:-1].strip()
    return s


def parse_answer(text: str | None, *, strict: bool = False) -> ParsedAnswer:
    """Upstream parsing: strip a ``` fence; JSON, else the first "{" .. last "}"; the answer is
    answer.strip().upper() and must be exactly one of A-D. `strict` also unwraps "<A>" and
    requires a string `reason`. Never guesses a letter."""
    if not text or not text.strip():
        return ParsedAnswer(None, "", "empty response")
    obj = _load_object(text)
    if not isinstance(obj, dict):
        return ParsedAnswer(None, "", "no JSON object in the response")
    answer = obj.get("answer")
    reason = obj.get("reason")
    if not isinstance(answer, str):
        return ParsedAnswer(None, str(reason or ""), "JSON has no string 'answer'")
    letter = unwrap_letter(answer) if strict else answer.strip().upper()
    if letter not in LETTERS:
        return ParsedAnswer(None, str(reason or ""), f"answer {answer!r} is not exactly one of A-D")
    if strict and not isinstance(reason, str):
        return ParsedAnswer(None, "", "JSON has no string 'reason'")
    return ParsedAnswer(letter, reason if isinstance(reason, str) else "")


def normalise_recorded_answer(value) -> str | None:
    """The released analysis' validity rule: strip, upper-case, unwrap "<X>", exactly A-D."""
    if not isinstance(value, str):
        return None
    s = unwrap_letter(value)
    return s if s in LETTERS else None
