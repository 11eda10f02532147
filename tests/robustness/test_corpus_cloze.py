"""The cloze answer corpus: every reply with the reading the released evaluation gives it.

`corpus/cloze_answer.jsonl`, one {"reply", "expect", "upstream", "strict", "note"} per line:
- "upstream": what the released API evaluator's parser (TempCloze/eval.py, parse_eval_response,
  called in a try that counts any exception as a failed attempt) makes of the raw reply: a letter
  or "unparsed";
- "strict": the same for the released vLLM evaluator's stricter parser (TempCloze/eval_vllm.py);
- "expect": what the app records: the shared reasoning/size rule (components.common.replies:
  closed <think> blocks dropped, unclosed reasoning or a reply over 64 kB refused) and then the
  released parser on what is left. It differs from "upstream" only on replies with reasoning tags
  or over the size bound.
The expectations were computed by running the released functions over each reply (a scratch copy
outside this repository) and spot-checked by hand. The replies are hand-written cases (fences,
prose, non-string answers, look-alike letters, deep nesting, digit limits, HTML, reasoning tags,
size), seeded mutations of valid answers and the shared adversarial list (tests/robustness/corpus.py).
scripts/bench_parsers.py times every reply of it (goal: under 100 ms a call).
"""
import json
from pathlib import Path

import pytest

from components.cloze.replies import parse_answer
from components.cloze.replies import read_reply

CORPUS = Path(__file__).parent / "corpus" / "cloze_answer.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _reading(parsed) -> str:
    return parsed.letter or "unparsed"


def test_the_corpus_is_large_and_covers_every_outcome():
    assert len(CASES) >= 150
    for key in ("expect", "upstream", "strict"):
        assert {c[key] for c in CASES} == {"A", "B", "C", "D", "unparsed"}
    assert sum(c["expect"] != c["upstream"] for c in CASES) >= 10      # the reasoning/size rule acts
    assert sum(c["strict"] != c["upstream"] for c in CASES) >= 10      # the two released parsers differ
    assert any(len(c["reply"]) > 65_536 for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[f"{i}:{c['note'][:40]}" for i, c in enumerate(CASES)])
def test_each_reply_reads_as_the_released_evaluation_reads_it(case):
    reply = case["reply"]
    assert _reading(parse_answer(reply)) == case["upstream"]
    assert _reading(parse_answer(reply, strict=True)) == case["strict"]
    assert _reading(read_reply(reply)) == case["expect"]


def test_a_reading_never_invents_a_letter():
    """Every letter read must be the value of an "answer" key in the reply's text."""
    for case in CASES:
        letter = read_reply(case["reply"]).letter
        if letter is not None:
            text = case["reply"].lower()
            assert '"answer"' in text and (letter.lower() in text or "\\u00" in text)
