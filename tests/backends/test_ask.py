"""backends.ask: parse and re-ask (bounded), transport failures, the too-many-images policies,
stop events, and attempt numbers reaching the backend and the trace."""
from __future__ import annotations

import dataclasses
import json
import threading

import pytest
from PIL import Image

from backends import ask as ask_module
from backends.ask import Unparsed, ask, resample, step_down, trim
from backends.base import GenerationParams, GenerationRequest, GenerationResult, Message, VLMBackend
from backends.errors import GenerationStopped
from backends.openai_api import RetryPolicy
from backends.record import RecordingBackend
from tests.backends.support import Failure, ScriptedBackend, api_backend


def frames_request(n: int, *, cancel: threading.Event | None = None) -> GenerationRequest:
    """One user message with `n` frames, each after its time label."""
    content: list = []
    for i in range(n):
        content += [f"<{i}.0 s>", Image.new("RGB", (8, 8), (10 * i % 256, 0, 0))]
    content.append("When does the door open?")
    return GenerationRequest([Message.text("system", "Answer in JSON."), Message("user", content)],
                             GenerationParams(max_tokens=32), task="test.ask", ref="q1",
                             cancel=cancel)


def drop_last_frames(request: GenerationRequest, limit: int) -> GenerationRequest:
    """A `trim` dropper: keep the request's text, remove frames from the end until it fits."""
    user = request.messages[-1]
    kept, images = [], 0
    for part in user.content:
        if not isinstance(part, str):
            if images >= limit:
                continue
            images += 1
        kept.append(part)
    return dataclasses.replace(request, messages=[*request.messages[:-1], Message("user", kept)])


def parse_number(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise Unparsed(f"{text!r} is not a number") from None


# -- parse and re-ask -----------------------------------------------------------------------------

def test_unreadable_replies_are_asked_again_until_one_parses():
    backend = ScriptedBackend(["no idea", "7", "8"])
    seen: list[tuple[int, str]] = []
    asked = ask(backend, frames_request(2), parse_number, attempts=3,
                on_attempt=lambda n, why: seen.append((n, why)))
    assert asked.ok and asked.value == 7
    assert asked.attempts == 2 and asked.raws == ["no idea", "7"] and asked.raw == "7"
    assert asked.error is None and not asked.failed and not asked.unparsed
    assert seen == [(1, "'no idea' is not a number")]
    assert asked.latency_s == pytest.approx(0.02)


def test_re_asking_is_bounded_and_keeps_every_raw_reply():
    backend = ScriptedBackend(["a", "b", "c", "42"])
    asked = ask(backend, frames_request(1), parse_number, attempts=3)
    assert asked.value is None and not asked.ok and asked.unparsed and not asked.failed
    assert asked.attempts == 3 and len(backend.requests) == 3
    assert asked.raws == ["a", "b", "c"]
    assert "'c' is not a number" in asked.error and "gave up after 3 attempts" in asked.error


def test_attempts_below_one_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        ask(ScriptedBackend(["1"]), frames_request(0), parse_number, attempts=0)


def test_retry_sleep_grows_with_the_attempt(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(ask_module.time, "sleep", slept.append)
    ask(ScriptedBackend(["x"]), frames_request(0), parse_number, attempts=3, retry_sleep=0.5)
    assert slept == [0.5, 1.0]  # none after the last attempt


def test_transport_failure_is_not_asked_again():
    backend = ScriptedBackend([Failure("HTTP 500: overloaded"), "7"])
    asked = ask(backend, frames_request(2), parse_number, attempts=3)
    assert asked.failed and asked.value is None and not asked.unparsed
    assert asked.attempts == 1 and len(backend.requests) == 1 and asked.raws == []
    assert asked.error == "scripted:test failed: HTTP 500: overloaded"
    assert asked.request is backend.requests[0]


def test_with_retry_failures_a_failure_is_an_attempt_and_asked_again():
    """TempCloze's released eval.py re-asks after any exception within its 3 attempts."""
    backend = ScriptedBackend([Failure("HTTP 500: overloaded"), "7"])
    told: list[tuple[int, str]] = []
    asked = ask(backend, frames_request(2), parse_number, attempts=3, retry_failures=True,
                on_attempt=lambda n, why: told.append((n, why)))
    assert asked.ok and asked.value == 7 and not asked.failed
    assert asked.attempts == 2 and len(backend.requests) == 2 and asked.raws == ["7"]
    assert told == [(1, "scripted:test failed: HTTP 500: overloaded")]


def test_with_retry_failures_the_attempts_stay_bounded():
    backend = ScriptedBackend([Failure("HTTP 500: one"), "no idea", Failure("HTTP 500: three"),
                               "7"])
    asked = ask(backend, frames_request(2), parse_number, attempts=3, retry_failures=True)
    assert asked.failed and asked.value is None and asked.attempts == 3
    assert len(backend.requests) == 3 and asked.raws == ["no idea"]
    assert asked.error == "scripted:test failed: HTTP 500: three"


# -- too many images ------------------------------------------------------------------------------

def test_step_down_rebuilds_with_the_next_count_that_fits():
    backend = ScriptedBackend(["3"], refuse_over=4)
    asked = ask(backend, frames_request(16), parse_number, attempts=2,
                on_too_many=step_down(frames_request, (16, 12, 4, 2, 1)))
    assert asked.value == 3
    assert backend.sizes == [16, 4]  # the server said 4: 12 is skipped
    assert asked.attempts == 1  # a refused size is not an attempt
    assert asked.request.num_images() == 4


def test_step_down_without_a_stated_limit_tries_each_smaller_count():
    backend = ScriptedBackend(["3"], refuse_over=5, states_limit=False)  # like a GPU out of memory
    asked = ask(backend, frames_request(16), parse_number, attempts=2,
                on_too_many=step_down(frames_request, (16, 12, 4, 2, 1)))
    assert asked.value == 3 and backend.sizes == [16, 12, 4] and asked.attempts == 1


def test_step_down_keeps_the_stop_event():
    stop = threading.Event()
    backend = ScriptedBackend(["3"], refuse_over=4)
    asked = ask(backend, frames_request(8, cancel=stop), parse_number, attempts=1,
                on_too_many=step_down(frames_request, (8, 4)))
    assert asked.ok and backend.requests[-1].cancel is stop


def test_resample_asks_for_as_many_frames_as_the_limit_allows():
    backend = ScriptedBackend(["5"], refuse_over=6)
    asked = ask(backend, frames_request(10), parse_number, attempts=1,
                on_too_many=resample(frames_request))
    assert asked.value == 5 and backend.sizes == [10, 6]


def test_trim_keeps_the_structure_and_drops_frames():
    backend = ScriptedBackend(["5"], refuse_over=3)
    asked = ask(backend, frames_request(8), parse_number, attempts=1,
                on_too_many=trim(drop_last_frames))
    assert asked.value == 5 and backend.sizes == [8, 3]
    texts = [p for p in asked.request.messages[-1].content if isinstance(p, str)]
    assert texts[-1] == "When does the door open?" and len(texts) == 9  # every label kept


def test_a_request_is_fitted_to_the_backends_cap_before_it_is_sent():
    backend = ScriptedBackend(["5"], max_images=4)
    asked = ask(backend, frames_request(10), parse_number, attempts=1,
                on_too_many=resample(frames_request))
    assert asked.ok and backend.sizes == [4]  # the 10-image request never went out


def test_over_the_cap_without_a_policy_gives_up_without_asking():
    backend = ScriptedBackend(["5"], max_images=4)
    asked = ask(backend, frames_request(10), parse_number, attempts=3)
    assert asked.failed and asked.value is None and asked.attempts == 0
    assert backend.requests == []
    assert "refused the request's images" in asked.error and "at most 4 images" in asked.error


def test_a_refused_size_is_not_an_attempt():
    backend = ScriptedBackend(["junk"], refuse_over=4)
    asked = ask(backend, frames_request(8), parse_number, attempts=2,
                on_too_many=step_down(frames_request, (8, 4)))
    assert asked.attempts == 2 and backend.sizes == [8, 4, 4]
    assert [r.attempt for r in backend.requests] == [1, 1, 2]


def test_give_up_when_the_policy_returns_none():
    backend = ScriptedBackend(["5"], refuse_over=2)
    asked = ask(backend, frames_request(8), parse_number, attempts=3,
                on_too_many=step_down(frames_request, (8, 6, 4)))  # nothing fits in 2
    assert asked.failed and asked.value is None and asked.attempts == 0
    assert backend.sizes == [8]
    assert asked.error.startswith("scripted:test refused the request's images: ")
    assert "at most 2 images" in asked.error
    assert asked.request.num_images() == 8


def test_give_up_when_the_policy_returns_no_smaller_request():
    backend = ScriptedBackend(["5"], refuse_over=2)
    asked = ask(backend, frames_request(4), parse_number, attempts=3,
                on_too_many=lambda exc, request: request)
    assert asked.failed and backend.sizes == [4]


# -- stop events ----------------------------------------------------------------------------------

def test_a_set_stop_event_raises_before_any_call():
    stop = threading.Event()
    stop.set()
    backend = ScriptedBackend(["5"])
    with pytest.raises(GenerationStopped):
        ask(backend, frames_request(1, cancel=stop), parse_number, attempts=3)
    assert backend.requests == []


def test_stopping_mid_conversation_ends_it_before_the_next_ask():
    stop = threading.Event()
    backend = ScriptedBackend(["junk"], on_generate=lambda request: stop.set())
    with pytest.raises(GenerationStopped):
        ask(backend, frames_request(1, cancel=stop), parse_number, attempts=3)
    assert len(backend.requests) == 1


# -- attempt numbers ------------------------------------------------------------------------------

def test_attempt_numbers_reach_the_backend_and_the_trace(tmp_path):
    trace = tmp_path / "trace.jsonl"
    inner = ScriptedBackend(["x", "y", "9"])
    asked = ask(RecordingBackend(inner, trace), frames_request(1), parse_number, attempts=3)
    assert asked.value == 9
    assert [r.attempt for r in inner.requests] == [1, 2, 3]
    lines = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [(line["attempt"], line["response"]) for line in lines] == [(1, "x"), (2, "y"), (3, "9")]
    assert {line["task"] for line in lines} == {"test.ask"}


# -- through the real API backend -----------------------------------------------------------------

def _images_in(body: dict) -> int:
    return sum(1 for m in body["messages"] if isinstance(m["content"], list)
               for p in m["content"] if p["type"] == "image_url")


def test_ask_through_the_api_backend_steps_down_and_re_asks(serve):
    def script(body: dict):
        if _images_in(body) > 2:
            return {"status": 400, "body": {"error": {"message": "At most 2 images per request"}}}
        return "not a number" if len(server.requests) < 4 else "12"

    with serve(script) as server:
        backend = api_backend(server, policy=RetryPolicy(max_retries=1, base_delay_s=0.01))
        asked = ask(backend, frames_request(4), parse_number, attempts=3,
                    on_too_many=step_down(frames_request, (4, 3, 2, 1)))
        sizes = [_images_in(body) for body in server.requests]
    assert asked.value == 12 and asked.attempts == 2
    assert asked.raws == ["not a number", "12"]
    assert sizes == [4, 3, 2, 2]  # no stated limit: one fewer each refusal, then two answers


def test_ask_through_the_api_backend_does_not_re_ask_a_transport_failure(serve):
    with serve([{"status": 503}, "12"]) as server:
        backend = api_backend(server, policy=RetryPolicy(max_retries=0))
        asked = ask(backend, frames_request(1), parse_number, attempts=3)
        calls = len(server.requests)
    assert asked.failed and calls == 1
    assert asked.error.startswith("openai:test-model failed: ") and "HTTP 503" in asked.error


class _CutBackend(VLMBackend):
    """Answers once, cut at max_tokens."""

    kind = "cut"

    def __init__(self):
        self.calls = 0

    @property
    def backend_id(self) -> str:
        return "cut:test"

    def generate(self, request):
        self.calls += 1
        return GenerationResult(text='{"answer": "B", "rea', backend=self.backend_id, model="test",
                                finish_reason="length")


def test_a_reply_cut_at_max_tokens_is_its_own_error_not_parsed_and_not_reasked():
    backend = _CutBackend()
    asked = ask(backend, GenerationRequest([Message.text("user", "q")], GenerationParams(max_tokens=8)),
                lambda text: text[12], attempts=3)
    assert backend.calls == 1
    assert asked.truncated and not asked.unparsed and not asked.failed
    assert asked.value is None and asked.raw == '{"answer": "B", "rea'
    assert "max_tokens (8)" in asked.error
