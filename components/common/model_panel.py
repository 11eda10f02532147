"""The shared "Model" panel: which backend this session uses (held in session state only), what it
records, and the recorded traces it can replay. Its events go through the tabs' adapter
(components/common/ui.py TabEvents) with the panel's context `ModelPanel` first and a view per
event; a failure is one line on the panel's own message line, under Apply."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import gradio as gr

from backends.config import THINKING_CONTROLS, check_thinking_control
from backends.errors import BackendError
from backends.methods import OFFLINE_METHODS, is_method_spec, method_label, method_spec
from backends.registry import VLM_BACKENDS, configured_choices, split_spec
from components.common.ui import TabEvents, Update, View, markdown_safe, message_line, note
from components.settings.session import (MAX_FRAMES_PER_REQUEST, SessionSettings, backend_for, badge,
                                         check_backends, check_compare, localizer_backend_for)
from components.settings.traces import (check_panel_spec, list_traces, recorded_backends, recording_note,
                                        session_trace_name, trace_dir)

_HELP = ("`baseline` needs no model (each tab's no-model method). `openai:<model>` uses any "
         "OpenAI-compatible server (vLLM, SGLang, OpenAI, Gemini): give its base URL and key here "
         "for this session only, or set OPENAI_BASE_URL / OPENAI_API_KEY on the server. "
         "`hf:<hub id or folder>` loads a local transformers model. To give a talk offline, tick "
         "**Record** and Apply, run what you will show, then pick the trace under **Replay a "
         "recorded trace** and Apply: its calls are answered from the trace. The **localizer** "
         "(window search's last step) may be its own backend, as in the CoM2 paper (an unchanged "
         "TimeLens2 apart from the verifier); by default it is the model above. The **thinking switch** is how a request that asks for "
         "thinking off (CoM2: off for every role) reaches the server: `auto` sends "
         "`reasoning_effort` to OpenAI reasoning models and Gemini, nothing to other OpenAI models, "
         "and `chat_template_kwargs` (`enable_thinking`) to any other server such as vLLM or SGLang; "
         "`none` never sends a switch (docs/decisions.md, Backends). **Compare with** sends "
         "every request the model is sent to a second model too (the same frames, the same "
         "prompt; each tab then shows both answers side by side, the model above steering); it "
         "may live on its own server with its own key. Recording a compared session records "
         "both; picking that trace under **Replay** sets both sides, so the pair replays "
         "offline.")

#: the localizer choice meaning "the model's own backend"
SAME_AS_MODEL = "same as the model"
#: the "compare with" choice meaning "one model, nothing compared"
NO_COMPARE = "nothing (one side)"


@dataclass
class Applied(View):
    """Apply: the session's settings and the header's badge; the line says what answers or failed."""

    state: dict
    badge: str


@dataclass
class KeysCleared(View):
    """Apply empties the password boxes, so the keys never sit in the page."""

    api_key: str
    compare_key: str
    message: str | None = None


@dataclass
class RecordingView(View):
    """The session's recording: its note, the trace's download, the timer that follows the calls,
    and what the page shows (`seen`). A success leaves the panel's line as it is."""

    record_note: str
    download: gr.DownloadButton
    timer: gr.Timer
    seen: dict
    message: str | None = None


@dataclass
class ReplayList(View):
    """The traces the session may replay, newest first (Refresh, the panel opened)."""

    replay: gr.Dropdown
    message: str | None = None


@dataclass
class ReplayPicked(View):
    """A trace picked: the backend it replays; a recorded pair sets "Compare with" too and opens
    its fold."""

    spec: Update
    compare: Update
    compare_panel: Update
    message: str | None = None


@dataclass(frozen=True)
class ModelPanel:
    """What the panel's handlers share (they take it first, as a tab's handlers take the tab): the
    backends the server was started with (allowed whatever the listed choices), and the "compare
    with" choices offered."""

    server_specs: frozenset[str]
    compare_choices: tuple


def _check_spec(spec: str) -> None:
    split_spec(spec, VLM_BACKENDS)


def apply_settings(spec: str, base_url: str, api_key: str, max_frames: float, record: bool,
                   localizer: str | None = None, thinking_control: str | None = None,
                   state: dict | None = None, request: gr.Request | None = None, *,
                   compare: str | None = None, compare_base_url: str | None = None,
                   compare_api_key: str | None = None,
                   server_specs: set[str] | None = None) -> tuple[dict, str]:
    """Validate and store this session's backend choice; returns (state, badge). A replay spec
    must name a listed trace (or one the server was started with) and a readable trace: a bad one
    is refused here, not at the first model call. A "compare with" backend must be a model other
    than the session's (`check_compare`); it uses the model's server and key unless given its
    own. A refused choice raises BackendError (the panel shows it on its message line)."""
    spec = (spec or "baseline").strip()
    _check_spec(spec)
    localizer = (localizer or "").strip()
    localizer = "" if localizer in ("", SAME_AS_MODEL) else localizer
    if localizer:
        _check_spec(localizer)
    compare = (compare or "").strip()
    compare = "" if compare in ("", NO_COMPARE) else compare
    if compare:
        _check_spec(compare)
    control = check_thinking_control(thinking_control) if (thinking_control or "").strip() else ""
    previous = SessionSettings.from_state(state)
    session = getattr(request, "session_hash", None) or "cli"
    settings = SessionSettings(
        backend=spec, base_url=(base_url or "").strip(),
        api_key=(api_key or "").strip() or previous.api_key,
        max_frames=int(max_frames or previous.max_frames), record=bool(record),
        trace_path=str(trace_dir() / session_trace_name(session)) if record else "",
        session=session, localizer=localizer, thinking_control=control, compare=compare,
        compare_base_url=(compare_base_url or "").strip() if compare else "",
        compare_api_key=((compare_api_key or "").strip() or previous.compare_api_key) if compare else "")
    allowed = set(configured_choices()) | (server_specs or set())
    for chosen in (spec, localizer, compare):
        check_panel_spec(chosen, allowed, session)
    check_compare(settings)  # a second model, not the model itself nor the baseline
    if _is_replay(spec) or _is_replay(compare):
        backend_for(settings)  # reads the traces now (and keeps them for the session's clicks)
    if _is_replay(localizer):
        localizer_backend_for(settings)
    return settings.to_state(), badge(settings.to_state())


def _is_replay(spec: str) -> bool:
    return spec.strip().lower().startswith("replay:")


def replay_choices(session: str = "") -> list[tuple[str, str]]:
    """(label, name) of each trace the session may replay, newest first."""
    return [(entry.label, entry.name) for entry in list_traces(session)]


#: while a session records, the timer refreshes its download at most this often (every copy of a
#: growing trace also lands in gradio's file cache); Refresh and Apply always do
DOWNLOAD_REFRESH_S = 30.0


def _trace_stamp(path: Path) -> list[int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns]


def _download_copy(path: Path, session: str) -> Path:
    """A copy of the trace as it is now, in this session's own download folder (the recorder keeps
    appending to the original; a download is never a half-written line)."""
    folder = Path(tempfile.gettempdir()) / "video-bench-trace-downloads" / session_trace_name(session)
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / path.name
    shutil.copyfile(path, copy)
    return copy


def recording_view(state: dict | None, seen: dict | None = None, *, force: bool = True) -> RecordingView:
    """The session's recording (note, download button, timer, seen). `seen` remembers what the
    page shows. A timer tick (not forced) sends nothing for a trace the download already holds,
    and refreshes the download of a changed one at most every DOWNLOAD_REFRESH_S seconds (the
    note every tick)."""
    settings = SessionSettings.from_state(state)
    recording = settings.record and not settings.baseline_only
    path = Path(settings.trace_path) if recording and settings.trace_path else None
    now = _trace_stamp(path) if path else None
    seen = seen or {}
    if not force and now is not None and now == seen.get("copied_stamp"):
        return RecordingView()
    note = recording_note(settings.record, settings.baseline_only, settings.trace_path)
    timer = gr.Timer(active=recording)
    if now is None:
        return RecordingView(record_note=note, download=gr.DownloadButton(value=None, visible=False), timer=timer,
                             seen={})
    clock = time.monotonic()
    if not force and clock - seen.get("copied", 0.0) < DOWNLOAD_REFRESH_S:
        if now == seen.get("stamp"):
            return RecordingView()
        return RecordingView(record_note=note, seen={**seen, "stamp": now})
    copy = _download_copy(path, settings.session)
    return RecordingView(record_note=note, download=gr.DownloadButton(value=str(copy), visible=True), timer=timer,
                         seen={"stamp": now, "copied_stamp": now, "copied": clock})


def refresh_replay_list(panel: ModelPanel, request: gr.Request | None = None) -> ReplayList:
    """Refresh (or the panel opened): the traces this session may replay, none picked."""
    session = getattr(request, "session_hash", None) or "cli"
    return ReplayList(replay=gr.Dropdown(choices=replay_choices(session), value=None))


def replay_sides(name: str, session: str = "") -> list[str]:
    """The replay specs of a listed trace: `replay:<name>` for a trace of one backend; for a
    recorded pair ("compare with") `replay:<name>#<id>` for each side, the side that steered
    first (traces.recorded_backends)."""
    ids = recorded_backends(name, session)
    if len(ids) < 2:
        return [f"replay:{name}"]
    return [f"replay:{name}#{backend}" for backend in ids]


def pick_replay(name: str | None, compare_choices: list | None = None,
                request: gr.Request | None = None) -> ReplayPicked:
    """A trace picked in the list becomes the Backend choice (applied with Apply); a recorded
    pair sets both sides: the Backend to the side that steered, "Compare with" to the other, each
    side's spec offered in both lists, and opens "Compare with" to show them."""
    if not name:
        return ReplayPicked()
    session = getattr(request, "session_hash", None) or "cli"
    sides = replay_sides(name, session)
    if len(sides) < 2:
        return ReplayPicked(spec=gr.update(value=sides[0]))
    return ReplayPicked(spec=gr.update(value=sides[0]),
                        compare=gr.update(choices=_with(compare_choices or [NO_COMPARE], sides), value=sides[1]),
                        compare_panel=gr.update(open=True))


def _with(choices: list, extra: list[str]) -> list:
    have = {c[1] if isinstance(c, (list, tuple)) else c for c in choices}
    return list(choices) + [x for x in extra if x not in have]


def _default_control(default: SessionSettings) -> str:
    try:
        return check_thinking_control(default.thinking_control
                                      or os.environ.get("APP_THINKING_CONTROL", ""))
    except BackendError:
        return "auto"


OPEN_SIDEBAR_JS = """() => { const bar = document.querySelector('#app-sidebar');
  if (bar && !bar.classList.contains('open')) bar.querySelector('.toggle-button')?.click(); }"""


def model_badge(default: SessionSettings) -> gr.HTML:
    """The header's badge: the session's backend (plain text); a click opens the Model sidebar."""
    shown = gr.HTML(badge(default.to_state()), elem_id="backend-badge", elem_classes=["backend-badge"],
                    container=False)
    shown.click(None, js=OPEN_SIDEBAR_JS)
    return shown


def build_settings_panel(default: SessionSettings, badge_md: gr.HTML | None = None) -> gr.State:
    """Render the Model panel (the page's sidebar, closed until the badge or its edge is clicked);
    returns the per-session settings state.
    `badge_md` is the header's badge (made here when the page has none)."""
    state = gr.State(default.to_state())
    if badge_md is None:
        badge_md = model_badge(default)
    choices = configured_choices()
    if default.backend not in choices:
        choices = [default.backend] + choices
    localizer_choices = [SAME_AS_MODEL] + choices
    if default.localizer and default.localizer not in localizer_choices:
        localizer_choices.append(default.localizer)
    compare_choices = compare_choices_for(default, choices)
    with gr.Sidebar(label="Model", open=False, position="right", elem_id="app-sidebar", width=420) as sidebar, \
            gr.Column(elem_id="settings-panel"):
        spec = gr.Dropdown(choices + method_choices(), value=default.backend, allow_custom_value=True,
                           label="Backend", elem_id="settings-backend",
                           info="pick or type a spec, e.g. openai:gpt-4o")
        base_url = gr.Textbox(label="API base URL (this session only)", elem_id="settings-base-url",
                              placeholder="https://api.openai.com/v1 or http://localhost:8000/v1")
        api_key = gr.Textbox(label="API key (this session only, never stored)", type="password",
                             elem_id="settings-api-key")
        max_frames = gr.Slider(1, MAX_FRAMES_PER_REQUEST, value=default.max_frames, step=1,
                               label="Max frames per request", elem_id="settings-max-frames")
        with gr.Accordion("Compare with another backend", open=bool(default.compare),
                          elem_id="settings-compare-panel") as compare_panel:
            compare = gr.Dropdown(compare_choices, value=default.compare or NO_COMPARE,
                                  allow_custom_value=True, label="Compare with",
                                  elem_id="settings-compare",
                                  info="sent every request the model is sent; each tab shows both")
            compare_url = gr.Textbox(default.compare_base_url, label="Its API base URL (empty: the model's)",
                                     elem_id="settings-compare-base-url",
                                     placeholder="http://localhost:8001/v1")
            compare_key = gr.Textbox(label="Its API key (empty: the model's; never stored)", type="password",
                                     elem_id="settings-compare-api-key")
        record = gr.Checkbox(value=default.record, label="Record this session's model calls",
                             elem_id="settings-record")
        apply = gr.Button("Apply", variant="primary", elem_id="settings-apply")
        message = message_line("settings-message")   # the panel's own line, just under Apply
        record_note = gr.Markdown(elem_id="settings-record-note")
        download = gr.DownloadButton("Download the trace (JSONL)", visible=False, size="sm",
                                     elem_id="settings-trace-download")
        with gr.Row(equal_height=True):
            replay = gr.Dropdown(replay_choices(), value=None, label="Replay a recorded trace",
                                 elem_id="settings-replay", scale=3,
                                 info="newest first; picking one sets the backend, Apply uses it")
            refresh = gr.Button("Refresh", size="md", elem_id="settings-refresh", scale=1, min_width=80)
        with gr.Accordion("Advanced: localizer, thinking switch", open=False, elem_id="settings-advanced"):
            localizer = gr.Dropdown(localizer_choices, value=default.localizer or SAME_AS_MODEL,
                                    allow_custom_value=True, label="Localizer backend",
                                    elem_id="settings-localizer",
                                    info="window search's localizer; same server and key")
            thinking = gr.Dropdown(list(THINKING_CONTROLS), value=_default_control(default),
                                   label="Thinking switch", elem_id="settings-thinking-control",
                                   info="how 'thinking off' is sent to the server")
        with gr.Accordion("About the backends", open=False, elem_id="settings-help"):
            gr.Markdown(_HELP)
    timer = gr.Timer(3.0, active=False)  # while recording: the note and the download follow the calls
    seen = gr.State({})
    p = SimpleNamespace(state=state, badge=badge_md, spec=spec, compare=compare, compare_panel=compare_panel,
                        api_key=api_key, compare_key=compare_key, record_note=record_note, download=download,
                        timer=timer, seen=seen, replay=replay)
    panel = ModelPanel(server_specs=frozenset({default.backend, default.localizer, default.compare} - {""}),
                       compare_choices=tuple(compare_choices))
    _wire(TabEvents(panel, None, message, components=p), p, apply=apply, refresh=refresh, sidebar=sidebar,
          inputs=[spec, base_url, api_key, max_frames, record, localizer, thinking, compare, compare_url,
                  compare_key, state])
    return state


def apply_panel(panel: ModelPanel, spec: str, base_url: str, api_key: str, max_frames: float, record: bool,
                localizer: str | None = None, thinking_control: str | None = None, compare_with: str | None = None,
                compare_base_url: str | None = None, compare_api_key: str | None = None, state: dict | None = None,
                request: gr.Request | None = None) -> Applied:
    """Apply: a refused choice raises BackendError (the adapter says it on the panel's line and
    leaves the session as it was; never a toast). An applied API backend is asked at once whether
    it answers (its server's model list, or one tiny request; within 3 s): the line says what
    failed (no server, a refused key, an unknown model), or that it answers. The choice stays
    applied either way (a server started later is then used)."""
    applied, shown = apply_settings(spec, base_url, api_key, max_frames, record, localizer, thinking_control,
                                    state, request, compare=compare_with, compare_base_url=compare_base_url,
                                    compare_api_key=compare_api_key, server_specs=set(panel.server_specs))
    return Applied(state=applied, badge=shown, message=checked_line(check_backends(applied)))


def clear_keys(panel: ModelPanel) -> KeysCleared:
    return KeysCleared(api_key="", compare_key="")


def show_recording(panel: ModelPanel, state: dict | None) -> RecordingView:
    """Apply or Refresh: the recording's note and a fresh copy of its trace to download."""
    return recording_view(state)


def follow_recording(panel: ModelPanel, state: dict | None, seen: dict | None) -> RecordingView:
    """The timer, while recording: the note each tick, the download at most every DOWNLOAD_REFRESH_S."""
    return recording_view(state, seen, force=False)


def pick_panel_replay(panel: ModelPanel, name: str | None, request: gr.Request | None = None) -> ReplayPicked:
    return pick_replay(name, list(panel.compare_choices), request)


def _wire(ev: TabEvents, p: SimpleNamespace, *, apply: gr.Button, refresh: gr.Button, sidebar: gr.Sidebar,
          inputs: list) -> None:
    """The panel's events: a failure is said on its line; a success other than Apply's leaves the
    line as it is."""
    hidden = {"api_name": False, "show_progress": "hidden"}
    applied = ev.on(apply.click, apply_panel, inputs, Applied, kind="request", api_name="set_backend")
    ev.on(applied.success, show_recording, [p.state], RecordingView, **hidden)
    ev.on(apply.click, clear_keys, [], KeysCleared, api_name=False)
    ev.on(p.timer.tick, follow_recording, [p.state, p.seen], RecordingView, **hidden)
    ev.on(refresh.click, show_recording, [p.state], RecordingView, **hidden)
    ev.on([refresh.click, sidebar.expand], refresh_replay_list, [], ReplayList, kind="request", **hidden)
    # a recorded pair opens "Compare with", showing both sides it set
    ev.on(p.replay.input, pick_panel_replay, [p.replay], ReplayPicked, kind="request", **hidden)


def checked_line(lines: list[str]) -> str:
    """The panel's one line after Apply: what failed first (each "⚠ ..." joined), else what answers."""
    failed = [line.removeprefix("⚠ ") for line in lines if line.startswith("⚠")]
    if failed:
        return markdown_safe("⚠ Applied, but " + " · ".join(failed))
    return note(" · ".join(lines)) if lines else ""


def method_choices() -> list[tuple[str, str]]:
    """The named no-model methods that run offline, as (label, spec): labelled as methods."""
    return [(f"{method_label(method_spec(m))} ({method_spec(m)})", method_spec(m)) for m in OFFLINE_METHODS]


def compare_choices_for(default: SessionSettings, choices: list[str]) -> list[str | tuple[str, str]]:
    """What "Compare with" offers: nothing, every model backend, then each tab's no-model methods
    (`baseline:<method>`, labelled as methods: with a method as the Backend they run side by side
    offline), then the server's own choice."""
    offered: list[str | tuple[str, str]] = [NO_COMPARE] + [c for c in choices if not is_method_spec(c)]
    offered += method_choices()
    values = {c[1] if isinstance(c, tuple) else c for c in offered}
    if default.compare and default.compare not in values:
        offered.append(default.compare)
    return offered
