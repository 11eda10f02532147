"""The G.2 prompt as printed, the request layout, and upstream answer parsing."""
import re

import pytest

from components.cloze.prompts import eval_prompt, request_content
from components.cloze.replies import normalise_recorded_answer, parse_answer


def _norm(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    return re.sub(r"\s+", "", text)


def test_prompt_words_match_the_paper_appendix_g2():
    # the paper's text as printed (Appendix G.2); tests never read the papers folder
    block = ('You are given: - **BEGINNING**: the first part of a video (frames in temporal order). '
             '- **END**: the last part of the same video (frames in temporal order). The middle '
             'segment between BEGINNING and END was removed. You will then see four candidate middle '
             'segments, labeled A, B, C, D. Each candidate is a short clip; exactly one is the true '
             'middle that connects BEGINNING to END. The others are wrong. Task: Which candidate is '
             'the correct middle? Choose one of A, B, C, D. **Output JSON only** : {"answer": '
             '"<A, B, C, or D>", "reason": "<one or two sentences>"}')
    assert _norm(eval_prompt()) == _norm(block)
    assert "\u201c" not in eval_prompt() and "\u201d" not in eval_prompt()


def test_request_content_order():
    b, e = [f"b{i}" for i in range(3)], [f"e{i}" for i in range(3)]
    cands = [[f"{letter}{i}" for i in range(3)] for letter in "abcd"]
    content = request_content("P", b, e, cands)
    assert content[:5] == ["P", "[BEGINNING]", "b0", "b1", "b2"]
    assert content[5:9] == ["[END]", "e0", "e1", "e2"]
    assert content[9:13] == ["[Candidate A]", "a0", "a1", "a2"]
    assert content[-4:] == ["[Candidate D]", "d0", "d1", "d2"]


@pytest.mark.parametrize("text,letter", [
    ('{"answer": "B", "reason": "r"}', "B"),
    ('```json\n{"answer": " c ", "reason": "r"}\n```', "C"),
    ('Sure! {"answer": "D", "reason": "x"} hope that helps', "D"),
    ('```\n{"answer":"a"}\n```', "A"),
])
def test_upstream_parsing_accepts(text, letter):
    p = parse_answer(text)
    assert p.ok and p.letter == letter


@pytest.mark.parametrize("text", [
    "", "B", "The answer is B", '{"answer": "B or C"}', '{"answer": "E", "reason": "r"}',
    '{"answer": "<B>", "reason": "r"}', '{"reason": "no answer"}', '{"answer": 2}', "{broken json}",
])
def test_upstream_parsing_never_guesses(text):
    p = parse_answer(text)
    assert not p.ok and p.letter is None and p.why


def test_strict_variant_unwraps_brackets_and_needs_a_reason():
    assert parse_answer('{"answer": "<B>", "reason": "r"}', strict=True).letter == "B"
    assert not parse_answer('{"answer": "B"}', strict=True).ok
    assert parse_answer('{"answer": "B"}').letter == "B"


@pytest.mark.parametrize("value,out", [("A", "A"), (" b ", "B"), ("<C>", "C"), ("< d >", "D"),
                                       ("AB", None), ("", None), (None, None), ("E", None)])
def test_analysis_validity_rule(value, out):
    assert normalise_recorded_answer(value) == out


def test_open_style_differs_only_in_the_last_line():
    api, open_ = eval_prompt("api").splitlines(), eval_prompt("open").splitlines()
    assert api[:-1] == open_[:-1]
    assert open_[-1] == api[-1].replace("**Output JSON only** :", "Output JSON only:")


@pytest.mark.parametrize("text,api,strict", [
    ('```json {"answer": "A", "reason": "r"}```', None, None),      # the released fence drops line 1
    ('```json\n{"answer": "A", "reason": "r"}```', "A", "A"),
    ("[" * 3000 + '{"answer": "B", "reason": "r"}' + "]" * 3000, None, None),  # RecursionError
    ('<html><body>' + '{"answer": "C", "reason": "r"}' + "x" * 40 + "</body></html>", "C", None),
    ('{"answer": 0, "x": {"answer": "D", "reason": "r"}}', None, None),
])
def test_released_parser_edge_cases(text, api, strict):
    assert parse_answer(text).letter == api
    assert parse_answer(text, strict=True).letter == strict
