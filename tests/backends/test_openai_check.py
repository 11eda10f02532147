"""Apply asks an API backend at once whether it can answer (backends/openai_api.check_reachable,
through the registry and the session settings): a real OpenAI-compatible server on 127.0.0.1 that
lists its models, one that lists none (a one-token request instead), one that wants another key,
and a closed port. Each failure is one line naming what failed; the key never appears in it."""
from __future__ import annotations

import pytest

from backends.config import ApiSettings
from backends.errors import BackendError
from backends.registry import check_reachable
from components.settings.session import SessionSettings, check_backends
from tests.helpers.live_app import free_port
from tests.helpers.openai_server import ScriptedOpenAIServer

KEY = "sk-right-key-123"


def _api(url: str, key: str = KEY) -> ApiSettings:
    return ApiSettings(base_url=url, api_key=key)


def test_a_listed_model_answers_and_no_request_is_spent():
    with ScriptedOpenAIServer(["never sent"], models=("model-a", "model-b"), api_key=KEY) as server:
        line = check_reachable("openai:model-b", api=_api(server.url))
        assert line is not None and "model-b" in line and server.url in line
        assert server.requests == []            # the list was enough: no completion asked


def test_an_unknown_model_is_named_with_what_the_server_has():
    with ScriptedOpenAIServer(["never sent"], models=("model-a", "model-b"), api_key=KEY) as server:
        with pytest.raises(BackendError) as caught:
            check_reachable("openai:nope", api=_api(server.url))
    line = str(caught.value)
    assert "no model `nope`" in line and "`model-a`" in line and "`model-b`" in line, line
    assert "\n" not in line


def test_a_wrong_key_is_named_and_never_shown():
    with ScriptedOpenAIServer(["never sent"], models=("model-a",), api_key=KEY) as server:
        with pytest.raises(BackendError) as caught:
            check_reachable("openai:model-a", api=_api(server.url, "sk-wrong-key-456"))
    line = str(caught.value)
    assert "refused the API key" in line and "401" in line, line
    assert "sk-wrong-key-456" not in line and KEY not in line


def test_a_closed_port_says_no_server_answers_there():
    url = f"http://127.0.0.1:{free_port()}/v1"     # bound a moment ago, closed now: nothing listens
    with pytest.raises(BackendError) as caught:
        check_reachable("openai:model-a", api=_api(url))
    line = str(caught.value)
    assert "no server answers at" in line and url in line and "connection refused" in line, line


def test_a_server_without_a_model_list_is_asked_one_token():
    with ScriptedOpenAIServer(["OK"], models=None) as server:
        line = check_reachable("openai:anything", api=_api(server.url))
        assert line is not None and "one-token" in line
        assert len(server.requests) == 1 and server.requests[0]["max_tokens"] == 1
        assert server.requests[0]["model"] == "anything"
    with ScriptedOpenAIServer([{"status": 404, "body": {"error": {"message": "The model `x` does not exist"}}}],
                              models=None) as server:
        with pytest.raises(BackendError, match="has no model `x`"):
            check_reachable("openai:x", api=_api(server.url))


def test_a_server_that_never_answers_is_given_up_in_the_time_allowed():
    import socket

    with socket.socket() as silent:     # accepts connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        with pytest.raises(BackendError, match="no answer in time"):
            check_reachable("openai:model-a", api=_api(url), timeout_s=0.5)


def test_nothing_is_asked_for_a_backend_without_a_server():
    assert check_reachable("baseline") is None
    assert check_backends(SessionSettings(backend="baseline:edge4")) == []


def test_the_session_asks_the_model_and_the_compared_model_on_their_own_servers():
    with ScriptedOpenAIServer(["never sent"], models=("model-a",), api_key=KEY) as first:
        closed = f"http://127.0.0.1:{free_port()}/v1"
        lines = check_backends(SessionSettings(backend="openai:model-a", base_url=first.url, api_key=KEY,
                                               compare="openai:model-b", compare_base_url=closed))
    assert len(lines) == 2, lines
    assert any(line.startswith("✓") and "model-a" in line for line in lines), lines
    assert any(line.startswith("⚠") and "model-b" in line and closed in line for line in lines), lines
