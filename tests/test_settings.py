"""The shared Model panel's pure logic: per-session settings, spec validation, secrets kept out."""
from __future__ import annotations

import pytest

from backends.errors import UnknownBackendError
from backends.config import ApiSettings
from backends.registry import configured_choices, resolve, split_spec, VLM_BACKENDS
from components.settings.session import SessionSettings, backend_for, badge


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
