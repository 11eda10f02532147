"""The backend posts its request body itself (not through `chat.completions.create`, whose schema
walk costs ~1.6 ms of CPU a call): the JSON on the wire is exactly what create() sends for the same
arguments, the thinking switch and an image included (a refused field renamed for the next
attempt: test_openai_api.py::test_max_completion_tokens_fallback)."""
from __future__ import annotations

import openai
import pytest
from PIL import Image

from backends.base import GenerationParams, GenerationRequest, Message
from backends.config import ApiSettings
from backends.openai_api import OpenAIBackend, to_openai_messages
from tests.backends.support import FAST, SECRET


@pytest.fixture(autouse=True)
def _no_thinking_env(monkeypatch):
    monkeypatch.delenv("APP_THINKING_CONTROL", raising=False)


def _request(thinking: bool | None) -> GenerationRequest:
    image = Image.new("RGB", (64, 48), (200, 40, 10))
    return GenerationRequest([Message("system", ["You name body regions."]),
                              Message("user", [image, "Which body regions are hit?"])],
                             GenerationParams(temperature=0.0, max_tokens=32, stop=["\n\n"],
                                              thinking=thinking), task="impact.regions", ref="h1#70")


@pytest.mark.parametrize("thinking", [False, None])
def test_the_body_on_the_wire_is_the_one_create_sends(serve, thinking):
    with serve(["head", "head"]) as server:
        backend = OpenAIBackend("test-model", ApiSettings(base_url=server.url, api_key=SECRET,
                                                          timeout_s=5.0), policy=FAST)
        request = _request(thinking)
        assert backend.generate(request).text == "head"
        sdk = openai.OpenAI(base_url=server.url, api_key=SECRET, max_retries=0)
        sdk.chat.completions.create(**backend._kwargs(to_openai_messages(request.messages), request))
        ours, theirs = server.requests
    assert ours == theirs
    assert ours["messages"][1]["content"][0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert ("chat_template_kwargs" in ours) == (thinking is False)

