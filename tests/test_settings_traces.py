"""The Model panel's recording and replay: which traces are listed, what a picked trace resolves
to, bad traces refused at Apply, what recording says, and the download copy."""
from __future__ import annotations

import os
from pathlib import Path

import gradio as gr
import pytest

from backends.base import GenerationRequest, Message
from backends.errors import BackendError
from backends.record import RecordingBackend
from components.settings import traces
from components.settings.session import SessionSettings, backend_for
from components.common.model_panel import SAME_AS_MODEL, apply_settings, recording_view, replay_choices
from components.common.ui import UNCHANGED, outputs
from tests.backends.support import ScriptedBackend


class _Request:
    def __init__(self, session_hash: str):
        self.session_hash = session_hash


@pytest.fixture()
def folder(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "traces"
    monkeypatch.setenv("APP_TRACE_DIR", str(path))
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("APP_ADMIN", raising=False)
    return traces.trace_dir()


def _record(path: Path, replies: list[str], ref: str = "r1") -> GenerationRequest:
    request = GenerationRequest([Message.text("user", f"Which clip? {ref}")], task="cloze.answer",
                                ref=ref)
    recorder = RecordingBackend(ScriptedBackend(replies), path)
    for _ in replies:
        recorder.generate(request)
    return request


def _served(download) -> Path:
    """The file a DownloadButton update offers (gradio has already put it in its cache)."""
    value = download.value
    return Path(value["path"] if isinstance(value, dict) else value)


def _apply(spec: str, *, record: bool = False, session: str = "visitor1", localizer: str = "",
           server_specs: set[str] | None = None):
    return apply_settings(spec, "", "", 16, record, localizer or SAME_AS_MODEL, "auto", {},
                          _Request(session), server_specs=server_specs)


def test_traces_are_listed_newest_first_with_their_call_counts(folder):
    _record(folder / "older.jsonl", ["A"])
    _record(folder / "newer.jsonl", ["A", "B", "C"])
    (folder / "notes.txt").write_text("not a trace", encoding="utf-8")
    os.utime(folder / "older.jsonl", (1_700_000_000, 1_700_000_000))
    os.utime(folder / "newer.jsonl", (1_800_000_000, 1_800_000_000))
    listed = traces.list_traces("visitor1")
    assert [(e.name, e.calls) for e in listed] == [("newer.jsonl", 3), ("older.jsonl", 1)]
    assert replay_choices("visitor1")[0] == (listed[0].label, "newer.jsonl")
    assert "3 call(s)" in listed[0].label and "2027-01-15" in listed[0].label


def test_a_public_space_lists_the_operators_traces_and_the_visitors_own_only(folder, monkeypatch):
    for name in ("talk.jsonl", traces.session_trace_name("alice"), traces.session_trace_name("bob")):
        _record(folder / name, ["A"])
    everyone = {e.name for e in traces.list_traces("alice")}
    assert everyone == {"talk.jsonl", "session-alice.jsonl", "session-bob.jsonl"}  # a laptop
    monkeypatch.setenv("SPACE_ID", "user/space")
    assert {e.name for e in traces.list_traces("alice")} == {"talk.jsonl", "session-alice.jsonl"}
    assert traces.listed_trace("session-bob.jsonl", "alice") is None
    with pytest.raises(BackendError, match="not one of the recorded traces"):
        _apply("replay:session-bob.jsonl", session="alice")
    monkeypatch.setenv("APP_ADMIN", "1")
    assert len(traces.list_traces("alice")) == 3


def test_a_picked_trace_replays_from_the_trace_folder(folder):
    request = _record(folder / "talk.jsonl", ["B"])
    state, text = _apply("replay:talk.jsonl")
    assert "Model: replay:talk.jsonl" in text and str(folder) not in text
    assert traces.resolve_replay_spec("replay:talk.jsonl") == f"replay:{folder / 'talk.jsonl'}"
    assert backend_for(state).generate(request).text == "B"


@pytest.mark.parametrize("spec", ["replay:/etc/passwd", "replay:../traces/talk.jsonl",
                                  "replay:elsewhere.jsonl"])
def test_typed_server_paths_are_refused_at_apply(folder, spec):
    _record(folder / "talk.jsonl", ["B"])
    with pytest.raises(BackendError) as info:
        _apply(spec)
    message = str(info.value)
    assert "not one of the recorded traces" in message and "Replay a recorded trace" in message
    assert "/etc" not in message and str(folder) not in message
    with pytest.raises(BackendError, match="not one of the recorded traces"):
        _apply("baseline", localizer=spec)  # the localizer is checked the same way


@pytest.mark.parametrize("content, expected", [
    ('{"hello": 1}\n', "'bad.jsonl', line 1, is not a trace record"),
    ("", "'bad.jsonl' is empty"),
    ('{"qid": "h0001", "windows": [[1, 2]]}\n', "'bad.jsonl', line 1, is not a trace record"),
])
def test_a_listed_file_that_is_not_a_trace_is_refused_at_apply(folder, content, expected):
    (folder / "bad.jsonl").write_text(content, encoding="utf-8")
    assert "bad.jsonl" in dict((v, k) for k, v in replay_choices("visitor1"))
    with pytest.raises(BackendError) as info:
        _apply("replay:bad.jsonl")
    assert expected in str(info.value) and str(folder) not in str(info.value)


def test_the_servers_own_replay_spec_is_accepted_and_checked(folder, tmp_path):
    outside = tmp_path / "cli-trace.jsonl"
    request = _record(outside, ["D"])
    state, _ = _apply(f"replay:{outside}", server_specs={f"replay:{outside}"})
    assert backend_for(state).generate(request).text == "D"
    broken = tmp_path / "cli-broken.jsonl"
    broken.write_text('{"hello": 1}\n', encoding="utf-8")
    with pytest.raises(BackendError, match="'cli-broken.jsonl', line 1"):
        _apply(f"replay:{broken}", server_specs={f"replay:{broken}"})


def _parts(view) -> tuple:
    """The recording view's four outputs, in the panel's order."""
    return view.record_note, view.download, view.timer, view.seen


def test_recording_with_the_baseline_says_there_is_nothing_to_record(folder):
    state, _ = _apply("baseline", record=True)
    note, download, timer, _ = _parts(recording_view(state))
    assert "Nothing to record" in note and "asks no model" in note
    assert download.visible is False and timer.active is False
    note, *_ = _parts(recording_view(_apply("baseline", record=False)[0]))
    assert note == ""


def test_recording_says_where_the_trace_goes_and_offers_a_copy(folder):
    state, text = _apply("baseline", record=True,
                         localizer="openai:loc")  # a model (the localizer) is asked: recorded
    settings = SessionSettings.from_state(state)
    assert "recording" in text and settings.trace_path == str(folder / "session-visitor1.jsonl")
    note, download, timer, seen = _parts(recording_view(state))
    assert "session-visitor1.jsonl" in note and str(folder) in note and "0 call(s)" in note
    assert download.visible is False and timer.active is True and seen == {}

    _record(Path(settings.trace_path), ["A", "B"])
    note, download, timer, seen = _parts(recording_view(state))
    assert "2 call(s)" in note and "--backend replay:" in note
    copy = _served(download)
    assert download.visible is True and copy != Path(settings.trace_path)
    assert copy.read_bytes() == Path(settings.trace_path).read_bytes()
    # a timer tick with nothing new sends nothing
    assert outputs(recording_view(state, seen, force=False)) == [gr.skip()] * 4
    _record(Path(settings.trace_path), ["C"], ref="r2")
    note, download, _, seen = _parts(recording_view(state, seen, force=False))
    assert "3 call(s)" in note  # the note follows at once; the download within 30 s
    assert download is UNCHANGED and copy.read_bytes().count(b"\n") == 2
    note, download, _, _ = _parts(recording_view(state, seen))  # Refresh
    assert _served(download).read_bytes().count(b"\n") == 3


def test_a_public_space_names_the_trace_but_not_the_servers_folder(folder, monkeypatch):
    monkeypatch.setenv("SPACE_ID", "user/space")
    state, _ = _apply("openai:m", record=True)
    _record(Path(SessionSettings.from_state(state).trace_path), ["A"])
    note, *_ = _parts(recording_view(state))
    assert "session-visitor1.jsonl" in note and str(folder) not in note
    assert "the app's trace folder" in note


def test_each_side_of_a_recorded_pair_is_offered_and_replays_from_the_folder(folder):
    """A trace recorded with "compare with" holds two backends' calls; each side replays as
    `replay:<name>#<backend id>` (resolved to the trace folder's file like a plain pick)."""
    from backends.pair import PairedBackend

    path = folder / "pair.jsonl"
    request = GenerationRequest([Message.text("user", "Which clip?")], task="cloze.answer", ref="p")
    RecordingBackend(ScriptedBackend(["B"], name="a"), path).generate(request)
    RecordingBackend(ScriptedBackend(["D"], name="b"), path).generate(request)
    assert traces.recorded_backends("pair.jsonl") == ["scripted:a", "scripted:b"]
    assert traces.recorded_backends("missing.jsonl") == []
    spec = "replay:pair.jsonl#scripted:b"
    assert traces.resolve_replay_spec(spec) == f"replay:{path}#scripted:b"
    traces.check_panel_spec(spec, set())  # a listed trace: accepted
    state = SessionSettings(backend="replay:pair.jsonl#scripted:a",
                            compare="replay:pair.jsonl#scripted:b").to_state()
    paired = backend_for(state)
    assert isinstance(paired, PairedBackend)
    assert paired.generate(request).text == "B" and paired.partner.generate(request).text == "D"
