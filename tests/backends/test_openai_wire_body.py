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



# -- the bytes: a request's body is spliced, not JSON-encoded whole (backends.openai_api.body_bytes) --

def _jpeg(color: tuple[int, int, int], size=(64, 36)) -> bytes:
    import io

    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="JPEG", quality=85)
    return buf.getvalue()


def _cloze_like_request() -> GenerationRequest:
    """What a Cloze question sends: text around clips of encoded JPEGs, plus a picture made here,
    and text JSON must escape (quotes, backslashes, control characters, non-ASCII)."""
    from backends.base import EncodedImage

    clips = [[EncodedImage(_jpeg((16 * c, 9 * i, 200)), "image/jpeg", 64, 36) for i in range(4)]
             for c in range(3)]
    return GenerationRequest(
        [Message("system", ['You pick the clip that fits. Answer "<A>" \\ reason\n\t\x01 ✓ é 中']),
         Message("user", ["Before:", *clips[0], "After:", *clips[1], "Option A:", *clips[2],
                          Image.new("RGB", (40, 30), (1, 2, 3)),
                          "text that looks like data:image/jpeg;base64,AAAA\"}"])],
        GenerationParams(temperature=0.0, max_tokens=8192, thinking=False), task="cloze", ref="q1")


def test_the_bytes_on_the_wire_are_the_sdk_encoding_of_the_body(serve):
    """What was sent before the body was spliced: the SDK's client posting the body dict (its own
    JSON encoding); the same bytes now, to the byte."""
    with serve(["B", "B"]) as server:
        backend = OpenAIBackend("test-model", ApiSettings(base_url=server.url, api_key=SECRET,
                                                          timeout_s=5.0), policy=FAST)
        request = _cloze_like_request()
        assert backend.generate(request).text == "B"
        sdk = openai.OpenAI(base_url=server.url, api_key=SECRET, max_retries=0)
        sdk.post("/chat/completions", body=backend.request_body(to_openai_messages(request.messages),
                                                                request), cast_to=bytes)
        ours, theirs = server.raw_bodies
    assert ours == theirs
    assert ours.count(b'"url":"data:image/jpeg;base64,') == 13


def test_body_bytes_equal_the_sdk_serialiser_whatever_the_body_holds():
    from openai._utils._json import openapi_dumps

    from backends.openai_api import _MARK, body_bytes

    messages = to_openai_messages(_cloze_like_request().messages)
    body = {"model": "m", "messages": messages, "temperature": 0.0, "max_tokens": 5}
    assert body_bytes(body) == openapi_dumps(body)
    # a data URL this code did not make (a plain string, with a character JSON escapes) is
    # encoded by JSON as usual; text holding the splice mark falls back to encoding the whole body
    odd = {"type": "image_url", "image_url": {"url": 'data:image/png;base64,AB"CD', "detail": "low"}}
    strange = [*messages, {"role": "user", "content": [odd, {"type": "text", "text": _MARK}]},
               {"role": "assistant", "content": "plain"}]
    for value in ({**body, "messages": strange}, {"model": "m", "messages": []}, {"model": "m"}):
        assert body_bytes(value) == openapi_dumps(value)


def test_a_clip_sent_by_many_requests_is_base64_encoded_once(monkeypatch):
    """The frames a batch keeps in memory (a stem's before/after clips, asked by its S, A and P
    questions) are base64-encoded for their first request only."""
    import base64

    calls = []
    real = base64.b64encode
    monkeypatch.setattr(base64, "b64encode", lambda data, *a: calls.append(len(data)) or real(data, *a))
    request = _cloze_like_request()
    first = to_openai_messages(request.messages)
    assert len(calls) == 13                  # 12 encoded clips' frames + the picture made here
    second = to_openai_messages(request.messages)
    assert len(calls) == 14                  # only the picture again
    assert first == second


def test_an_image_part_of_another_shape_is_spliced_by_its_url_alone():
    """A part of the usual shape is spliced whole; one with more fields (a `detail`) or its keys in
    another order only by its data URL: the bytes equal the SDK's encoding either way."""
    from openai._utils._json import openapi_dumps

    from backends.images import data_url
    from backends.openai_api import body_bytes

    url = data_url("image/jpeg", _jpeg((5, 6, 7)))
    parts = [{"type": "image_url", "image_url": {"url": url}},
             {"type": "image_url", "image_url": {"url": url, "detail": "low"}},
             {"image_url": {"url": url}, "type": "image_url"},
             {"type": "text", "text": "which?"}]
    body = {"model": "m", "messages": [{"role": "user", "content": parts}], "max_tokens": 3}
    assert body_bytes(body) == openapi_dumps(body)


def test_pictures_of_any_mime_type_reach_a_plain_http_server_as_the_sdk_encodes_them(serve):
    """The plain http path puts an encoded picture's base64 into the body as bytes; a mime type
    whose data URL JSON must escape (a quote) goes the usual way: the bytes equal the SDK's
    encoding of the same body either way, and a picture sent twice is base64-encoded once."""
    from backends.base import EncodedImage

    jpeg = EncodedImage(_jpeg((9, 9, 9)), "image/jpeg", 64, 36)
    odd = EncodedImage(b"\x00\x01 not really a picture", 'image/x"odd', 2, 2)
    request = GenerationRequest([Message("user", ["One:", jpeg, "Two:", odd, "One again:", jpeg, "?"])],
                                GenerationParams(temperature=0.0, max_tokens=8), task="t", ref="r")
    with serve(["B", "B", "B"]) as server:
        backend = OpenAIBackend("test-model", ApiSettings(base_url=server.url, api_key=SECRET,
                                                          timeout_s=5.0), policy=FAST)
        assert backend._plain is not None
        assert backend.generate(request).text == "B"
        assert backend.generate(request).text == "B"
        sdk = openai.OpenAI(base_url=server.url, api_key=SECRET, max_retries=0)
        sdk.post("/chat/completions", body=backend.request_body(to_openai_messages(request.messages),
                                                                request), cast_to=bytes)
        first, second, theirs = server.raw_bodies
    assert first == second == theirs
    assert first.count(b'"url":"data:image/jpeg;base64,') == 2 and b'image/x\\"odd' in first
