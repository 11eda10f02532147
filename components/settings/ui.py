"""The shared "Model" panel: which backend this session uses (held in session state only)."""
from __future__ import annotations

import os

import gradio as gr

from backends.config import THINKING_CONTROLS, check_thinking_control
from backends.errors import BackendError
from backends.registry import VLM_BACKENDS, configured_choices, split_spec
from components.settings.session import MAX_FRAMES_PER_REQUEST, SessionSettings, badge, trace_dir

_HELP = ("`baseline` needs no model (each tab's no-model method). `openai:<model>` uses any "
         "OpenAI-compatible server (vLLM, SGLang, OpenAI, Gemini): give its base URL and key here "
         "for this session only, or set OPENAI_BASE_URL / OPENAI_API_KEY on the server. "
         "`hf:<hub id or folder>` loads a local transformers model. `replay:<trace.jsonl>` answers from "
         "a recorded trace (offline talks). The **localizer** (window search's last step) may be its "
         "own backend, as in the CoM2 paper (an unchanged TimeLens2 apart from the verifier); by "
         "default it is the model above. The **thinking switch** is how a request that asks for "
         "thinking off (CoM2: off for every role) reaches the server: `auto` sends "
         "`reasoning_effort` to OpenAI reasoning models and Gemini, nothing to other OpenAI models, "
         "and `chat_template_kwargs` (`enable_thinking`) to any other server such as vLLM or SGLang; "
         "`none` never sends a switch (docs/decisions.md, Backends).")

#: the localizer choice meaning "the model's own backend"
SAME_AS_MODEL = "same as the model"


def _check_spec(spec: str) -> None:
    try:
        split_spec(spec, VLM_BACKENDS)
    except BackendError as exc:
        raise gr.Error(str(exc), print_exception=False) from None


def apply_settings(spec: str, base_url: str, api_key: str, max_frames: float, record: bool,
                   localizer: str | None = None, thinking_control: str | None = None,
                   state: dict | None = None,
                   request: gr.Request | None = None) -> tuple[dict, str]:
    """Validate and store this session's backend choice; returns (state, badge)."""
    spec = (spec or "baseline").strip()
    _check_spec(spec)
    localizer = (localizer or "").strip()
    localizer = "" if localizer in ("", SAME_AS_MODEL) else localizer
    if localizer:
        _check_spec(localizer)
    try:
        control = check_thinking_control(thinking_control) if (thinking_control or "").strip() else ""
    except BackendError as exc:
        raise gr.Error(str(exc), print_exception=False) from None
    previous = SessionSettings.from_state(state)
    session = getattr(request, "session_hash", None) or "cli"
    settings = SessionSettings(
        backend=spec, base_url=(base_url or "").strip(),
        api_key=(api_key or "").strip() or previous.api_key,
        max_frames=int(max_frames or previous.max_frames), record=bool(record),
        trace_path=str(trace_dir() / f"session-{session}.jsonl") if record else "", session=session,
        localizer=localizer, thinking_control=control)
    return settings.to_state(), badge(settings.to_state())


def _default_control(default: SessionSettings) -> str:
    try:
        return check_thinking_control(default.thinking_control
                                      or os.environ.get("APP_THINKING_CONTROL", ""))
    except BackendError:
        return "auto"


def build_settings_panel(default: SessionSettings) -> gr.State:
    """Render the badge + collapsed panel; returns the per-session settings state."""
    state = gr.State(default.to_state())
    badge_md = gr.Markdown(badge(default.to_state()), elem_id="backend-badge",
                           elem_classes=["backend-badge"])
    choices = configured_choices()
    if default.backend not in choices:
        choices = [default.backend] + choices
    localizer_choices = [SAME_AS_MODEL] + choices
    if default.localizer and default.localizer not in localizer_choices:
        localizer_choices.append(default.localizer)
    with gr.Accordion("Model", open=False, elem_id="settings-panel"):
        gr.Markdown(_HELP)
        with gr.Row():
            spec = gr.Dropdown(choices, value=default.backend, allow_custom_value=True,
                               label="Backend", elem_id="settings-backend",
                               info="pick or type a spec, e.g. openai:gpt-4o")
            base_url = gr.Textbox(label="API base URL (this session only)", elem_id="settings-base-url",
                                  placeholder="https://api.openai.com/v1 or http://localhost:8000/v1")
            api_key = gr.Textbox(label="API key (this session only, never stored)", type="password",
                                 elem_id="settings-api-key")
        with gr.Row():
            localizer = gr.Dropdown(localizer_choices, value=default.localizer or SAME_AS_MODEL,
                                    allow_custom_value=True, label="Localizer backend",
                                    elem_id="settings-localizer",
                                    info="window search's localizer; same server and key")
            thinking = gr.Dropdown(list(THINKING_CONTROLS), value=_default_control(default),
                                   label="Thinking switch", elem_id="settings-thinking-control",
                                   info="how 'thinking off' is sent to the server")
        with gr.Row():
            max_frames = gr.Slider(1, MAX_FRAMES_PER_REQUEST, value=default.max_frames, step=1, label="Max frames per request",
                                   elem_id="settings-max-frames")
            record = gr.Checkbox(value=default.record, label="Record this session's model calls",
                                 elem_id="settings-record")
            apply = gr.Button("Apply", variant="primary", elem_id="settings-apply")
    inputs = [spec, base_url, api_key, max_frames, record, localizer, thinking, state]
    apply.click(apply_settings, inputs, [state, badge_md], api_name="set_backend")
    # Clear the password box after applying so the key never sits in the page.
    apply.click(lambda: "", None, api_key, api_name=False)
    return state
