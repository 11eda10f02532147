"""The shared Model panel's pure logic: per-session settings, spec validation, secrets kept out."""
from __future__ import annotations

import pytest

from backends.base import GenerationParams, GenerationRequest, Message
from backends.config import ApiSettings
from backends.errors import BackendError, UnknownBackendError
from backends.record import RecordingBackend
from backends.registry import configured_choices, resolve, split_spec, VLM_BACKENDS
from components.settings import session
from components.settings.session import SessionSettings, backend_for, badge, localizer_backend_for
from tests.backends.support import ScriptedBackend


def test_baseline_spec_resolves_to_the_no_model_backend():
    backend = backend_for({"backend": "baseline"})
    assert backend.is_baseline
    assert backend.backend_id == "baseline"


def test_unknown_spec_suggests_the_closest_name():
    with pytest.raises(UnknownBackendError) as err:
        resolve("opneai:gpt-4o")
    assert "Did you mean 'openai'" in str(err.value)
    assert "baseline" in str(err.value)


def test_spec_without_argument_is_rejected_with_the_expected_form():
    with pytest.raises(UnknownBackendError, match="'hf:<model or path>'"):
        split_spec("hf", VLM_BACKENDS)


def test_api_key_never_shows_in_reprs_or_badge():
    secret = "sk-secret-settings-987"
    settings = SessionSettings(backend="openai:gpt-4o", base_url="http://127.0.0.1:9/v1", api_key=secret)
    assert secret not in repr(settings)
    assert secret not in badge(settings.to_state())
    assert secret not in repr(ApiSettings(api_key=secret))


def test_settings_round_trip_through_session_state_and_ignore_unknown_keys():
    state = SessionSettings(backend="replay:t.jsonl", max_frames=16).to_state()
    state["unexpected"] = 1
    restored = SessionSettings.from_state(state)
    assert restored.backend == "replay:t.jsonl" and restored.max_frames == 16


def test_configured_choices_start_with_baseline_and_add_the_environment_list(monkeypatch):
    monkeypatch.setenv("APP_BACKENDS", "openai:gpt-4o, hf:Qwen/Qwen2.5-VL-7B-Instruct,baseline")
    assert configured_choices() == ["baseline", "openai:gpt-4o", "hf:Qwen/Qwen2.5-VL-7B-Instruct"]


def test_session_api_settings_take_precedence_over_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.invalid/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    resolved = ApiSettings(base_url="http://127.0.0.1:1/v1", api_key="session-key").resolved()
    assert resolved.base_url == "http://127.0.0.1:1/v1" and resolved.api_key == "session-key"
    fallback = ApiSettings().resolved()
    assert fallback.base_url == "http://env.invalid/v1" and fallback.api_key == "env-key"


def test_badge_drops_credentials_embedded_in_the_base_url():
    text = badge({"backend": "openai:m", "base_url": "http://user:sk-in-url-1@127.0.0.1:8000/v1?key=x"})
    assert "sk-in-url-1" not in text and "user" not in text and "key=x" not in text
    assert "127.0.0.1:8000/v1" in text


def test_a_sessions_backend_is_reused_across_clicks(tmp_path):
    state = SessionSettings(backend="openai:gpt-4o", base_url="http://127.0.0.1:9/v1",
                            api_key="sk-reuse-1").to_state()
    first = backend_for(state)
    assert backend_for(dict(state)) is first  # a second click: same client
    assert backend_for({**state, "max_frames": 8}) is first  # frames do not define the backend
    assert backend_for({**state, "api_key": "sk-reuse-2"}) is not first
    assert backend_for({**state, "base_url": "http://127.0.0.1:10/v1"}) is not first
    recording = backend_for({**state, "record": True, "trace_path": str(tmp_path / "t.jsonl")})
    assert recording is not first and recording.inner is not first


def test_the_backend_cache_is_bounded_and_holds_no_key(tmp_path):
    secret = "sk-cache-secret-555"
    for i in range(session.BACKEND_CACHE_SIZE + 5):
        backend_for({"backend": "openai:m", "base_url": f"http://127.0.0.1:{i + 1}/v1", "api_key": secret})
    assert len(session.BACKENDS.process) <= session.BACKEND_CACHE_SIZE
    assert secret not in repr(list(session.BACKENDS.process))


def test_replay_keeps_its_place_from_click_to_click(tmp_path):
    trace = tmp_path / "sampled.jsonl"
    request = GenerationRequest([Message.text("user", "Pick one.")],
                                GenerationParams(temperature=0.8), task="settings", ref="r1")
    recorder = RecordingBackend(ScriptedBackend(["first", "second"]), trace)
    assert [recorder.generate(request).text for _ in range(2)] == ["first", "second"]
    state = SessionSettings(backend=f"replay:{trace}").to_state()
    assert backend_for(state) is backend_for(state)
    clicks = [backend_for(state).generate(request).text for _ in range(2)]
    assert clicks == ["first", "second"]  # the second click gets the second recorded answer


def test_two_visitors_replaying_one_trace_each_start_at_the_first_answer(tmp_path):
    trace = tmp_path / "shared.jsonl"
    request = GenerationRequest([Message.text("user", "Pick one.")],
                                GenerationParams(temperature=0.8), task="settings", ref="r2")
    recorder = RecordingBackend(ScriptedBackend(["first", "second"]), trace)
    assert [recorder.generate(request).text for _ in range(2)] == ["first", "second"]
    alice = SessionSettings(backend=f"replay:{trace}", session="alice").to_state()
    bob = SessionSettings(backend=f"replay:{trace}", session="bob").to_state()
    assert backend_for(alice) is not backend_for(bob)
    assert backend_for(alice).generate(request).text == "first"
    assert backend_for(bob).generate(request).text == "first"  # alice's click did not move bob's place
    assert backend_for(alice).generate(request).text == "second"


# -- the localizer's own backend and the thinking switch (issue 13) ----------------------------
def test_the_localizer_is_the_models_backend_unless_chosen(tmp_path):
    state = SessionSettings(backend="openai:verifier", base_url="http://127.0.0.1:9/v1",
                            api_key="sk-loc-1").to_state()
    assert localizer_backend_for(state) is backend_for(state)
    assert localizer_backend_for({**state, "localizer": "openai:verifier"}) is backend_for(state)
    chosen = {**state, "localizer": "openai:timelens2"}
    localizer = localizer_backend_for(chosen)
    assert localizer.backend_id == "openai:timelens2" and localizer is not backend_for(chosen)
    assert backend_for(chosen).backend_id == "openai:verifier"
    assert localizer_backend_for(dict(chosen)) is localizer  # reused from click to click
    assert localizer.settings.base_url == "http://127.0.0.1:9/v1"  # the session's server
    recording = {**chosen, "record": True, "trace_path": str(tmp_path / "t.jsonl")}
    assert isinstance(localizer_backend_for(recording), RecordingBackend)
    assert localizer_backend_for(recording).inner.backend_id == "openai:timelens2"


def test_the_sessions_thinking_control_reaches_its_backend(monkeypatch):
    monkeypatch.delenv("APP_THINKING_CONTROL", raising=False)
    state = SessionSettings(backend="openai:m", base_url="http://127.0.0.1:9/v1").to_state()
    assert backend_for(state).thinking_control == "chat_template_kwargs"  # auto, self-hosted
    none = backend_for({**state, "thinking_control": "none"})
    assert none.thinking_control == "none" and none is not backend_for(state)
    with pytest.raises(BackendError, match="Unknown thinking control"):
        backend_for({**state, "thinking_control": "loud"})


def _recorded_trace(folder, name: str = "loc.jsonl"):
    """A real trace `name` in the app's trace folder (the panel replays only listed traces)."""
    request = GenerationRequest([Message.text("user", "Where?")], task="aws.localize", ref="q1")
    RecordingBackend(ScriptedBackend(["10 - 20 seconds"]), folder / name).generate(request)
    return request


def test_apply_validates_the_localizer_and_the_thinking_control(tmp_path, monkeypatch):
    from components.common.model_panel import SAME_AS_MODEL, apply_settings

    monkeypatch.setenv("APP_TRACE_DIR", str(tmp_path))
    request = _recorded_trace(tmp_path)
    state, text = apply_settings("baseline", "", "", 16, False, "replay:loc.jsonl", "none", {})
    assert state["localizer"] == "replay:loc.jsonl" and state["thinking_control"] == "none"
    assert "localizer: replay:loc.jsonl" in text
    assert localizer_backend_for(state).generate(request).text == "10 - 20 seconds"
    state, text = apply_settings("baseline", "", "", 16, False, SAME_AS_MODEL, "auto", state)
    assert state["localizer"] == "" and "localizer" not in text
    with pytest.raises(BackendError, match="Did you mean 'openai'"):
        apply_settings("baseline", "", "", 16, False, "opneai:timelens", "auto", {})
    with pytest.raises(BackendError, match="Unknown thinking control"):
        apply_settings("baseline", "", "", 16, False, SAME_AS_MODEL, "loud", {})


@pytest.mark.slow  # a live app (tests/test_slow_marks.py)
def test_set_backend_over_http_takes_the_localizer_and_keeps_its_old_arguments(tmp_path, monkeypatch):
    import gradio as gr
    from gradio_client import Client

    from components.common.model_panel import build_settings_panel

    monkeypatch.setenv("APP_TRACE_DIR", str(tmp_path))
    _recorded_trace(tmp_path)

    with gr.Blocks() as demo:
        build_settings_panel(SessionSettings())
    elem_ids = {getattr(block, "elem_id", None) for block in demo.blocks.values()}
    assert {"settings-backend", "settings-localizer", "settings-thinking-control",
            "settings-apply", "settings-max-frames", "settings-record", "settings-replay",
            "settings-refresh", "settings-record-note", "settings-trace-download"} <= elem_ids
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True)
    try:
        client = Client(url, verbose=False)
        badge_text, message = client.predict("baseline", "", "", 16, False, "replay:loc.jsonl", "none",
                                             api_name="/set_backend")
        assert message == ""
        assert "localizer: replay:loc.jsonl" in badge_text
        assert "Model: baseline" in client.predict("baseline", "", "", 16, False,
                                                   api_name="/set_backend")[0]  # the old five
    finally:
        demo.close()


def test_the_badge_says_recording_only_when_calls_are_written():
    from components.settings.session import badge

    assert badge({"backend": "openai:x", "record": True}).endswith("· recording")
    assert "recording" not in badge({"backend": "baseline", "record": True})          # "Nothing to record"
    assert "recording" not in badge({"backend": "replay:talk.jsonl", "record": True})  # answers from a trace


# -- "compare with": a second backend on the same requests (issue 19) -------------------------
def test_compare_with_pairs_the_sessions_backend_and_keeps_both_reused(tmp_path):
    from backends.pair import PairedBackend

    from components.settings.session import check_compare, compare_backend_for, own_backend_for

    state = SessionSettings(backend="openai:model-a", base_url="http://127.0.0.1:9/v1",
                            api_key="sk-cmp-1").to_state()
    assert compare_backend_for(state) is None and not isinstance(backend_for(state), PairedBackend)
    compared = {**state, "compare": "openai:model-b"}
    paired = backend_for(compared)
    assert isinstance(paired, PairedBackend)
    assert paired.backend_id == "openai:model-a" and paired.partner_id == "openai:model-b"
    assert paired.primary is own_backend_for(compared)          # the same cached clients
    assert paired.partner is compare_backend_for(compared)
    assert paired.partner.settings.base_url == "http://127.0.0.1:9/v1"
    assert localizer_backend_for(compared).partner is paired.partner  # the localizer is compared
    assert "compare with: openai:model-b" in badge(compared)
    recording = {**compared, "record": True, "trace_path": str(tmp_path / "pair.jsonl")}
    both = backend_for(recording)
    assert isinstance(both.primary, RecordingBackend) and isinstance(both.partner, RecordingBackend)
    assert both.primary.trace_path == both.partner.trace_path   # one trace, linked by pair ids
    check_compare(compared)
    with pytest.raises(BackendError, match="names the model itself"):
        check_compare({**state, "compare": "openai:model-a"})
    with pytest.raises(BackendError, match="baseline is a method"):
        check_compare({**state, "compare": "baseline"})
    assert SessionSettings.from_state(compared).compare == "openai:model-b"
