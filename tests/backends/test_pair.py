"""Two backends on one request ("compare with", backends.pair): the request is built once and
sent to both real servers unchanged, each side re-asks on its own, both calls are traced with one
pair id, and a recorded pair replays offline, each side from its own recorded calls."""
from __future__ import annotations

import json

import pytest
from PIL import Image

from backends.ask import Unparsed, ask, step_down
from backends.base import GenerationParams, GenerationRequest, Message
from backends.config import ApiSettings
from backends.errors import BackendError
from backends.pair import PairedBackend, partner_id, same_request
from backends.registry import resolve
from tests.helpers.openai_server import ScriptedOpenAIServer


def _request(n_frames: int = 3) -> GenerationRequest:
    content: list = ["Which frame is red?"]
    for i in range(n_frames):
        content += [f"frame {i}", Image.new("RGB", (16, 12), (80 * i % 256, 40, 200))]
    return GenerationRequest([Message("user", content)], GenerationParams(max_tokens=16),
                             task="test.pair", ref="q7")


def _letter(text: str) -> str:
    letter = text.strip().upper()
    if letter not in {"A", "B", "C", "D"}:
        raise Unparsed(f"{text!r} is no letter")
    return letter


def _backend(server, model: str, record_to=None, max_images=None):
    return resolve(f"openai:{model}", api=ApiSettings(base_url=server.url, api_key="sk-pair",
                                                      max_retries=0, max_images=max_images),
                   record_to=record_to)


def _without_model(body: dict) -> dict:
    return {k: v for k, v in body.items() if k != "model"}


def test_one_request_goes_to_both_servers_unchanged_and_each_re_asks_on_its_own():
    with ScriptedOpenAIServer(["B"]) as a, ScriptedOpenAIServer(["no idea", "C"]) as b:
        paired = PairedBackend(_backend(a, "model-a"), _backend(b, "model-b"))
        asked = ask(paired, _request(), _letter, attempts=3)
        bodies_a, bodies_b = list(a.requests), list(b.requests)
    assert asked.value == "B" and asked.attempts == 1 and asked.backend == "openai:model-a"
    other = asked.partner
    assert other.value == "C" and other.attempts == 2 and other.raws == ["no idea", "C"]
    assert other.backend == "openai:model-b"
    # the same messages and parameters went to both (only the model name differs)
    assert len(bodies_a) == 1 and len(bodies_b) == 2
    assert _without_model(bodies_a[0]) == _without_model(bodies_b[0]) == _without_model(bodies_b[1])
    assert asked.pair_id and asked.pair_id == other.pair_id
    assert same_request(asked.request, other.request)


def test_both_calls_are_traced_with_one_pair_id_and_the_pair_replays_offline(tmp_path):
    trace = tmp_path / "talk.jsonl"
    with ScriptedOpenAIServer(["B"]) as a, ScriptedOpenAIServer(["D"]) as b:
        paired = PairedBackend(_backend(a, "model-a", trace), _backend(b, "model-b", trace))
        live = ask(paired, _request(), _letter)
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert sorted(line["backend"] for line in lines) == ["openai:model-a", "openai:model-b"]
    assert {line["pair"] for line in lines} == {live.pair_id}
    assert "sk-pair" not in trace.read_text()
    # offline: each side answers only with its own recorded calls
    first = resolve(f"replay:{trace}#openai:model-a")
    second = resolve(f"replay:{trace}#openai:model-b")
    replayed = ask(PairedBackend(first, second), _request(), _letter)
    assert (replayed.value, replayed.partner.value) == ("B", "D")
    assert first.backend_id == "replay:talk.jsonl#openai:model-a"
    assert partner_id(PairedBackend(first, second)) == "replay:talk.jsonl#openai:model-b"


def test_replaying_a_backend_the_trace_does_not_hold_is_refused(tmp_path):
    trace = tmp_path / "t.jsonl"
    with ScriptedOpenAIServer(["B"]) as a:
        _backend(a, "model-a", trace).generate(_request())
    with pytest.raises(BackendError, match="holds no calls of 'openai:other'.*openai:model-a"):
        resolve(f"replay:{trace}#openai:other")


def test_the_partners_failure_never_ends_the_primarys_answer():
    with ScriptedOpenAIServer(["A"]) as a, \
            ScriptedOpenAIServer([{"status": 400, "body": {"error": {"message": "nope"}}}]) as b:
        asked = ask(PairedBackend(_backend(a, "model-a"), _backend(b, "model-b")), _request(),
                    _letter)
    assert asked.ok and asked.value == "A"
    assert asked.partner.failed and "nope" in asked.partner.error


def test_the_pairs_image_cap_is_the_smaller_so_one_request_fits_both():
    with ScriptedOpenAIServer(["A"]) as a, ScriptedOpenAIServer(["B"]) as b:
        paired = PairedBackend(_backend(a, "model-a", max_images=8),
                               _backend(b, "model-b", max_images=2))
        assert paired.max_images == 2
        asked = ask(paired, _request(3), _letter,
                    on_too_many=step_down(lambda n: _request(n), [2, 1]))
        sent_a = sum(1 for part in a.requests[0]["messages"][0]["content"]
                     if part["type"] == "image_url")
        sent_b = sum(1 for part in b.requests[0]["messages"][0]["content"]
                     if part["type"] == "image_url")
    assert (sent_a, sent_b) == (2, 2) and same_request(asked.request, asked.partner.request)
    assert asked.request.pair == asked.pair_id  # the fitted request keeps its pair id


def test_a_method_beside_a_model_is_refused_with_one_line():
    with ScriptedOpenAIServer(["A"]) as a:
        with pytest.raises(BackendError, match="baseline is a method .* openai:model-a a model"):
            PairedBackend(_backend(a, "model-a"), resolve("baseline"))
        with pytest.raises(BackendError, match="baseline:edge4 is a method"):
            PairedBackend(resolve("baseline:edge4"), _backend(a, "model-a"))


def test_two_no_model_methods_pair_and_say_which_is_which():
    from backends.methods import method_label, method_of
    from backends.pair import method_pair

    pair = PairedBackend(resolve("baseline:text"), resolve("baseline:rag"))
    assert pair.is_baseline and partner_id(pair) == "baseline:rag"
    first, second = method_pair(pair)
    assert (method_of(first), method_of(second)) == ("text", "rag")
    assert "method" in method_label("baseline:rag") and "model" not in method_label("baseline:rag")
    assert method_pair(resolve("baseline")) is None
    with pytest.raises(BackendError, match="Unknown no-model method 'baseline:edge9'"):
        resolve("baseline:edge9")
