"""The window-search parsers against the adversarial corpus (tests/robustness/corpus/
window_search_<parser>.jsonl): every reply has a hand-decided reading ("expect"; null = unparsed),
also at the size limit (replies are refused past 64 kB). scripts/bench_parsers.py times every
reply of this corpus and the degenerate replies below (goal: under 100 ms of CPU a call)."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any
from collections.abc import Callable

import pytest

from backends.ask import Unparsed
from components.common.replies import MAX_REPLY_CHARS
from components.window_search.replies import parse_interval
from components.window_search.memory import _parse_pick
from components.window_search.replies import parse_decompose, parse_inspect, parse_select
from components.window_search.retrieval import _caption_text

CORPUS = Path(__file__).parent / "corpus"


def _inspect(text: str) -> dict:
    r = parse_inspect(text)
    return {"decision": r.decision, "confidence": r.confidence,
            "expand_direction": r.expand_direction, "expand_seconds": r.expand_seconds}


def _memory(text: str) -> dict:
    frames, conf = _parse_pick(text, 10)
    return {"frames": frames, "confidence": conf}


READERS: dict[str, Callable[[str], Any]] = {
    "localizer": lambda t: list(parse_interval(t)),
    "select": lambda t: parse_select(t, 3).index,
    "inspect": _inspect,
    "decompose": lambda t: [s.text for s in parse_decompose(t).statements],
    "memory": _memory,
    "captions": _caption_text,
}


def _cases(name: str) -> list[tuple[str, Any]]:
    out = []
    for line in (CORPUS / f"window_search_{name}.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        out.append((rec["reply"] * int(rec.get("repeat", 1)), rec["expect"]))
    return out


def _same(got: Any, expect: Any) -> bool:
    if isinstance(expect, float) or isinstance(got, float):
        return isinstance(got, (int, float)) and isinstance(expect, (int, float)) and \
            math.isclose(got, expect, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expect, list) and isinstance(got, list):
        return len(got) == len(expect) and all(_same(g, e) for g, e in zip(got, expect))
    if isinstance(expect, dict) and isinstance(got, dict):
        return got.keys() == expect.keys() and all(_same(got[k], expect[k]) for k in expect)
    return got == expect


def _read(name: str, reply: str) -> Any:
    try:
        return READERS[name](reply)
    except Unparsed:
        return None


def test_the_corpus_is_large_enough_and_holds_the_issue_cases():
    counts = {name: len(_cases(name)) for name in READERS}
    assert sum(counts.values()) >= 150, counts
    assert all(n >= 15 for n in counts.values()), counts
    replies = {r for name in READERS for r, _ in _cases(name)}
    for issue_case in ("not 400 - 410 but 430 - 440", "Not selected_index 1, rather 2",
                       "I count 3, 4 or 5 impacts", '["2", "8"]', '{"start": "NaN", "end": 20}',
                       "at 2024-05-01 the event happens in 400 - 420 seconds"):
        assert issue_case in replies, issue_case
    sizes = [len(r) for name in READERS for r, _ in _cases(name)]
    assert max(sizes) > MAX_REPLY_CHARS and any(50_000 < s <= MAX_REPLY_CHARS for s in sizes)


@pytest.mark.parametrize("name", sorted(READERS))
def test_every_reply_is_read_as_expected(name):
    wrong = []
    for reply, expect in _cases(name):
        got = _read(name, reply)
        if not _same(got, expect):
            wrong.append(f"{reply[:70]!r}: got {str(got)[:60]}, expected {str(expect)[:60]}")
    assert not wrong, f"{len(wrong)} misread:\n" + "\n".join(wrong)


#: what a degenerate reply of one unit repeated to the size limit reads as, where it reads as
#: something (everything else is unparsed): a caption is the reply's text; a repeated pair or
#: index is that pair or index
DEGENERATE_READINGS = {("localizer", "1 - 2 "): [1.0, 2.0], ("select", "selected_index: 1 "): 1}


@pytest.mark.parametrize("name", sorted(READERS))
@pytest.mark.parametrize("unit", ["1 - 2 ", "{", "[", '{"a": ', "not ", "<think>x</think>", "9",
                                  "selected_index: 1 ", "{a} ", "\u2013"])
def test_replies_up_to_the_size_limit_are_read_without_guessing(name, unit):
    """Degenerate replies just under the limit (the inputs that made parsers slow): each is read
    as it should be; scripts/bench_parsers.py times them against a regular-expression scan."""
    reply = (unit * (MAX_REPLY_CHARS // len(unit) + 1))[:MAX_REPLY_CHARS]
    if name == "captions":
        expect = None if "<think>" in unit else reply.strip()
    else:
        expect = DEGENERATE_READINGS.get((name, unit))
    assert _same(_read(name, reply), expect), f"{name} on {unit!r} x {len(reply):,}"
