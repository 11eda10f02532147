"""The thinking switch and request lengths on the wire, against the real scripted server: each
control puts its own field in the request body (CoM2 Section 5: "Thinking is disabled for all
three roles"), and max_tokens goes out as asked."""
from __future__ import annotations

import json

import pytest

from backends.base import GenerationParams, GenerationRequest, Message
from backends.config import ApiSettings
from backends.errors import BackendError, ReplayMissError
from backends.openai_api import OpenAIBackend
from backends.record import RecordingBackend
from backends.replay import ReplayBackend
from backends.thinking import disable_effort, lower_effort_offered, resolve_control
from tests.backends.support import FAST, SECRET


def backend_for(server, model: str = "test-model", control: str | None = None) -> OpenAIBackend:
    settings = ApiSettings(base_url=server.url, api_key=SECRET, timeout_s=5.0,
                           max_retries=FAST.max_retries, thinking_control=control)
    return OpenAIBackend(model, settings, policy=FAST)


def ask(thinking: bool | None, max_tokens: int = 64) -> GenerationRequest:
    return GenerationRequest([Message.text("user", "Does the window show the moment?")],
                             GenerationParams(temperature=0.2, max_tokens=max_tokens,
                                              thinking=thinking), task="aws.inspect", ref="q1")


@pytest.fixture(autouse=True)
def _no_thinking_env(monkeypatch):
    monkeypatch.delenv("APP_THINKING_CONTROL", raising=False)


@pytest.mark.parametrize("thinking, expected", [(False, {"enable_thinking": False}),
                                                (True, {"enable_thinking": True})])
def test_a_self_hosted_server_gets_chat_template_kwargs(serve, thinking, expected):
    with serve(["ok"]) as server:  # 127.0.0.1: a vLLM / SGLang server as far as auto can tell
        backend = backend_for(server)
        assert backend.generate(ask(thinking)).ok
    body = server.requests[0]
    assert body["chat_template_kwargs"] == expected
    assert "reasoning_effort" not in body and body["max_tokens"] == 64


def test_the_server_default_sends_no_switch(serve):
    with serve(["ok"]) as server:
        backend_for(server).generate(ask(None))
        backend_for(server, "gpt-5-mini").generate(ask(None))
    assert all("chat_template_kwargs" not in b and "reasoning_effort" not in b
               for b in server.requests)


@pytest.mark.parametrize("model, effort", [("gpt-5-mini", "minimal"), ("o3-mini", "low"),
                                           ("openai/o4-mini", "low"), ("gemini-2.5-flash", "none")])
def test_reasoning_models_get_reasoning_effort_and_max_completion_tokens(serve, model, effort):
    with serve(["ok"]) as server:
        assert backend_for(server, model).generate(ask(False, max_tokens=8192)).ok
    body = server.requests[0]
    assert body["reasoning_effort"] == effort
    assert body["max_completion_tokens"] == 8192 and "max_tokens" not in body
    assert "chat_template_kwargs" not in body


def test_explicit_reasoning_effort_control_and_enabling(serve):
    with serve(["ok"]) as server:
        backend = backend_for(server, "my-served-model", control="reasoning_effort")
        backend.generate(ask(False))
        backend.generate(ask(True))
    assert [b["reasoning_effort"] for b in server.requests] == ["minimal", "medium"]
    assert all(b["max_completion_tokens"] == 64 for b in server.requests)


def test_control_none_never_sends_a_switch(serve):
    with serve(["ok"]) as server:
        backend_for(server, "gpt-5", control="none").generate(ask(False))
        backend_for(server, control="none").generate(ask(False))
    assert all("chat_template_kwargs" not in b and "reasoning_effort" not in b
               for b in server.requests)


def test_control_from_the_environment(serve, monkeypatch):
    monkeypatch.setenv("APP_THINKING_CONTROL", "reasoning_effort")
    with serve(["ok"]) as server:
        backend_for(server).generate(ask(False))
        backend_for(server, control="chat_template_kwargs").generate(ask(False))  # the setting wins
    assert server.requests[0]["reasoning_effort"] == "minimal"
    assert server.requests[1]["chat_template_kwargs"] == {"enable_thinking": False}
    monkeypatch.setenv("APP_THINKING_CONTROL", "sometimes")
    with pytest.raises(BackendError, match="Unknown thinking control 'sometimes'.*chat_template_kwargs"):
        ApiSettings().resolved()


def test_a_refused_effort_steps_to_the_lowest_offered(serve):
    refusal = {"status": 400, "body": {"error": {"message": "Unsupported value: 'reasoning_effort' "
               "does not support 'minimal' with this model. Supported values are: 'none', 'low', "
               "'medium', and 'high'."}}}

    def script(body):
        return refusal if body.get("reasoning_effort") == "minimal" else "fine"

    with serve(script) as server:
        backend = backend_for(server, "gpt-5.1")
        assert backend.generate(ask(False)).text == "fine"
        assert backend.generate(ask(False)).text == "fine"  # remembered: no second refusal
    assert [b["reasoning_effort"] for b in server.requests] == ["minimal", "none", "none"]


def test_a_refused_switch_is_a_readable_error(serve):
    refusal = {"status": 400, "body": {"error": {"message": "extra fields not permitted: "
                                                 "chat_template_kwargs"}}}
    with serve([refusal]) as server:
        result = backend_for(server).generate(ask(False))
    assert len(server.requests) == 1
    assert not result.ok and "thinking switch (chat_template_kwargs)" in result.error
    assert "'none'" in result.error and SECRET not in result.error


def test_a_server_refusing_max_completion_tokens_gets_max_tokens(serve):
    refusal = {"status": 400, "body": {"error": {"message": "Unknown name \"max_completion_tokens\""}}}

    def script(body):
        return refusal if "max_completion_tokens" in body else "fine"

    with serve(script) as server:
        assert backend_for(server, "gemini-2.5-flash").generate(ask(False, 8192)).text == "fine"
    assert server.requests[1]["max_tokens"] == 8192 and server.requests[1]["reasoning_effort"] == "none"


def test_long_requests_are_not_capped(serve):
    with serve(["ok"]) as server:
        backend_for(server).generate(ask(None, max_tokens=8192))
    assert server.requests[0]["max_tokens"] == 8192


def test_the_thinking_value_is_recorded_and_keys_the_replay(serve, tmp_path):
    trace = tmp_path / "trace.jsonl"
    with serve(["no thinking here"]) as server:
        RecordingBackend(backend_for(server), trace).generate(ask(False))
    line = json.loads(trace.read_text(encoding="utf-8").splitlines()[0])
    assert line["params"]["thinking"] is False
    replay = ReplayBackend(trace)
    assert replay.generate(ask(False)).text == "no thinking here"
    with pytest.raises(ReplayMissError):
        replay.generate(ask(None))  # a call with the server's default is another call


@pytest.mark.parametrize("base_url, model, control", [
    ("https://generativelanguage.googleapis.com/v1beta/openai/", "gemini-2.5-flash", "reasoning_effort"),
    ("https://us-central1-aiplatform.googleapis.com/v1/projects/p/endpoints/openapi",
     "google/gemini-2.5-flash", "reasoning_effort"),
    ("https://us-central1-aiplatform.googleapis.com/v1/projects/p/endpoints/42", "meta/llama-4",
     "chat_template_kwargs"),  # a model deployed on Vertex (vLLM) reads chat_template_kwargs
    (None, "gpt-4o", "none"), ("https://api.openai.com/v1", "gpt-4.1-mini", "none"),
    (None, "o1", "reasoning_effort"), ("https://api.openai.com/v1", "gpt-5", "reasoning_effort"),
    ("http://localhost:8000/v1", "Qwen/Qwen3-VL-8B-Instruct", "chat_template_kwargs"),
    ("http://10.0.0.5:30000/v1", "o10-custom", "chat_template_kwargs"),
])
def test_auto_picks_the_control_by_base_url_and_model(base_url, model, control):
    assert resolve_control("auto", base_url, model) == control
    assert resolve_control("none", base_url, model) == "none"


def test_the_lowest_effort_per_family_and_from_a_refusal():
    google = "https://generativelanguage.googleapis.com/v1beta/openai/"
    assert disable_effort(google, "gemini-2.5-pro") == "none"
    assert (disable_effort(None, "o3"), disable_effort(None, "gpt-5-nano")) == ("low", "minimal")
    text = ("Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. "
           "Supported values are: 'low', 'medium', and 'high'.")
    assert lower_effort_offered(text, "minimal") == "low"
    assert lower_effort_offered("Supported values are: 'medium' and 'high'.", "minimal") is None
    assert lower_effort_offered("some other failure", "minimal") is None
