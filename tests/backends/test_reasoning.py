"""Reasoning kept apart from the answer: how it arrives (a server field, a <think> block, a
template that opened <think> in the prompt, Gemini's <thought> summaries), that parsers never see
it, and that traces carry it in its own field (old traces, whose response holds the block, replay
the same way)."""
from __future__ import annotations

import json

import pytest

from backends.ask import Unparsed, ask
from backends.base import GenerationParams, GenerationRequest, Message, Usage
from backends.reasoning import split_reasoning
from backends.record import RecordingBackend
from backends.replay import ReplayBackend
from tests.backends.support import api_backend


def _request(text: str = "Which?", **params) -> GenerationRequest:
    return GenerationRequest([Message.text("user", text)], GenerationParams(**params),
                             task="t.reason", ref="r1")


@pytest.mark.parametrize("text, answer, reasoning", [
    ('<think>A or B? B.</think>\n{"answer": "B"}', '{"answer": "B"}', "A or B? B."),
    ("<THINKING>x</THINKING> A", "A", "x"),
    ("<reasoning>r</reasoning>A", "A", "r"),
    ("<thought>Gemini's summary</thought>The answer is 3.", "The answer is 3.", "Gemini's summary"),
    ("<think>one</think> mid <think>two</think> end", "mid   end", "one\n\ntwo"),
    # the chat template opened <think> in the prompt: the reply holds only the closing tag
    ("weighing it up</think>\n\n[3.0, 5.0]", "[3.0, 5.0]", "weighing it up"),
])
def test_closed_reasoning_is_split_off(text, answer, reasoning):
    assert split_reasoning(text) == (answer, reasoning)


@pytest.mark.parametrize("text", ["", "plain answer", '  {"answer": "A"}\n', "a < b > c",
                                  "<thinker>not a tag</thinker>"])
def test_a_reply_without_reasoning_comes_back_byte_for_byte(text):
    assert split_reasoning(text) == (text, "")


def test_unfinished_reasoning_stays_in_the_text_so_parsers_refuse_it():
    text = '<think>maybe {"answer": "A"} but'
    answer, reasoning = split_reasoning(text)
    assert answer == text and reasoning == ""
    closed_then_open = '<think>a</think> B <think>still going'
    answer, reasoning = split_reasoning(closed_then_open)
    assert reasoning == "a" and answer.endswith("<think>still going")


def test_the_split_is_linear_on_many_unclosed_openers():
    """20,000 openers that never close: one pass (each opener looks for its close once); an
    operation count, not a timing: the answer keeps every opener, nothing is dropped."""
    text = "<think>" * 20_000
    answer, reasoning = split_reasoning(text)
    assert answer == text and reasoning == ""


def test_server_reasoning_fields_and_token_counts(serve):
    """vLLM / SGLang: `reasoning_content`; newer vLLM, OpenRouter: `reasoning`; the reasoning
    token count from usage.completion_tokens_details.reasoning_tokens."""
    script = [{"content": "A", "reasoning_content": "first I looked",
               "usage": {"prompt_tokens": 40, "completion_tokens": 30,
                         "completion_tokens_details": {"reasoning_tokens": 29}}},
              {"content": "<think>inline too</think>B", "reasoning": "field"}]
    with serve(script) as server:
        backend = api_backend(server)
        first = backend.generate(_request())
        second = backend.generate(_request())
    assert first.text == "A" and first.reasoning == "first I looked"
    assert first.usage == Usage(40, 30, 29) and first.usage.answer_tokens == 1
    assert second.text == "B" and second.reasoning == "field\n\ninline too"
    assert second.usage.reasoning_tokens is None and second.usage.answer_tokens is None


def test_the_parser_sees_the_answer_only(serve):
    seen: list[str] = []

    def parse(text: str) -> str:
        seen.append(text)
        if "maybe" in text:
            raise Unparsed("reasoning reached the parser")
        return text

    with serve([{"content": '<think>maybe A</think>{"answer": "B"}',
                 "reasoning_content": "maybe C"}]) as server:
        asked = ask(api_backend(server), _request(), parse)
    assert seen == ['{"answer": "B"}'] and asked.ok
    assert asked.reasoning == "maybe C\n\nmaybe A" and asked.reasonings == [asked.reasoning]


def test_a_trace_carries_reasoning_in_its_own_field_and_replays_it(serve, tmp_path):
    trace = tmp_path / "t.jsonl"
    with serve([{"content": "<think>r1</think>answer one", "usage": {
            "prompt_tokens": 5, "completion_tokens": 9,
            "completion_tokens_details": {"reasoning_tokens": 6}}}]) as server:
        live = RecordingBackend(api_backend(server), trace).generate(_request())
    line = json.loads(trace.read_text().splitlines()[0])
    assert line["response"] == "answer one" and line["reasoning"] == "r1"
    assert line["usage"] == {"prompt_tokens": 5, "completion_tokens": 9, "reasoning_tokens": 6}
    replayed = ReplayBackend(trace).generate(_request())
    assert (replayed.text, replayed.reasoning, replayed.usage) == (live.text, live.reasoning,
                                                                  live.usage)


def test_an_old_trace_whose_response_holds_the_block_replays_split(serve, tmp_path):
    """Traces recorded before reasoning had its own field: `response` holds the <think> block
    and `usage` has no reasoning_tokens; replay splits it as a live backend would."""
    trace = tmp_path / "old.jsonl"
    with serve(["fresh"]) as server:
        RecordingBackend(api_backend(server), trace).generate(_request())
    line = json.loads(trace.read_text())
    line["response"] = "<think>old reasoning</think>\nold answer"
    line["usage"] = {"prompt_tokens": 3, "completion_tokens": 4}
    trace.write_text(json.dumps(line) + "\n")
    result = ReplayBackend(trace).generate(_request())
    assert result.text == "old answer" and result.reasoning == "old reasoning"
    assert result.usage == Usage(3, 4, None)


def test_a_recorded_usage_with_odd_values_is_read_safely():
    assert Usage.from_dict({"prompt_tokens": 1, "completion_tokens": "7", "extra": 3}) == \
        Usage(1, None, None)
    assert Usage.from_dict(None) is None and Usage.from_dict([1]) is None
    assert Usage(1, 2).as_dict() == {"prompt_tokens": 1, "completion_tokens": 2}


def test_a_trace_recorded_with_top_p_1_replays_a_request_that_sends_none(serve, tmp_path):
    """Cloze requests no longer send top_p (as released); a trace recorded when they sent 1.0
    at temperature 0 still answers them."""
    trace = tmp_path / "cloze.jsonl"
    with serve(["A"]) as server:
        RecordingBackend(api_backend(server), trace).generate(_request(temperature=0.0, top_p=1.0))
    replay = ReplayBackend(trace)
    assert replay.generate(_request(temperature=0.0, top_p=None)).text == "A"
    # a sampled request is not stood in for: top_p matters there
    with serve(["B"]) as server:
        RecordingBackend(api_backend(server), trace).generate(_request(temperature=0.7, top_p=1.0))
    from backends.errors import ReplayMissError
    with pytest.raises(ReplayMissError):
        ReplayBackend(trace).generate(_request(temperature=0.7, top_p=None))
