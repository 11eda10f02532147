"""Record a live backend to a trace, replay it offline, and keep secrets out of it."""
from __future__ import annotations

import hashlib
import io
import json

import pytest
from PIL import Image, ImageDraw

from backends.base import EncodedImage, GenerationParams, GenerationRequest, Message
from backends.errors import BackendError, ReplayMissError
from backends.openai_api import RetryPolicy
from backends.record import RecordingBackend
from backends.config import ApiSettings
from backends.registry import resolve
from backends.replay import ReplayBackend
from backends.trace_format import image_sha256
from tests.backends.support import SECRET, Reply, ScriptedBackend, api_backend


def frame(seed: int) -> Image.Image:
    image = Image.new("RGB", (64, 48), (seed * 30 % 256, 80, 160))
    ImageDraw.Draw(image).rectangle([seed, seed, seed + 20, seed + 10], fill=(255, 255, 0))
    return image


def cloze_request(frames: list[Image.Image], question: str, ref: str,
                  temperature: float = 0.0) -> GenerationRequest:
    content: list = []
    for i, image in enumerate(frames):
        content += [f"Frame {i + 1} at {i * 0.5:.1f} s:", image]
    content.append(question)
    return GenerationRequest(
        [Message.text("system", "Answer with one letter."), Message("user", content)],
        GenerationParams(temperature=temperature, max_tokens=16), task="cloze.answer", ref=ref)


def read_trace(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_record_then_replay_interleaved(serve, tmp_path):
    trace = tmp_path / "runs" / "trace.jsonl"
    frames = [frame(1), frame(2), frame(3)]
    first = cloze_request(frames, "Which clip fits the gap? A, B or C.", "stem01")
    second = cloze_request([frames[2], frames[0]], "Which is earlier?", "stem02")
    with serve(["B", "A"]) as server:
        recorder = RecordingBackend(api_backend(server), trace)
        live = [recorder.generate(first), recorder.generate(second)]
    assert [r.text for r in live] == ["B", "A"]
    assert recorder.backend_id == "openai:test-model"

    lines = read_trace(trace)
    assert len(lines) == 2
    line = lines[0]
    assert set(line) >= {"key", "backend", "model", "params", "messages", "response",
                         "latency_s", "created_at", "task", "ref"}
    assert (line["backend"], line["model"], line["response"]) == ("openai:test-model",
                                                                  "test-model", "B")
    assert (line["task"], line["ref"]) == ("cloze.answer", "stem01")
    assert line["params"] == first.params.as_dict()
    parts = line["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "image", "text", "image", "text", "image", "text"]
    assert parts[1]["sha256"] == image_sha256(frames[0])
    # each image stored once, beside the trace, and decodes to the same pixels
    stored = sorted((tmp_path / "runs" / "trace_images").iterdir())
    assert len(stored) == 3
    for part in parts[1::2]:
        image = Image.open(trace.parent / part["path"])
        assert image_sha256(image) == part["sha256"]

    replay = ReplayBackend(trace)
    assert replay.backend_id == "replay:trace.jsonl"
    # replay in another order, with frames decoded again from the stored PNGs
    reloaded = [Image.open(trace.parent / p["path"]).convert("RGB") for p in parts[1::2]]
    again_second = replay.generate(cloze_request([reloaded[2], reloaded[0]], "Which is earlier?",
                                                 "stem02"))
    again_first = replay.generate(cloze_request(reloaded, "Which clip fits the gap? A, B or C.",
                                                "stem01"))
    assert (again_first.text, again_second.text) == ("B", "A")
    assert again_first.model == "test-model" and again_first.backend == "replay:trace.jsonl"
    assert again_first.usage == live[0].usage


def test_replay_miss_names_the_call(serve, tmp_path):
    trace = tmp_path / "trace.jsonl"
    with serve(["C"]) as server:
        RecordingBackend(api_backend(server), trace).generate(
            cloze_request([frame(1)], "Which clip fits?", "stem07"))
    replay = resolve(f"replay:{trace}")
    changed = cloze_request([frame(1), frame(2)], "Which clip fits? Think about the order of "
                            "events in the video before you answer, then give one letter.",
                            "stem07")
    with pytest.raises(ReplayMissError) as info:
        replay.generate(changed)
    message = str(info.value)
    assert "trace.jsonl" in message and "cloze.answer" in message and "stem07" in message
    assert "2 image(s)" in message
    assert "Frame 1 at 0.0 s: Frame 2 at 0.5 s: Which clip fits? Think about the" in message
    assert "order of events in the video before you answer" not in message  # first 80 chars only
    # different parameters are a different call too
    params_changed = cloze_request([frame(1)], "Which clip fits?", "stem07", temperature=0.7)
    with pytest.raises(ReplayMissError):
        replay.generate(params_changed)
    assert replay.generate(cloze_request([frame(1)], "Which clip fits?", "stem07")).text == "C"


def test_errors_are_not_recorded(serve, tmp_path):
    trace = tmp_path / "trace.jsonl"
    with serve([{"status": 500}, "D"]) as server:
        recorder = RecordingBackend(api_backend(server, policy=RetryPolicy(max_retries=0)), trace)
        failed = recorder.generate(cloze_request([frame(4)], "?", "e1"))
        assert not failed.ok
        assert not trace.exists() or read_trace(trace) == []
        assert recorder.generate(cloze_request([frame(4)], "?", "e1")).text == "D"
    assert [line["response"] for line in read_trace(trace)] == ["D"]


def test_repeated_calls_replay_in_recorded_order(serve, tmp_path):
    trace = tmp_path / "sampled.jsonl"
    req = cloze_request([frame(5)], "Pick one.", "s1", temperature=0.8)
    with serve(["first", "second"]) as server:
        recorder = RecordingBackend(api_backend(server), trace)
        assert [recorder.generate(req).text for _ in range(2)] == ["first", "second"]
    replay = ReplayBackend(trace)
    assert [replay.generate(req).text for _ in range(3)] == ["first", "second", "second"]


def test_secrets_never_reach_the_trace(serve, tmp_path):
    trace = tmp_path / "secret-check" / "trace.jsonl"
    with serve(["A", {"status": 401, "body": {"error": {"message": f"bad key {SECRET}"}}}]) as server:
        backend = resolve("openai:test-model", record_to=trace,
                          api=ApiSettings(base_url=server.url, api_key=SECRET, max_retries=0))
        assert backend.generate(cloze_request([frame(6)], "?", "k1")).ok
        refused = backend.generate(cloze_request([frame(7)], "?", "k2"))
    auth = {k.lower(): v for k, v in server.headers_seen[0].items()}["authorization"]
    assert SECRET in auth  # the key really was used
    assert not refused.ok and SECRET not in refused.error
    files = [p for p in trace.parent.rglob("*") if p.is_file()]
    assert len(files) == 2  # the trace and one image
    for path in files:
        assert SECRET.encode() not in path.read_bytes()


def test_replay_of_missing_or_broken_trace(tmp_path):
    with pytest.raises(BackendError, match="does not exist"):
        ReplayBackend(tmp_path / "none.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"key": "x", "backend": "b", "response": "r"}\nnot json\n')
    with pytest.raises(BackendError, match="line 2"):
        ReplayBackend(broken)


def test_replay_reads_calls_recorded_after_it_was_built_and_keeps_its_place(tmp_path):
    trace = tmp_path / "growing.jsonl"
    req = cloze_request([frame(8)], "Pick one.", "g1", temperature=0.8)
    recorder = RecordingBackend(ScriptedBackend(["first", "second", "third"]), trace)
    recorder.generate(req)
    recorder.generate(req)
    replay = ReplayBackend(trace)
    assert replay.generate(req).text == "first"
    later = cloze_request([frame(9)], "Another one.", "g2")
    recorder.generate(later)  # "third", recorded while the replay is in use
    with open(trace, "a", encoding="utf-8") as fh:
        fh.write('{"key": "torn')  # a write still under way: the answers read before still serve
    assert replay.generate(req).text == "second"
    trace.write_text(trace.read_text(encoding="utf-8").rsplit("\n", 1)[0] + "\n", encoding="utf-8")
    assert replay.generate(later).text == "third"
    assert replay.generate(req).text == "second"  # after the last, the last repeats


# -- finish_reason and encoded images (issue 13) -----------------------------------------------
def encoded(seed: int) -> EncodedImage:
    buffer = io.BytesIO()
    frame(seed).save(buffer, format="JPEG", quality=80)
    return EncodedImage(buffer.getvalue(), "image/jpeg", 64, 48)


def test_finish_reason_is_recorded_and_replayed(tmp_path):
    trace = tmp_path / "trace.jsonl"
    cut = cloze_request([frame(1)], "Which clip fits?", "f1")
    whole = cloze_request([frame(2)], "Which clip fits?", "f2")
    recorder = RecordingBackend(ScriptedBackend([Reply('{"answer": "B', "length"),
                                                 Reply("B", "stop")]), trace)
    assert recorder.generate(cut).finish_reason == "length"
    recorder.generate(whole)
    assert [line["finish_reason"] for line in read_trace(trace)] == ["length", "stop"]
    replay = ReplayBackend(trace)
    assert replay.generate(cut).finish_reason == "length"
    assert replay.generate(whole).finish_reason == "stop"


def test_encoded_images_are_stored_as_their_bytes_and_replay_by_them(serve, tmp_path):
    trace = tmp_path / "trace.jsonl"
    images = [encoded(1), encoded(2)]
    request = cloze_request(images, "Which is earlier?", "e1")
    with serve(["A"]) as server:
        assert RecordingBackend(api_backend(server), trace).generate(request).text == "A"
    parts = read_trace(trace)[0]["messages"][1]["content"]
    stored = [p for p in parts if p["type"] == "image"]
    assert [p["sha256"] for p in stored] == [hashlib.sha256(i.data).hexdigest() for i in images]
    for part, image in zip(stored, images):
        assert part["path"].endswith(".jpg") and part["mime"] == "image/jpeg"
        assert (trace.parent / part["path"]).read_bytes() == image.data  # the bytes, as sent
    replay = ReplayBackend(trace)
    again = [EncodedImage((trace.parent / p["path"]).read_bytes(), "image/jpeg", 64, 48)
             for p in stored]
    assert replay.generate(cloze_request(again, "Which is earlier?", "e1")).text == "A"
    with pytest.raises(ReplayMissError):  # the same pictures as decoded frames are another call
        replay.generate(cloze_request([i.to_pil() for i in images], "Which is earlier?", "e1"))
