"""How a model's Cloze reply is read, as in the released evaluation.

`parse_answer` reads a reply exactly as the released evaluation's parser does, on every input
(`strict=False`: the API evaluator's; `strict=True`: the vLLM evaluator's stricter one), so scores
stay comparable with the paper. It takes the reply as given: the reasoning rule (closed
<think> blocks removed, unclosed or oversized replies refused; components.common.replies) is
applied by the solver BEFORE this parser, never inside it. Do not merge it with the shared reply
and interval parsers.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from components.cloze.questions import LETTERS
from components.common.replies import ReplyRefused, answer_part


@dataclass(frozen=True)
class ParsedAnswer:
    letter: str | None   # A-D, or None when unparsed
    reason: str
    why: str = ""        # why parsing failed ("" when it worked)

    @property
    def ok(self) -> bool:
        return self.letter is not None


class _Abort(Exception):
    """The released parser raised (it is called inside a try that retries): the reply is unparsed."""


def _released_fence(text: str) -> str:
    """The released fence rule on a stripped reply: when it starts with ```, drop its first line
    and, if the last line is exactly ``` (after strip), drop that too."""
    if not text.startswith("```"):
        return text
    lines = text.split("\n")[1:]
    if lines and lines[-1].strip() == "```":
        lines = lines[:-1]
    return "\n".join(lines).strip()


def _loads(text: str):
    """json.loads; None for a JSONDecodeError (the released code tries the next candidate), _Abort
    for any other error (e.g. RecursionError, too many digits), which ended the released parse."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None
    except (ValueError, RecursionError) as exc:
        raise _Abort(f"the released parser fails on this reply ({type(exc).__name__})") from None


def _braced(text: str) -> str | None:
    first, last = text.find("{"), text.rfind("}")
    return text[first:last + 1] if first != -1 and last > first else None


def _answer_of(obj) -> tuple[str, Any]:
    """The released (answer or "").strip().upper() and (reason or ""); _Abort where it raised."""
    if not isinstance(obj, dict):
        raise _Abort("the reply's JSON is not an object")
    answer = obj.get("answer") or ""
    if not isinstance(answer, str):
        raise _Abort(f"'answer' is {type(answer).__name__}, not a string")
    return answer.strip().upper(), obj.get("reason") or ""


def _as_text(reason: Any) -> str:
    return reason if isinstance(reason, str) else json.dumps(reason, ensure_ascii=False)


def _parse_api(body: str) -> ParsedAnswer:
    """The API evaluator: whole reply as JSON, then the first "{" .. last "}"."""
    why = "no JSON object in the response"
    for candidate in (body, _braced(body)):
        if candidate is None:
            continue
        obj = _loads(candidate)
        if obj is None:
            continue
        letter, reason = _answer_of(obj)
        if letter in LETTERS:
            return ParsedAnswer(letter, _as_text(reason))
        why = f"answer {obj.get('answer')!r} is not exactly one of A-D"
    return ParsedAnswer(None, "", why)


_HTML_PREFIXES = ("<!doctype", "<html")


def _strict_letter(value) -> str | None:
    """The vLLM evaluator's answer rule: strip, upper, unwrap "<X>", exactly one of A-D."""
    if not isinstance(value, str):
        return None
    s = value.strip().upper()
    if len(s) >= 3 and s.startswith("<") and s.endswith(">"):
        s = s[1:-1].strip()
    if len(re.findall(r"[ABCD]", s)) != 1:
        return None
    return s if re.fullmatch(r"[ABCD]", s) else None


def _parse_strict(body: str) -> ParsedAnswer:
    """The vLLM evaluator: an object with 'answer' and a string 'reason', from the whole reply or
    the first "{" .. last "}"; HTML error pages are refused."""
    braced = _braced(body)
    for candidate in (body, braced if braced != body else None):
        if candidate is None:
            continue
        obj = _loads(candidate)
        if isinstance(obj, dict) and "answer" in obj and isinstance(obj.get("reason"), str):
            letter = _strict_letter(obj["answer"])
            if letter is None:
                return ParsedAnswer(None, "", f"answer {obj['answer']!r} is not exactly one of A-D")
            return ParsedAnswer(letter, obj["reason"])
    return ParsedAnswer(None, "", "no JSON object with 'answer' and a string 'reason'")


def parse_answer(text: str | None, *, strict: bool = False) -> ParsedAnswer:
    """The released parser, letter for letter: strip; a leading ``` line (and a closing ``` line)
    removed; the whole reply as JSON, else the first "{" .. last "}"; the answer is
    (answer or "").strip().upper() and must be exactly one of A-D. `strict`: the vLLM evaluator's
    rule (unwraps "<A>", needs a string 'reason'). Never guesses a letter; never raises."""
    body = (text or "").strip()
    if not body:
        return ParsedAnswer(None, "", "empty response")
    if strict and len(body) >= 50 and body[:500].lower().startswith(_HTML_PREFIXES):
        return ParsedAnswer(None, "", "the response is an HTML page")
    body = _released_fence(body)
    try:
        return _parse_strict(body) if strict else _parse_api(body)
    except _Abort as exc:
        return ParsedAnswer(None, "", str(exc))


def unwrap_letter(value: str) -> str:
    s = value.strip().upper()
    if len(s) >= 2 and s[0] == "<" and s[-1] == ">":
        s = s[1:-1].strip()
    return s


def normalise_recorded_answer(value) -> str | None:
    """The released analysis' validity rule: strip, upper-case, unwrap "<X>", exactly A-D."""
    if not isinstance(value, str):
        return None
    s = unwrap_letter(value)
    return s if s in LETTERS else None


def read_reply(text: str, *, strict: bool = False) -> ParsedAnswer:
    """A reply as the solver reads it: the shared reasoning/size rule, then the released parser
    on what is left. Never raises; never guesses."""
    try:
        body = answer_part(text)
    except ReplyRefused as exc:
        return ParsedAnswer(None, "", str(exc))
    return parse_answer(body, strict=strict)
