"""The study page annotators open: annotator id, the question (BEGINNING, END, four candidates, the
four letters) and progress; nothing else. The researcher's settings come from the study file
(config.py); `?researcher=1` adds the token-protected researcher view.

    python -m components.cloze.study --data-dir DATA [--host 0.0.0.0] [--port 7861]

The page is its own server on purpose: it serves only the study's media cache, so an annotator
cannot reach the explorer's Cloze tab (which shows every option by name) from the study's address.
"""
from __future__ import annotations

import hashlib
import html
import os
from dataclasses import fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from collections.abc import Callable

import gradio as gr
from gradio.data_classes import FileData

from components.cloze.questions import LETTERS
from components.cloze.study import handlers as h
from components.cloze.study.page import CSS, HEAD, NAVIGATOR_JS, PLAY_ALL, TOP
from components.common.errors import UserError
from components.common.idle import quiet_when_idle
from components.common.theme import THEME
from components.common.ui import user_errors
from components.common.warm import warm_in_background
from components.datasource import open_data_dir

TITLE = "Cloze study"
STORAGE_KEY = "cloze-study-annotator"


def _serve_as_is(value: str | Path | None, original: Callable[[Any], Any]) -> FileData | None:
    if isinstance(value, (str, Path)):
        return FileData(path=str(value), orig_name=Path(value).name)
    return original(value)


def trusting_own_media(video: gr.Video) -> gr.Video:
    """The study's media are made browser-playable once when written (media.py), so this player
    skips gr.Video's per-request ffprobe (about 120 ms a clip, six clips a question). Set on the
    instance: a gr.Video subclass would make gradio write a .pyi stub beside this file."""
    original = video.postprocess
    video.postprocess = lambda value: _serve_as_is(value, original)  # type: ignore[method-assign]
    return video


def _video(label: str, elem: str, min_width: int = 80) -> gr.Video:
    return trusting_own_media(gr.Video(label=label, interactive=False, buttons=[], autoplay=False,
                                       loop=True, min_width=min_width, elem_id=f"study-{elem}"))


def _question(ui: SimpleNamespace) -> None:
    ui.image = gr.Image(type="pil", format="jpeg", interactive=False, buttons=[], show_label=False,
                        container=False, elem_id="study-frames", visible=False)
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
        ui.change = gr.Button("Change my answer", min_width=120, elem_id="study-change")
    ui.marks = gr.HTML("", elem_id="study-marks", padding=False)
    ui.feedback = gr.Markdown("", elem_id="study-feedback")
    with gr.Row(elem_id="study-nav"):
        ui.prev = gr.Button("◀ Previous", size="sm", min_width=80, elem_id="study-prev")
        ui.next = gr.Button("Next ▶", size="sm", min_width=80, elem_id="study-next")
    ui.navigator = gr.HTML("", elem_id="study-navigator", js_on_load=NAVIGATOR_JS, padding=False)


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
        # every event may run at once: handlers lock per annotator, and none waits on a model (set
        # before any component: each queue() call rebuilds the server app and every component's config)
        demo.queue(default_concurrency_limit=None)
        ui = SimpleNamespace(state=gr.State(h.StudySession()),
                             browser=gr.BrowserState({"annotator": ""}, storage_key=STORAGE_KEY,
                                                     secret=browser_secret(data_dir)))
        with gr.Column(elem_id="study-root"):
            with gr.Row(elem_id="study-head"):
                ui.annotator = gr.Textbox(label="Annotator id", placeholder="anon-17", scale=2, min_width=120,
                                          elem_id="study-annotator")
                ui.start = gr.Button("Start / resume", variant="primary", scale=1, min_width=100,
                                     elem_id="study-start")
            ui.progress = gr.HTML(h.progress_html(h.StudySession(), None), elem_id="study-progress",
                                  padding=False)
            _question(ui)
        _researcher(ui)
        _wire(demo, study, ui)
    return demo


def _values(view: Any) -> list[Any]:
    """A view's fields in order (lists flattened): an event's outputs."""
    out: list[Any] = []
    for f in fields(view):
        value = getattr(view, f.name)
        out.extend(value if isinstance(value, list) else [value])
    return out


def _bound(study: h.Study, fn: Callable[..., h.QuestionView]) -> Callable[..., list[Any]]:
    """`fn(study, *inputs)` as gradio calls it (UserError -> one readable message)."""
    @user_errors
    def call(*args):
        return _values(fn(study, *args))
    call.__name__ = getattr(fn, "__name__", "study_event")
    return call


def _wire(demo: gr.Blocks, study: h.Study, ui: SimpleNamespace) -> None:
    question = [ui.state, ui.image, *ui.videos, ui.progress, ui.marks, ui.navigator, ui.feedback]
    layout = [ui.image, ui.video_box, ui.submit]

    def started(view: h.QuestionView, stored: dict) -> list[Any]:
        return [*_values(h.layout_for(study.config)), *_values(view), stored]

    def start(session, annotator):
        return started(*h.start(study, session, annotator))

    def on_load(session: h.StudySession, browser: dict | None, request: gr.Request) -> list[Any]:
        """Show the researcher box for ?researcher=1; resume a stored annotator where they were."""
        research = gr.update(visible="researcher" in dict(getattr(request, "query_params", {}) or {}))
        name = (browser or {}).get("annotator") or ""
        try:
            cfg = study.config
            if cfg is not None and name:
                return [research, gr.update(value=name), *start(session, name)]
            message = h.NOT_CONFIGURED if cfg is None else None
        except UserError as exc:
            message = f"The study file has a problem: {exc}"
        nothing: list[Any] = [gr.skip()] * (len(layout) + len(question) + 1)
        if message is not None:
            nothing[len(layout) + question.index(ui.progress)] = f"<p>{html.escape(message)}</p>"
        return [research, gr.skip(), *nothing]

    def then_top(event) -> None:
        event.then(None, None, None, js=TOP)

    then_top(ui.start.click(user_errors(start), [ui.state, ui.annotator], [*layout, *question, ui.browser],
                            api_name="study_start"))
    ui.annotator.submit(user_errors(start), [ui.state, ui.annotator], [*layout, *question, ui.browser])
    for i, btn in enumerate(ui.letters):
        then_top(btn.click(_bound(study, h.choose), [ui.state, gr.State(LETTERS[i])], question,
                           api_name="study_choice" + (f"_{i}" if i else "")))
    then_top(ui.submit.click(_bound(study, h.submit), [ui.state], question, api_name="study_submit"))
    ui.change.click(_bound(study, h.change), [ui.state], question, api_name="study_change")
    then_top(ui.prev.click(_bound(study, lambda s, st: h.go(s, st, st.index - 1)), [ui.state], question,
                           api_name="study_prev"))
    then_top(ui.next.click(_bound(study, lambda s, st: h.go(s, st, st.index + 1)), [ui.state], question,
                           api_name="study_next"))

    def on_jump(session: h.StudySession, event: gr.EventData) -> list[Any]:
        picked = (getattr(event, "_data", None) or {}).get("q")
        return _bound(study, h.jump)(session, int(picked) if isinstance(picked, (int, float)) else None)

    then_top(ui.navigator.click(on_jump, [ui.state], question, api_name="study_jump"))
    ui.play_all.click(None, None, None, js=PLAY_ALL)
    ui.show.click(user_errors(lambda token: h.researcher(study, token)), [ui.token], [ui.summary, ui.table],
                  api_name="study_results")
    demo.load(on_load, [ui.state, ui.browser], [ui.research, ui.annotator, *layout, *question, ui.browser])


def launch_study(data_dir: str | Path, *, host: str = "127.0.0.1", port: int = 7861,
                 prevent_thread_lock: bool = False) -> gr.Blocks:
    """Serve the study page; only the study's media cache is served as files. `data_dir` may be a
    dataset repository (`hf://datasets/...`), opened here: its local mirror is the data folder."""
    data_dir = open_data_dir(data_dir)
    study = h.Study(str(data_dir))
    warm_in_background([lambda: h.warm(study)], name="study-warm")
    cfg = study.config
    allowed = [str(cfg.media_cache.resolve())] if cfg else []
    if cfg:
        cfg.media_cache.mkdir(parents=True, exist_ok=True)
        # served where they lie: gradio would otherwise hash and copy six clips into its own cache
        # on every answer (their names are already opaque, media.py). Set before the page is
        # built: gradio checks each served file against these paths in order (resolving both,
        # ~0.2 ms a path), and building adds its own icons' paths.
        gr.set_static_paths(allowed)
    demo = build_study_app(data_dir)
    quiet_when_idle(demo, poll=0.05)   # an answer after a quiet spell waits <= 50 ms to be picked up
    demo.launch(server_name=host, server_port=port, theme=THEME, css=CSS, head=HEAD, allowed_paths=allowed,
                footer_links=[], prevent_thread_lock=prevent_thread_lock, show_error=True,
                quiet=prevent_thread_lock)
    return demo
