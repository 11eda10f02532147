"""The study page annotators open: annotator id, the question (BEGINNING, END, four candidates, the
four letters) and progress; nothing else. The researcher's settings come from the study file
(config.py); `?researcher=1` adds the token-protected researcher view.

    python -m components.cloze.study --data-dir DATA [--host 0.0.0.0] [--port 7861]
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from collections.abc import Callable

import gradio as gr

from components.cloze.questions import LETTERS
from components.cloze.study import handlers as h
from components.common.errors import UserError
from components.common.theme import THEME
from components.common.ui import user_errors

TITLE = "Cloze study"
STORAGE_KEY = "cloze-study-annotator"
CSS = """
#study-root {max-width: 1400px; margin: 0 auto; gap: 6px;}
#study-frames img {max-height: 56vh; width: 100%; object-fit: contain;}
#study-videos video {max-height: 23vh;}
#study-letters button {min-height: 46px; font-size: 1.25em; font-weight: 600;}
#study-progress, #study-feedback {min-height: 1.4em;}
footer {display: none !important;}
"""
TOP = "() => { window.scrollTo({top: 0, behavior: 'instant'}); document.querySelector('#study-root')?.scrollIntoView(); }"
PLAY_ALL = ("() => { const vs = [...document.querySelectorAll('#study-videos video')]; "
            "vs.forEach(v => { v.currentTime = 0; }); vs.forEach(v => v.play()); }")


def _video(label: str, elem: str, min_width: int = 80) -> gr.Video:
    return gr.Video(label=label, interactive=False, buttons=[], visible=False, autoplay=False, loop=True,
                    min_width=min_width, elem_id=f"study-{elem}")


def _question(ui: SimpleNamespace) -> None:
    ui.image = gr.Image(type="pil", interactive=False, buttons=[], show_label=False, container=False,
                        elem_id="study-frames", visible=False)
    with gr.Column(elem_id="study-videos", visible=False) as ui.video_box:
        with gr.Row():
            ctx = [_video(lbl, lbl.lower()) for lbl in ("BEGINNING", "END")]
        with gr.Row():
            cands = [_video(x, f"cand-{x}", 60) for x in LETTERS]
        ui.play_all = gr.Button("Play all in sync", size="sm", elem_id="study-play-all")
    ui.videos = [*ctx, *cands]
    with gr.Row(elem_id="study-letters"):
        ui.letters = [gr.Button(x, min_width=60, elem_id=f"study-choice-{x}") for x in LETTERS]
        ui.submit = gr.Button("Submit", variant="primary", min_width=90, visible=False, elem_id="study-submit")
        ui.change = gr.Button("Change my answer", min_width=120, visible=False, elem_id="study-change")
    ui.feedback = gr.Markdown("", elem_id="study-feedback")
    with gr.Row(elem_id="study-nav"):
        ui.prev = gr.Button("◀ Previous", size="sm", min_width=80, elem_id="study-prev")
        ui.next = gr.Button("Next ▶", size="sm", min_width=80, elem_id="study-next")
        ui.navigator = gr.Dropdown([], label="Go to question", min_width=120, elem_id="study-navigator")


def _researcher(ui: SimpleNamespace) -> None:
    with gr.Group(visible=False, elem_id="study-researcher") as ui.research:
        with gr.Row():
            ui.token = gr.Textbox(label="Researcher token", type="password", elem_id="study-token")
            ui.show = gr.Button("Show results", elem_id="study-show")
        ui.summary = gr.Markdown("", elem_id="study-summary")
        ui.table = gr.Dataframe(interactive=False, elem_id="study-table")


def browser_secret(data_dir: str | Path) -> str:
    """The key the browser's copy of the annotator id is encrypted with: APP_STUDY_BROWSER_SECRET,
    else one derived from the data folder, so a restarted server still reads it (gradio's default
    is a new random key per start, which would forget every annotator on a restart)."""
    return os.environ.get("APP_STUDY_BROWSER_SECRET") or hashlib.sha256(
        f"cloze-study:{Path(data_dir).resolve()}".encode()).hexdigest()


def build_study_app(data_dir: str | Path) -> gr.Blocks:
    study = h.Study(str(data_dir))
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        ui = SimpleNamespace(state=gr.State(h.StudySession()),
                             browser=gr.BrowserState({"annotator": ""}, storage_key=STORAGE_KEY,
                                                     secret=browser_secret(data_dir)))
        with gr.Column(elem_id="study-root"):
            with gr.Row(elem_id="study-head"):
                ui.annotator = gr.Textbox(label="Annotator id", placeholder="anon-17", scale=2, min_width=120,
                                          elem_id="study-annotator")
                ui.start = gr.Button("Start / resume", variant="primary", scale=1, min_width=100,
                                     elem_id="study-start")
            with gr.Row():
                ui.progress = gr.Markdown(h.progress_line(h.StudySession(), None), elem_id="study-progress")
            _question(ui)
        _researcher(ui)
        ui.timer = gr.Timer(1.0)
        _wire(demo, study, ui)
    return demo


def _bound(study: h.Study, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn(study, *inputs)` as gradio calls it (UserError -> one readable message)."""
    @user_errors
    def call(*args):
        return fn(study, *args)
    call.__name__ = getattr(fn, "__name__", "study_event")
    return call


def _on_load(study: h.Study, session: h.StudySession, browser: dict | None, request: gr.Request) -> list[Any]:
    """Show the researcher box for ?researcher=1; resume a stored annotator where they were."""
    params = dict(getattr(request, "query_params", {}) or {})
    research = gr.update(visible="researcher" in params)
    name = (browser or {}).get("annotator") or ""
    nothing: list[Any] = [session, *[gr.update()] * (len(QUESTION_FIELDS) - 1)]
    try:
        configured = study.config is not None
    except UserError as exc:
        nothing[QUESTION_FIELDS.index("progress")] = f"The study file has a problem: {exc}"
        return [research, gr.update(), *nothing, gr.update()]
    if not configured:
        nothing[QUESTION_FIELDS.index("progress")] = h.NOT_CONFIGURED
    if not configured or not name:
        return [research, gr.update(), *nothing, gr.update()]
    try:
        outputs, stored = h.start(study, h.StudySession(), name)
    except UserError:
        return [research, gr.update(), *nothing, gr.update()]
    return [research, gr.update(value=name), *outputs, stored]


QUESTION_FIELDS = ("state", "image", "v0", "v1", "v2", "v3", "v4", "v5", "progress", "A", "B", "C", "D",
                   "submit", "change", "navigator", "feedback", "video_box")


def _wire(demo: gr.Blocks, study: h.Study, ui: SimpleNamespace) -> None:
    question = [ui.state, ui.image, *ui.videos, ui.progress, *ui.letters, ui.submit, ui.change,
                ui.navigator, ui.feedback, ui.video_box]
    assert len(question) == len(QUESTION_FIELDS)

    def then_top(event) -> None:
        event.then(None, None, None, js=TOP)

    def start(session, annotator):
        outputs, stored = h.start(study, session, annotator)
        return [*outputs, stored]

    then_top(ui.start.click(user_errors(start), [ui.state, ui.annotator], [*question, ui.browser],
                            api_name="study_start"))
    ui.annotator.submit(user_errors(start), [ui.state, ui.annotator], [*question, ui.browser])
    for i, btn in enumerate(ui.letters):
        then_top(btn.click(_bound(study, h.choose), [ui.state, gr.State(LETTERS[i])], question,
                           api_name="study_choice" + (f"_{i}" if i else "")))
    then_top(ui.submit.click(_bound(study, h.submit), [ui.state], question, api_name="study_submit"))
    ui.change.click(_bound(study, h.change), [ui.state], question, api_name="study_change")
    then_top(ui.prev.click(_bound(study, lambda s, st: h.go(s, st, st.index - 1)), [ui.state], question,
                           api_name="study_prev"))
    then_top(ui.next.click(_bound(study, lambda s, st: h.go(s, st, st.index + 1)), [ui.state], question,
                           api_name="study_next"))
    then_top(ui.navigator.input(_bound(study, h.navigate), [ui.state, ui.navigator], question,
                                api_name="study_navigate"))
    ui.play_all.click(None, None, None, js=PLAY_ALL)
    ui.show.click(_bound(study, h.researcher), [ui.token], [ui.summary, ui.table], api_name="study_results")
    def on_load(session: h.StudySession, browser: dict | None, request: gr.Request) -> list[Any]:
        return _on_load(study, session, browser, request)

    def tick(session: h.StudySession) -> str:
        return h.tick(study, session)

    ui.timer.tick(tick, [ui.state], [ui.progress], show_progress="hidden", api_name="study_tick",
                  concurrency_limit=None)  # never waits behind answers: it does no I/O
    demo.load(on_load, [ui.state, ui.browser],
              [ui.research, ui.annotator, *question, ui.browser])


def launch_study(data_dir: str | Path, *, host: str = "127.0.0.1", port: int = 7861,
                 prevent_thread_lock: bool = False) -> gr.Blocks:
    """Serve the study page; only the study's media cache is served as files."""
    demo = build_study_app(data_dir)
    cfg = h.Study(str(data_dir)).config
    allowed = [str(cfg.media_cache.resolve())] if cfg else []
    if cfg:
        cfg.media_cache.mkdir(parents=True, exist_ok=True)
    demo.queue(default_concurrency_limit=8)
    demo.launch(server_name=host, server_port=port, theme=THEME, css=CSS, allowed_paths=allowed,
                footer_links=[], prevent_thread_lock=prevent_thread_lock, show_error=True,
                quiet=prevent_thread_lock)
    return demo
