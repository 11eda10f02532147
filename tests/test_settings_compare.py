"""The Model panel's "Compare with" (issue 19): a second model on its own server and key (kept in
the session state only), refused with one line when it is the model itself or the baseline, and a
recorded pair picked under Replay sets both sides, the side that steered first, so it replays."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from backends.ask import ask
from backends.base import GenerationRequest, Message
from backends.errors import BackendError
from backends.pair import PairedBackend
from backends.record import RecordingBackend
from components.settings import traces
from components.settings.session import SessionSettings, backend_for, compare_backend_for
from components.common.ui import UNCHANGED
from components.common.model_panel import NO_COMPARE, SAME_AS_MODEL, apply_settings, pick_replay, replay_sides
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


def _apply(spec: str, compare: str, *, url: str = "", key: str = "", state: dict | None = None,
           base_url: str = "http://127.0.0.1:9/v1", api_key: str = "sk-model-1"):
    return apply_settings(spec, base_url, api_key, 16, False, SAME_AS_MODEL, "auto", state or {},
                          _Request("visitor1"), compare=compare, compare_base_url=url,
                          compare_api_key=key)


def test_compare_with_its_own_server_and_key_kept_in_the_session_only():
    state, badge = _apply("openai:model-a", "openai:model-b", url="http://127.0.0.1:10/v1",
                          key="sk-second-2")
    assert state["compare"] == "openai:model-b" and badge.endswith("compare with: openai:model-b")
    assert "sk-second-2" not in badge and "sk-second-2" not in repr(SessionSettings.from_state(state))
    paired = backend_for(state)
    assert isinstance(paired, PairedBackend)
    assert paired.primary.settings.base_url == "http://127.0.0.1:9/v1"
    assert paired.partner.settings.base_url == "http://127.0.0.1:10/v1"
    assert paired.partner.settings.api_key == "sk-second-2"
    assert paired.primary.settings.api_key == "sk-model-1"
    # applied again with empty key boxes (the page clears them): both keys are kept
    again, _ = _apply("openai:model-a", "openai:model-b", url="http://127.0.0.1:10/v1", state=state,
                      api_key="")
    assert again["compare_api_key"] == "sk-second-2" and again["api_key"] == "sk-model-1"
    # no server of its own: the model's
    same, _ = _apply("openai:model-a", "openai:model-b")
    assert compare_backend_for(same).settings.base_url == "http://127.0.0.1:9/v1"
    assert compare_backend_for(same).settings.api_key == "sk-model-1"


def test_two_no_model_methods_pair_offline_and_the_panel_offers_them_as_methods():
    from backends.pair import method_pair
    from components.common.model_panel import compare_choices_for

    state, badge = _apply("baseline:text", "baseline:rag")
    first, second = method_pair(backend_for(state))
    assert (first.backend_id, second.backend_id) == ("baseline:text", "baseline:rag")
    assert badge.startswith("Method: baseline:text") and "compare with: baseline:rag" in badge
    assert SessionSettings.from_state(state).baseline_only   # nothing to record
    offered = compare_choices_for(SessionSettings(), ["baseline"])
    methods = [c for c in offered if isinstance(c, tuple)]
    assert {v for _, v in methods} == {"baseline:text", "baseline:rag", "baseline:edge1", "baseline:edge4"}
    assert all("method" in label and "model" not in label for label, _ in methods)
    assert "baseline" not in offered   # the default baseline is no second side of its own


def test_nothing_compared_is_one_model_as_before():
    state, badge = _apply("openai:model-a", NO_COMPARE, url="http://127.0.0.1:10/v1", key="sk-x")
    assert state["compare"] == "" and state["compare_base_url"] == "" and state["compare_api_key"] == ""
    assert "compare" not in badge and not isinstance(backend_for(state), PairedBackend)


def test_compare_with_the_model_itself_or_a_method_beside_a_model_is_one_line_at_apply():
    with pytest.raises(BackendError, match="names the model itself"):
        _apply("openai:model-a", "openai:model-a")
    with pytest.raises(BackendError, match="baseline is a method .* openai:model-a a model"):
        _apply("openai:model-a", "baseline")
    with pytest.raises(BackendError, match="baseline:edge4 is a method .* openai:model-b a model"):
        _apply("baseline:edge4", "openai:model-b")
    with pytest.raises(BackendError, match="names the model itself"):
        _apply("baseline:text", "baseline:text")
    with pytest.raises(BackendError, match="Did you mean 'openai'"):
        _apply("openai:model-a", "opneai:model-b")


def _record_pair(path: Path) -> GenerationRequest:
    """A real compared call recorded to one trace; the steering side answers last."""
    request = GenerationRequest([Message.text("user", "Which clip?")], task="cloze.answer", ref="s1")
    first = RecordingBackend(ScriptedBackend(["B"], name="first",
                                             on_generate=lambda _r: time.sleep(0.3)), path)
    second = RecordingBackend(ScriptedBackend(["D"], name="second"), path)
    ask(PairedBackend(first, second), request, lambda text: text, attempts=1)
    return request


def test_a_recorded_pair_picked_under_replay_sets_both_sides_steering_side_first(folder):
    request = _record_pair(folder / "talk.jsonl")
    lines = (folder / "talk.jsonl").read_text().splitlines()
    assert '"scripted:second"' in lines[0]  # the compared side was written first
    assert traces.recorded_backends("talk.jsonl", "visitor1") == ["scripted:first", "scripted:second"]
    assert replay_sides("talk.jsonl", "visitor1") == ["replay:talk.jsonl#scripted:first",
                                                      "replay:talk.jsonl#scripted:second"]
    picked = pick_replay("talk.jsonl", [NO_COMPARE, "openai:x"], _Request("visitor1"))
    spec, compare = picked.spec, picked.compare
    assert picked.compare_panel == {"__type__": "update", "open": True}   # the fold opens on both sides
    assert spec["value"] == "replay:talk.jsonl#scripted:first"
    assert compare["value"] == "replay:talk.jsonl#scripted:second"
    assert compare["choices"] == [NO_COMPARE, "openai:x", "replay:talk.jsonl#scripted:first",
                                  "replay:talk.jsonl#scripted:second"]
    state, badge = apply_settings(spec["value"], "", "", 16, False, SAME_AS_MODEL, "auto", {},
                                  _Request("visitor1"), compare=compare["value"])
    assert "compare with: replay:talk.jsonl#scripted:second" in badge
    replayed = ask(backend_for(state), request, lambda text: text, attempts=1)
    assert (replayed.value, replayed.partner.value) == ("B", "D")


def test_a_trace_of_one_backend_sets_the_backend_only(folder):
    request = GenerationRequest([Message.text("user", "Which clip?")], task="cloze.answer", ref="s1")
    RecordingBackend(ScriptedBackend(["B"]), folder / "solo.jsonl").generate(request)
    picked = pick_replay("solo.jsonl", [NO_COMPARE], _Request("visitor1"))
    assert picked.spec["value"] == "replay:solo.jsonl" and picked.compare is UNCHANGED
    assert picked.compare_panel is UNCHANGED


def test_a_compared_replay_that_is_not_a_listed_trace_is_refused_at_apply(folder):
    with pytest.raises(BackendError, match="not one of the recorded traces"):
        _apply("openai:model-a", "replay:/etc/passwd")


def test_the_two_sides_of_a_pair_answer_at_once():
    """Both sides are asked at the same time (so the trace's order says nothing about the sides)."""
    started = threading.Barrier(2, timeout=5)
    first = ScriptedBackend(["B"], name="first", on_generate=lambda _r: started.wait())
    second = ScriptedBackend(["D"], name="second", on_generate=lambda _r: started.wait())
    request = GenerationRequest([Message.text("user", "Which clip?")], task="cloze.answer", ref="s1")
    asked = ask(PairedBackend(first, second), request, lambda text: text, attempts=1)
    assert (asked.value, asked.partner.value) == ("B", "D")
    assert (first.requests[0].pair_side, second.requests[0].pair_side) == ("first", "second")
