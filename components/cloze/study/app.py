"""The study page annotators open: their invitation (or Hugging Face sign-in), a short instruction
with a practice question, then the question (BEGINNING, END, four candidates, the four letters) and
progress; nothing else. The researcher's settings come from the study file (config.py);
`?researcher=1` adds the token-protected researcher view.

    python -m components.cloze.study --data-dir DATA [--host 0.0.0.0] [--port 7861]

The page is its own server on purpose: it serves only the study's media cache, so an annotator
cannot reach the explorer's Cloze tab (which shows every option by name) from the study's address.
Its events go through the tabs' adapter (components/common/ui.py TabEvents) with the `Study` first
and a view per event (handlers.py, and the page's views below); a failure is one line on the page's
message line.
"""
from __future__ import annotations

import functools
import hashlib
import html
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import gradio as gr

from components.cloze.questions import LETTERS
from components.cloze.study import handlers as h
from components.cloze.study.config import StudyConfig
from components.cloze.study.page import CSS, HEAD, NAVIGATOR_JS, PLAY_ALL, STAMP, STRIP_INVITE, TOP
from components.cloze.study.practice import INSTRUCTION, practice_image
from components.cloze.study.store import hub_push
from components.base.errors import UserError
from components.common.idle import quiet_when_idle
from components.common.session_start import start_sessions_lazily
from components.common.page import LAUNCH_OPTIONS
from components.common.players import trusting_own_media
from components.common.progress import BUSY_CLASS, busy_on_one_component
from components.common.theme import THEME
from components.common.uploads import NO_UPLOAD_MAX_BODY, closed_uploads
from components.common.ui import UNCHANGED, TabEvents, Update, View, error_line
from components.common.warm import warm_in_background
from components.datasource import open_data_dir

TITLE = "Cloze study"
STORAGE_KEY = "cloze-study-annotator"
log = logging.getLogger(__name__)
HF_OFF_SPACE = ("This study uses Hugging Face sign-in, which works only on a Space with `hf_oauth: true` "
                "in its README and gradio[oauth] installed; ask the researcher.")


def _video(label: str, elem: str, min_width: int = 80) -> gr.Video:
    return trusting_own_media(gr.Video(label=label, interactive=False, buttons=[], autoplay=False,
                                       loop=True, min_width=min_width, elem_id=f"study-{elem}"))


def _question(ui: SimpleNamespace) -> None:
    ui.image = gr.Image(type="filepath", interactive=False, buttons=[], show_label=False,
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


def _intro(ui: SimpleNamespace) -> None:
    """The instruction and the practice question, shown before question 1 (practice.py)."""
    with gr.Column(visible=False, elem_id="study-intro") as ui.intro:
        gr.Markdown(INSTRUCTION, elem_id="study-instruction")
        gr.Image(practice_image(), type="pil", format="png", interactive=False, buttons=[], show_label=False,
                 container=False, elem_id="study-practice-frames")
        with gr.Row(elem_id="study-practice-letters"):
            ui.practice_letters = [gr.Button(x, min_width=60, elem_id=f"study-practice-{x}") for x in LETTERS]
        ui.practice_feedback = gr.Markdown("", elem_id="study-practice-feedback")
        ui.begin = gr.Button("Begin the study", variant="primary", elem_id="study-begin")


def _researcher(ui: SimpleNamespace) -> None:
    with gr.Column(visible=False, elem_id="study-researcher") as ui.research:
        with gr.Row():
            ui.token = gr.Textbox(label="Researcher token", type="password", elem_id="study-token")
            ui.show = gr.Button("Show results", elem_id="study-show")
        ui.summary = gr.Markdown("", elem_id="study-summary")
        ui.coverage = gr.Dataframe(interactive=False, visible=False, label="Coverage (least judged first)",
                                   elem_id="study-coverage")
        ui.annotators = gr.Dataframe(interactive=False, visible=False, label="Annotators", elem_id="study-table")


def browser_secret(data_dir: str | Path) -> str:
    """gr.BrowserState's key, stable across restarts (gradio's default is a new random key per
    start, which would forget every annotator on a restart). It is NO secret: gradio sends it to
    every visitor in /config, and the page encrypts with it. So the browser keeps nothing that
    needs it: an invitation's place-holder is `access.browser_handle`, sealed on the server (an
    open study's typed id is no secret either). An older page kept the token itself under this
    key; it is read once more on the annotator's next visit and replaced by the handle."""
    return hashlib.sha256(f"cloze-study:{Path(data_dir).resolve()}".encode()).hexdigest()


def on_a_space() -> bool:
    """Hugging Face sign-in needs a Space's OAuth app (hf_oauth: true sets OAUTH_CLIENT_ID)."""
    return bool(os.environ.get("SPACE_ID") and os.environ.get("OAUTH_CLIENT_ID"))


def _sign_in_ready(cfg: StudyConfig | None) -> bool:
    if cfg is None or not cfg.hf_sign_in or not on_a_space():
        return False
    try:
        import authlib  # noqa: F401 - gradio[oauth], which gr.LoginButton needs on a Space
        import itsdangerous  # noqa: F401
    except ImportError:
        log.error("The study asks for Hugging Face sign-in; install gradio[oauth] (authlib, itsdangerous).")
        return False
    return True


def _credential_box(cfg: StudyConfig | None) -> gr.Textbox:
    open_ids = cfg is not None and cfg.access == "open"
    return gr.Textbox(label="Annotator id" if open_ids else "Invitation code",
                      placeholder="anon-17" if open_ids else "from your invitation link",
                      type="text" if open_ids else "password", scale=2, min_width=120,
                      visible=cfg is None or cfg.access != "hf", elem_id="study-annotator")


def build_study_app(data_dir: str | Path) -> gr.Blocks:
    study = h.Study(str(data_dir))
    try:
        cfg = study.config
    except UserError:
        cfg = None                                   # shown on load
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        # every event may run at once: handlers lock per annotator, and none waits on a model (set
        # before any component: each queue() call rebuilds the server app and every component's config)
        demo.queue(default_concurrency_limit=None)
        ui = SimpleNamespace(session=gr.State(h.StudySession()),
                             browser=gr.BrowserState({"credential": ""}, storage_key=STORAGE_KEY,
                                                     secret=browser_secret(data_dir)))
        with gr.Column(elem_id="study-root"):
            with gr.Row(elem_id="study-head") as ui.head:
                ui.annotator = _credential_box(cfg)
                ui.start = gr.Button("Start", variant="primary", scale=1, min_width=100, elem_id="study-start")
                ui.login = gr.LoginButton(elem_id="study-login") if _sign_in_ready(cfg) else None
            ui.progress = gr.HTML(h.progress_html(h.StudySession(), None), elem_id="study-progress",
                                  padding=False, elem_classes=[BUSY_CLASS])
            # the page's one message line: under the progress, and held at the top of the screen
            # while it has something to say (page.py), so it is seen wherever the annotator clicked
            ui.message = gr.Markdown("", elem_id="study-message", elem_classes=["study-message-line"])
            _intro(ui)
            with gr.Column(visible=False, elem_id="study-question") as ui.question_box:
                _question(ui)
            ui.timing = gr.Textbox(visible=False, elem_id="study-timing")
        _researcher(ui)
        _wire(demo, study, ui)
    busy_on_one_component(demo)
    return demo


@dataclass
class Started(View):
    """Start / resume: the page's parts, the question (or the refusal's line), what the browser keeps."""

    layout: h.Layout
    question: h.QuestionView
    browser: dict   # UNCHANGED: the browser keeps what it has


@dataclass
class Loaded(Started):
    """The page opened: the researcher box for `?researcher=1`, the id an open study's browser kept."""

    research: Update
    annotator: Update


@dataclass
class Practised(View):
    """The practice question answered: told at once."""

    session: h.StudySession
    practice_feedback: str


@dataclass
class Begun(View):
    """Begin the study: the question part shown, the first question."""

    layout: h.Layout
    question: h.QuestionView


def _started(found: tuple[h.Layout, h.QuestionView, dict | None]) -> dict:
    lay, view, stored = found
    return {"layout": lay, "question": view, **({} if stored is None else {"browser": stored})}


def start(study: h.Study, session: h.StudySession, credential: str, user: str | None) -> Started:
    """Start / resume with the typed credential (or the signed-in Hugging Face user)."""
    return Started(**_started(h.start(study, session, credential, user)))


def open_page(study: h.Study, session: h.StudySession, browser: dict | None, params: Mapping[str, str],
              user: str | None) -> Loaded:
    """The researcher box for ?researcher=1; the annotator of the invitation in the address,
    else of the one this browser kept, else the signed-in one, resumed."""
    research = gr.update(visible="researcher" in params)
    kept = browser or {}
    credential = str(params.get("invite") or kept.get("credential") or "")
    handle = "" if params.get("invite") else str(kept.get("session") or "")
    message = None
    try:
        cfg = study.config
        if cfg is None:
            message = h.NOT_CONFIGURED
        else:
            if cfg.access == "open" and not credential:
                credential = str(kept.get("annotator") or "")   # what an earlier version kept
            if credential or user or handle:
                shown = gr.update(value=credential) if cfg.access == "open" else UNCHANGED
                return Loaded(research=research, annotator=shown,
                              **_started(h.start(study, session, credential, user, handle)))
            if cfg.hf_sign_in and not cfg.invites and not _sign_in_ready(cfg):
                message = HF_OFF_SPACE
    except UserError as exc:
        message = f"The study file has a problem: {exc}"
    except Exception as exc:  # noqa: BLE001 - the researcher box is shown all the same; the line says it
        return Loaded(research=research, message=error_line(exc, study.data_dir))
    if message is None:
        return Loaded(research=research, message=None)
    return Loaded(research=research, question=h.QuestionView(progress=f"<p>{html.escape(message)}</p>"),
                  message=None)


def practise(study: h.Study, session: h.StudySession, letter: str) -> Practised:
    session, feedback = h.practice(study, session, letter)
    return Practised(session=session, practice_feedback=feedback)


def begin(study: h.Study, session: h.StudySession) -> Begun:
    lay, view = h.begin(study, session)
    return Begun(layout=lay, question=view)


def jump(study: h.Study, session: h.StudySession, data: dict) -> h.QuestionView:
    """A question number clicked in the navigator (the page sends `{q: n}`)."""
    picked = data.get("q")
    return h.jump(study, session, int(picked) if isinstance(picked, (int, float)) else None)


def _wire(demo: gr.Blocks, study: h.Study, ui: SimpleNamespace) -> None:
    ev = TabEvents(study, None, ui.message, data_dir=study.data_dir, components=ui)
    on = ev.on

    def then_top(event) -> None:
        event.then(None, None, None, js=TOP)

    then_top(on(ui.start.click, start, [ui.session, ui.annotator], Started, kind="user", api_name="study_start"))
    on(ui.annotator.submit, start, [ui.session, ui.annotator], Started, kind="user")
    for i, btn in enumerate(ui.letters):
        then_top(on(btn.click, h.choose, [ui.session, gr.State(LETTERS[i]), ui.timing], h.QuestionView,
                    js=STAMP.format(args="s, l, t", keep="s, l"), api_name="study_choice" + (f"_{i}" if i else "")))
    then_top(on(ui.submit.click, h.submit, [ui.session, ui.timing], h.QuestionView,
                js=STAMP.format(args="s, t", keep="s"), api_name="study_submit"))
    on(ui.change.click, h.change, [ui.session], h.QuestionView, api_name="study_change")
    then_top(on(ui.prev.click, functools.partial(h.step, by=-1), [ui.session], h.QuestionView, api_name="study_prev"))
    then_top(on(ui.next.click, functools.partial(h.step, by=1), [ui.session], h.QuestionView, api_name="study_next"))
    then_top(on(ui.navigator.click, jump, [ui.session], h.QuestionView, kind="data", api_name="study_jump"))
    ui.play_all.click(None, None, None, js=PLAY_ALL)
    for i, btn in enumerate(ui.practice_letters):
        on(btn.click, practise, [ui.session, gr.State(LETTERS[i])], Practised, api_name=f"study_practice_{i}")
    then_top(on(ui.begin.click, begin, [ui.session], Begun, api_name="study_begin"))
    on(ui.show.click, h.researcher, [ui.token], h.ResearcherView, api_name="study_results")
    on(demo.load, open_page, [ui.session, ui.browser], Loaded, kind="visit").then(None, None, None, js=STRIP_INVITE)


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
        push = hub_push(cfg)
        if push is not None:   # APP_HUMAN_STUDY_REPO: the answers copied to a dataset every few minutes
            push.start()
    demo = build_study_app(data_dir)
    quiet_when_idle(demo, poll=0.05)   # an answer after a quiet spell waits <= 50 ms to be picked up
    start_sessions_lazily()            # an annotator's first request builds no component's configuration
    # the page has no upload control: gradio's upload routes are closed to everyone and every
    # request body is bounded (components/common/uploads.py); max_file_size bounds gradio's own parser
    demo.launch(server_name=host, server_port=port, theme=THEME, css=CSS, head=HEAD, allowed_paths=allowed,
                footer_links=[], prevent_thread_lock=prevent_thread_lock, show_error=True,
                quiet=prevent_thread_lock, max_file_size=NO_UPLOAD_MAX_BODY, app_kwargs=closed_uploads(),
                **LAUNCH_OPTIONS)
    return demo
