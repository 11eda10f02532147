"""A file that is not a trace is refused when a replay backend is built, with a message naming the
file (never its folder) and what is wrong; a miss names the call and the real way to record it."""
from __future__ import annotations

import json

import pytest
from PIL import Image

from backends.base import GenerationParams, GenerationRequest, Message
from backends.errors import BackendError, ReplayMissError
from backends.record import RecordingBackend
from backends.registry import resolve
from backends.replay import ReplayBackend
from backends.trace_format import read_trace, without_folders
from tests.backends.support import ScriptedBackend


def _refusal(path) -> str:
    with pytest.raises(BackendError) as info:
        ReplayBackend(path)
    message = str(info.value)
    assert str(path.parent) not in message  # the server's folders are never shown
    assert "Traceback" not in message
    return message


@pytest.mark.parametrize("content, expected", [
    ('{"hello": 1}\n', "'not-a-trace.jsonl', line 1, is not a trace record: it lacks 'key', "
                       "'backend', 'response'"),
    ("", "'not-a-trace.jsonl' is empty: it holds no recorded model call"),
    ("\n  \n", "'not-a-trace.jsonl' is empty"),
    ('{"stem": "ball_roll", "dim": "S", "answer": "B"}\n{"stem": "cup", "dim": "A", "answer": "C"}\n',
     "line 1, is not a trace record"),
    ('{\n  "ball_roll": {"S": "B"}\n}\n', "is a single JSON document, not a trace"),
    ('{"key": "k", "backend": "b", "response": "r"}\nnot json\n', "line 2, is not JSON"),
    ('[1, 2, 3]\n', "line 1, is not a trace record"),
    ('{"key": "k", "backend": "b", "response": 7}\n', "line 1, is not a trace record"),
])
def test_a_file_that_is_not_a_trace_is_refused_naming_the_file(tmp_path, content, expected):
    path = tmp_path / "not-a-trace.jsonl"
    path.write_text(content, encoding="utf-8")
    message = _refusal(path)
    assert expected in message


def test_missing_folder_and_binary_files_are_refused_with_what_to_do(tmp_path):
    missing = _refusal(tmp_path / "gone.jsonl")
    assert "'gone.jsonl' does not exist" in missing
    assert "--record <trace.jsonl>" in missing and "Record this session's model calls" in missing
    assert "--record-to" not in missing  # no such flag
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    assert "is a folder, not a trace file" in _refusal(folder)
    binary = tmp_path / "video.jsonl"
    binary.write_bytes(b"\x00\x00\x00\x18ftypmp42\xff\xfe\x00")
    assert "is not a text file" in _refusal(binary)


def test_the_spec_path_is_refused_when_built_not_at_the_first_call(tmp_path):
    path = tmp_path / "hello.jsonl"
    path.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(BackendError, match="'hello.jsonl', line 1, is not a trace record"):
        resolve(f"replay:{path}")


def test_read_trace_returns_every_recorded_call(tmp_path):
    trace = tmp_path / "t.jsonl"
    recorder = RecordingBackend(ScriptedBackend(["one", "two"]), trace)
    for ref in ("a", "b"):
        recorder.generate(GenerationRequest([Message.text("user", f"q {ref}")], task="t", ref=ref))
    assert [(r["ref"], r["response"]) for r in read_trace(trace)] == [("a", "one"), ("b", "two")]


def test_a_miss_names_task_ref_and_the_record_flag_never_a_server_folder(tmp_path):
    trace = tmp_path / "talk.jsonl"
    RecordingBackend(ScriptedBackend(["B"]), trace).generate(
        GenerationRequest([Message.text("user", "Which clip?")], task="cloze.answer", ref="stem01"))
    replay = ReplayBackend(trace)
    upload = "/tmp/gradio/4f2a9c1e/My Movie/clip.mp4"
    asked = GenerationRequest([Message("user", [f"Look at {upload}: which clip?",
                                                 Image.new("RGB", (8, 8))])],
                              GenerationParams(max_tokens=8), task="aws.inspect",
                              ref="/tmp/gradio/4f2a9c1e/m01:3")
    with pytest.raises(ReplayMissError) as info:
        replay.generate(asked)
    message = str(info.value)
    assert "'talk.jsonl' has no answer" in message
    assert "task=aws.inspect" in message and "ref=m01:3" in message and "1 image(s)" in message
    assert "--record <trace.jsonl>" in message and "Record this session's model calls" in message
    assert "/tmp/gradio" not in message and str(tmp_path) not in message
    assert "clip.mp4" in message  # the file name is kept: it tells calls apart


def test_without_folders_keeps_urls_dates_and_fractions():
    text = "movie /data/films/m01.mp4 on 01/05/2024, see http://host/a/b and 3/4 of C:\\x\\y.mp4"
    assert without_folders(text) == ("movie m01.mp4 on 01/05/2024, see http://host/a/b and 3/4 "
                                      "of y.mp4")


def test_old_traces_with_absolute_image_paths_still_replay(tmp_path):
    trace = tmp_path / "old.jsonl"
    frame = Image.new("RGB", (16, 12), (200, 40, 40))
    request = GenerationRequest([Message("user", ["Which clip?", frame])], task="cloze.answer",
                                ref="s1")
    RecordingBackend(ScriptedBackend(["C"]), trace).generate(request)
    record = json.loads(trace.read_text(encoding="utf-8"))
    for part in record["messages"][0]["content"]:
        if part["type"] == "image":  # as an old trace wrote them: absolute, on another machine
            part["path"] = f"/home/someone/talk/old_images/{part['sha256']}.png"
    trace.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert ReplayBackend(trace).generate(request).text == "C"
