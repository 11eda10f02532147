"""Deterministic corpora of malformed / adversarial model answers (seeded mutations + hand-written).

`corpus(valid, seed)` returns >= 200 strings: the hand-written nasty cases below, every valid
answer wrapped in noise, and seeded random mutations of the valid answers.
"""
from __future__ import annotations

import random

MB = 1_000_000

NASTY: list[str] = [
    "", " ", "\n\t  \r\n", "\x00", "\x00" * 64, "A\x00", '{"answer": "A\x00"}',
    "None", "none", "N/A", "n/a", "null", "NULL", "undefined", "nan", "NaN", "-0", "0", "1e309",
    "-1e309", "Infinity", "-Infinity", "1e-400", "9" * 400, "-" * 50, ".", "...", "\u2026",
    "<A>", "<a>", "< B >", "A or B", "A/B", "A, B", "AB", "a", "b.", "(C)", "Answer: D",
    "The answer is A", "I cannot answer.", "I'm sorry, I can't help with that.",
    "{}", "[]", "{{}}", "[[]]", "{", "}", "[", "]", "{[", "]}", '{"', '"}', "{{{{", "}}}}",
    '{"answer": 1}', '{"answer": ["A"]}', '{"answer": null}', '{"answer": true}',
    '{"answer": {"A": 1}}', '{"answer": 1e309}', '{"answer": NaN}', '{"answer": -0}',
    '{"answer": "A"', '{"answer": "A", "reason": "trunc', '{"answer": "A"}{"answer": "B"}',
    '{"answer": "E"}', '{"answer": "AA"}', '{"answer": ""}', '{"answer": " "}',
    '{"answer": "<A>", "reason": "x"}', '{"answer": "a", "reason": "x"}',
    '{"answer": "A or B", "reason": "x"}', '{"answer": "\u0410"}',  # Cyrillic A
    '{"answer": "\uff21"}',  # full-width A
    "```", "``````", "```json```", "```json\n```", "```\n```json\n{\"answer\": \"A\"}\n```\n```",
    "```json\n```json\n{}\n```\n```", "~~~json\n{}\n~~~",
    "<html><body><p>{\"answer\": \"A\"}</p></body></html>", "<script>alert(1)</script>",
    "<think>{\"answer\": \"B\"}</think>", "<think>unterminated {", "</think>}",
    "\u202e{\"answer\": \"A\"}\u202c", "\u200f\u05d0\u05d1\u05d2 \u0627\u0644\u062c\u0648\u0627\u0628",
    "\U0001f600\U0001f4a5\U0001f3ac", "\ud7ff\ue000\ufffd\ufeff", "\ufeff{}",
    "\u00e9\u0301" * 50, "Z\u0351\u0352\u0353\u0354" * 30,
    "{'answer': 'A'}", "{'a': True, 'b': None}", "{[1]: 2}", "{(1, 2): 3}", '{"a": {[1]: 2}}',
    "{1: 2}", "{None: None}", "{...}", "{**x}", "{__import__('os')}", "{'a': (1,)*10**8}",
    '[' * 5000 + ']' * 5000, '{"a": ' + '[' * 5000 + ']' * 5000 + '}', '{"a":' * 3000 + '1' + '}' * 3000,
    "{" * 3000, "[" * 3000, "(" * 3000, '"' * 3000, "\\" * 3000,
    "[[1, 2], [3, 4]]", "[[4, 1]]", "[[-5, -1]]", "[[1e309, 2]]", "[[NaN, 2]]", "[[2, Infinity]]",
    "[[-Infinity, 3]]", "[[1, 1]]", "[[0, 99999999]]", "[[\"a\", \"b\"]]", "[[true, false]]",
    "[[null, null]]", "[1, 2, 3, 4, 5]", '{"start": "x", "end": "y"}', '{"start": 5, "end": 2}',
    '{"start": null, "end": null}', '{"start": [1], "end": {}}', "from 9 to 3", "between -1 and -2",
    "99:99:99 - 88:88:88", "1:2:3:4:5 - 6", "00:00:00.000 - 00:00:00.000", "1.2.3 - 4.5.6",
    "5 - ", " - 5", "- - -", "1-2-3-4", "10s", "at 3 s", "Frame at 2.375s:", "Frame at 1e309s:",
    "The event happens in 1e309 - 1e310 seconds", "0 to 0", "-0 to -0",
    "left", "right", "both", "left and right", "hand hand hand", "lfet hnad", "rigth clf",
    "the the the", "head, head, head, neck", "harm, deck", "leftleftleft", "left-right-left",
    "The affected body regions are", "The affected body regions are .", "affected body regions: ,,,",
    "Please answer with JSON: {\"answer\": \"<letter>\", \"reason\": \"...\"}",  # prompt echo
    "You are given four candidate clips. Answer with A, B, C or D.",
    '{"statements": []}', '{"statements": null}', '{"statements": "s1"}', '{"statements": [1, 2]}',
    '{"statements": [{}]}', '{"statements": [{"id": 1, "text": 2}]}', '{"statements": [null]}',
    '{"decision": null}', '{"decision": 1}', '{"decision": ["EMIT"]}', '{"decision": "emit."}',
    '{"decision": "EMIT", "confidence": "high"}', '{"decision": "EMIT", "confidence": NaN}',
    '{"decision": "EMIT", "confidence": 1e309}', '{"decision": "EMIT", "confidence": -1e309}',
    '{"decision": "EMIT", "confidence": [0.5]}', '{"decision": "EMIT", "confidence": true}',
    '{"decision": "EMIT", "statements": [{"id": "s1", "holds": ["x"]}]}',
    '{"decision": "EMIT", "statements": [{"id": {"x": 1}, "holds": null}]}',
    '{"decision": "EXPAND", "expand_direction": ["left"], "expand_seconds": "1e999"}',
    '{"decision": "EXPAND", "expand_direction": "left", "expand_seconds": -5}',
    '{"decision": "EXPAND", "expand_direction": "up", "expand_seconds": 5}',
    '{"selected_index": 1e309}', '{"selected_index": "1e309"}', '{"selected_index": NaN}',
    '{"selected_index": "nan"}', '{"selected_index": -1}', '{"selected_index": 1.5}',
    '{"selected_index": [1]}', '{"selected_index": "[1]"}', '{"selected_index": true}',
    '{"selected_index": null}', '{"selected_index": 99999999999999999999999}', "selected_index: 1e309",
    "selected_index = 2", '{"selected_index": "-0"}',
]

HUGE: list[str] = [
    "A" * MB,
    '{"answer": "A", "reason": "' + "x" * MB + '"}',
    ("left hand and " * (MB // 14 + 1))[:MB],
    " " * MB,
]

_NOISE_CHARS = list("{}[]():,;\"'`<>\\/-_.!? \n\t0123456789abcXYZ") + [
    "\x00", "\u202e", "\u200f", "\U0001f600", "\u2013", "\u201c", "\u201d", "\ufffd", "\u2026"]


def _mutate(text: str, rng: random.Random) -> str:
    op = rng.randrange(12)
    if not text:
        return rng.choice(_NOISE_CHARS)
    i = rng.randrange(len(text) + 1)
    j = min(len(text), i + rng.randrange(1, 12))
    if op == 0:   # truncate
        return text[:i]
    if op == 1:   # delete a span
        return text[:i] + text[j:]
    if op == 2:   # insert noise
        return text[:i] + "".join(rng.choice(_NOISE_CHARS) for _ in range(rng.randrange(1, 6))) + text[i:]
    if op == 3:   # duplicate a span
        return text[:j] + text[i:j] + text[j:]
    if op == 4:   # case flip
        return text.swapcase() if rng.random() < 0.5 else text.lower()
    if op == 5:   # fences, possibly nested / unbalanced
        return rng.choice(["```json\n", "```\n", "``` ", "```json\n```json\n"]) + text + rng.choice(["\n```", "", "```\n```"])
    if op == 6:   # numbers replaced by extreme ones
        out = "".join(rng.choice(["1e309", "NaN", "-0", "-1", "99999999999999999999", "1e-400"])
                      if ch.isdigit() and rng.random() < 0.5 else ch for ch in text)
        return out
    if op == 7:   # typographic quotes / dashes
        return text.replace('"', rng.choice(["\u201c", "\u201d", "'", "`"])).replace("-", "\u2013")
    if op == 8:   # replace one char
        return text[:i] + rng.choice(_NOISE_CHARS) + text[i + 1:]
    if op == 9:   # two answers
        return text + rng.choice(["\n", " ", ""]) + text[::-1]
    if op == 10:  # prose around / prompt echo
        return rng.choice(["Sure! ", "Answer:\n", "<think>hmm {</think>", "I think "]) + text + \
            rng.choice([" Hope that helps.", "", "\n\nReasoning: see above }", " or maybe not"])
    return text[:i] + "\u202e" + text[i:j][::-1] + "\u202c" + text[j:]  # RTL override


def wrapped(valid: str) -> list[str]:
    """A valid answer inside noise that every parser should see through."""
    return [valid, f"  {valid}  ", f"```json\n{valid}\n```", f"```\n{valid}\n```",
            f"Here is my answer:\n{valid}\nThanks.", f"<think>let me think</think>{valid}"]


def corpus(valid: list[str], seed: int, n_mutations: int = 220) -> list[str]:
    rng = random.Random(seed)
    out = list(NASTY) + HUGE
    for v in valid:
        out += wrapped(v)
    for _ in range(n_mutations):
        text = rng.choice(valid)
        for _ in range(rng.randrange(1, 4)):
            text = _mutate(text, rng)
        out.append(text)
    return out
