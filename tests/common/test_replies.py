"""One rule for every parser: reasoning is never the answer; oversized replies are refused."""
from __future__ import annotations

import pytest

from components.common.replies import MAX_REPLY_CHARS, ReplyRefused, answer_part


def test_closed_reasoning_blocks_are_removed():
    reply = "<think>maybe 400 - 410?</think>The event is at 430 - 440 s.<thinking>x</thinking>"
    assert answer_part(reply) == "The event is at 430 - 440 s."


def test_unclosed_reasoning_has_no_answer():
    with pytest.raises(ReplyRefused, match="never closed"):
        answer_part('<think>I think the answer is {"decision": "EMIT"} but let me check')


def test_a_closing_tag_alone_ends_reasoning_opened_by_the_chat_template():
    assert answer_part('first 1 - 2 ... </think> {"start": 5, "end": 9}') == '{"start": 5, "end": 9}'


def test_tags_are_case_insensitive_and_may_carry_attributes():
    assert answer_part('<THINK type="x">a</THINK>B') == "B"


def test_oversized_replies_are_refused_not_scanned():
    answer_part("x" * MAX_REPLY_CHARS)
    with pytest.raises(ReplyRefused, match="longer than"):
        answer_part("x" * (MAX_REPLY_CHARS + 1))


def test_plain_replies_pass_through():
    assert answer_part("  A  ") == "A" and answer_part(None) == ""
