"""The study page's handlers. Each returns the full list of the page's question outputs (QUESTION
in app.py), computed from the typed session, the cached set and the annotator's store. Nothing sent
to the browser names an option: media go out under opaque names (media.py), errors about media are
replaced by a neutral message (the detail is logged on the server)."""
from __future__ import annotations

import gc
import html
import logging
import os
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gradio as gr

from components import datasource
from components.cloze.human import sanitise_annotator
from components.cloze.questions import distractor_type
from components.cloze.study.cache import StudySet, study_set
from components.cloze.study.config import StudyConfig, load_config, researcher_allowed
from components.cloze.study.media import frames_view, opaque_videos, prefetch_edge_view, question_clips
from components.cloze.study.report import researcher_summary
from components.cloze.study.store import AnnotatorStore, store_for
from components.common.errors import MediaError, UserError

log = logging.getLogger(__name__)
NOT_CONFIGURED = ("No study is configured here. The researcher sets one up in `<data>/cloze/study.json` "
                  "or the APP_STUDY environment variable.")


@dataclass(frozen=True)
class StudySession:
    """One annotator's place (server side only: a gr.State never reaches the browser)."""

    annotator: str = ""
    index: int = 0
    shown_at: float | None = None
    selected: str | None = None
    unlocked: bool = False   # "Change my answer" pressed on this answered question
    total: int = 0
    answered: int = 0
    session_id: str = ""


class Study:
    """The configured study of one data folder (config re-read when the study file changes)."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = str(datasource.open_data_dir(data_dir))  # a repository: its local mirror
        self._key: tuple | None = None
        self._config: StudyConfig | None = None

    def _source_key(self) -> tuple:
        env = os.environ.get("APP_STUDY", "").strip()
        path = Path(env) if env and not env.startswith("{") else Path(self.data_dir) / "cloze" / "study.json"
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            stamp = None
        return env, str(path), stamp

    @property
    def config(self) -> StudyConfig | None:
        """The study file, re-read only when it (or APP_STUDY) changes."""
        key = self._source_key()
        if key != self._key:
            self._config, self._key = load_config(self.data_dir), key
        return self._config

    @property
    def time_limit(self) -> float | None:
        """The last loaded config's time limit (no I/O: for the clock)."""
        return self._config.time_limit_s if self._config else None

    def parts(self, annotator: str) -> tuple[StudyConfig, StudySet, AnnotatorStore]:
        cfg = self.config
        if cfg is None:
            raise UserError(NOT_CONFIGURED)
        sset = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
        return cfg, sset, store_for(cfg, annotator, sset.questions)


def warm(study: Study) -> None:
    """Load the configured set before the first annotator asks (32 starting together otherwise wait
    ~2 s on its load at 1,521 stems), then move everything loaded so far out of the garbage
    collector's view: its full collections walked the whole loaded set, 80-140 ms with every request
    in the process stopped, several times a minute under load."""
    try:
        cfg = study.config
        if cfg is not None:
            study_set(cfg.set_folder, cfg.set_name, cfg.seed)
    except UserError as exc:   # shown to the first annotator who opens the page
        log.warning("The study could not be loaded ahead: %s", exc)
    gc.collect()
    gc.freeze()


def mmss(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def progress_line(session: StudySession, limit: float | None, now: float | None = None) -> str:
    """The progress line from the session alone (no I/O), as text."""
    if not session.annotator or session.total == 0:
        return "Enter your annotator id and press **Start / resume**."
    elapsed = (now or time.time()) - (session.shown_at or now or time.time())
    clock = mmss(elapsed)
    if limit:
        left = limit - elapsed
        clock = f"{mmss(left)} left" if left > 0 else "time is up - please answer now"
    return (f"**{session.annotator} · question {session.index + 1} of {session.total} · {clock}** · "
            f"answered {session.answered}/{session.total}")


def progress_html(session: StudySession, limit: float | None) -> str:
    """The progress line as the page shows it. Its clock runs in the browser (CLOCK_JS in app.py)
    from the elapsed time and limit carried here, so no request is made per second."""
    if not session.annotator or session.total == 0:
        return "<p>Enter your annotator id and press <b>Start / resume</b>.</p>"
    elapsed = max(0.0, time.time() - (session.shown_at or time.time()))
    name = html.escape(session.annotator)
    clock = (f'<span class="study-clock" data-elapsed="{elapsed:.1f}" data-limit="{limit or 0:g}" '
             f'data-key="{session.index}:{session.shown_at or 0:.3f}">{mmss(elapsed)}</span>')
    return (f"<p><b>{name} · question {session.index + 1} of {session.total} · {clock}</b> · "
            f"answered {session.answered}/{session.total}</p>")


@dataclass
class Layout:
    """Which parts of the page the study's display and answer flow show (sent on start only:
    changing a component's properties makes gradio rebuild it, so answers send values only)."""

    image: Any
    video_box: Any
    submit: Any


@dataclass
class QuestionView:
    """What the page shows for one question; every field is a plain value."""

    session: StudySession
    image: Any                  # the edge view (frames display), else None
    videos: list[str | None]    # BEGINNING, END, A-D under opaque names (video display), else None
    progress: str
    marks: str                  # the letters' state, applied to the buttons by MARKS_JS in app.py
    navigator: str
    feedback: str


def layout_for(cfg: StudyConfig | None) -> Layout:
    video = cfg is not None and cfg.display == "video"
    confirm = cfg is not None and cfg.answer_flow == "confirm"
    return Layout(gr.update(visible=cfg is not None and not video), gr.update(visible=video),
                  gr.update(visible=confirm))


def _media(cfg: StudyConfig, sset: StudySet, session: StudySession) -> tuple[Any, list[str | None]]:
    q = sset.questions[session.index]
    inst = sset.dataset.instance(q.stem)
    try:
        if cfg.display == "video":
            return None, opaque_videos(cfg.media_cache, cfg.study_id, session.annotator, session.index, inst, q)
        return frames_view(question_clips(inst, q), cfg.display), [None] * 6
    except (MediaError, OSError, ValueError) as exc:
        log.error("study %s question %d media failed: %s", cfg.study_id, session.index + 1, exc)
        raise UserError(f"Question {session.index + 1}'s media could not be loaded; please tell the "
                        "researcher (the details are in the server log).") from None


def marks_html(store: AnnotatorStore, session: StudySession) -> str:
    """The marked letter (the choice made or the earlier answer) and whether the letters are locked
    (answered, "Change my answer" not pressed)."""
    rec = store.latest.get(session.index)
    locked = rec is not None and not session.unlocked
    mark = session.selected or (rec["answer"] if rec else "")
    return (f'<div class="study-marks" data-mark="{html.escape(mark)}" data-locked="{int(locked)}" '
            f'data-key="{session.index}:{session.shown_at or 0:.3f}:{mark}:{int(locked)}"></div>')


NAVIGATOR_ALL = 300  # up to this many questions the navigator lists all; beyond, answered + nearby


def navigator_html(store: AnnotatorStore, session: StudySession) -> str:
    """Question numbers to jump to; answered ones are marked "answered" (never as right or wrong)."""
    if session.total <= NAVIGATOR_ALL:
        shown = range(session.total)
    else:
        near = range(max(0, session.index - 10), min(session.total, session.index + 11))
        shown = sorted({*store.latest, *near})
    cells = []
    for i in shown:
        state = " answered" if i in store.latest else ""
        current = ' aria-current="true"' if i == session.index else ""
        label = f"question {i + 1}" + (", answered" if state else "")
        cells.append(f'<button class="study-q{state}" data-q="{i}" title="{label}" '
                     f'aria-label="{label}"{current}>{i + 1}</button>')
    return ('<div class="study-nav-grid">' + "".join(cells) + '</div>'
            '<p class="study-nav-legend"><span class="study-q answered"></span> answered · '
            '<span class="study-q" aria-current="true"></span> this question</p>')


def question_view(cfg: StudyConfig, sset: StudySet, store: AnnotatorStore, session: StudySession,
                  feedback: str) -> QuestionView:
    session = replace(session, total=len(sset.questions), answered=len(store.latest))
    image, videos = _media(cfg, sset, session)
    store.save_position(session.index)
    rec = store.latest.get(session.index)
    if rec is not None and not session.unlocked:
        feedback = (feedback + " " if feedback else "") + (
            f"You answered **{rec['answer']}** to this question. Press **Change my answer** to change it.")
    if cfg.display != "video":
        _prefetch_next(sset, store, session.index, cfg.display)
    return QuestionView(session, image, videos, progress_html(session, cfg.time_limit_s),
                        marks_html(store, session), navigator_html(store, session), feedback)


def _prefetch_next(sset: StudySet, store: AnnotatorStore, index: int, kind: str) -> None:
    """Draw, in the background, the question an answer here leads to (and the next one in order)."""
    for nxt in {store.first_unanswered(index), index + 1}:
        if nxt is not None and 0 <= nxt < len(sset.questions) and nxt != index:
            q = sset.questions[nxt]
            prefetch_edge_view(question_clips(sset.dataset.instance(q.stem), q), kind)


def _show(study: Study, session: StudySession, index: int, feedback: str = "") -> QuestionView:
    cfg, sset, store = study.parts(session.annotator)
    index = min(max(0, index), len(sset.questions) - 1)
    session = replace(session, index=index, shown_at=time.time(), selected=None, unlocked=False)
    return question_view(cfg, sset, store, session, feedback)


def start(study: Study, session: StudySession, annotator: str) -> tuple[QuestionView, dict]:
    """Start or resume: the question the annotator was on (or the first unanswered one)."""
    name = sanitise_annotator(annotator)
    _, _, store = study.parts(name)
    session = StudySession(annotator=name, session_id=uuid.uuid4().hex[:12])
    done = len(store.latest)
    greeting = f"Welcome back, {name}: {done} answered so far." if done else f"Welcome, {name}."
    return _show(study, session, store.resume_index(), greeting), {"annotator": name}


def _reveal(cfg: StudyConfig, rec: dict, number: int) -> str:
    if cfg.blind:
        return f"Question {number}: answer **{rec['answer']}** saved."
    if rec["correct"]:
        return f"Question {number}: **Correct** - {rec['expected']} was the true middle."
    return (f"Question {number}: **Not quite** - {rec['expected']} was the true middle; you chose "
            f"{rec['answer']}: {distractor_type(rec['chosen'])}.")


def save(study: Study, session: StudySession, letter: str) -> QuestionView:
    """Record the answer (fsynced), then move on to the next unanswered question (wrapping)."""
    cfg, sset, store = study.parts(session.annotator)
    if session.index in store.latest and not session.unlocked:
        raise UserError(f"You already answered question {session.index + 1}; press **Change my answer** "
                        "to change it.")
    elapsed = time.time() - (session.shown_at or time.time())
    rec = store.answer(session.index, letter, display=cfg.display, flow=cfg.answer_flow, elapsed=elapsed,
                       session=session.session_id)
    message = _reveal(cfg, rec, session.index + 1)
    if rec["redo_count"]:
        message += f" (changed; change #{rec['redo_count']})"
    nxt = store.first_unanswered(session.index)
    if nxt is None:
        message += f" All {len(sset.questions)} questions are answered - thank you."
        nxt = session.index
    return _show(study, session, nxt, message)


def choose(study: Study, session: StudySession, letter: str) -> QuestionView:
    cfg, sset, store = study.parts(session.annotator)
    if cfg.answer_flow == "immediate":
        return save(study, session, letter)
    if session.index in store.latest and not session.unlocked:
        raise UserError("Press **Change my answer** first.")
    session = replace(session, selected=letter)
    return question_view(cfg, sset, store, session, f"Selected **{letter}**; press **Submit** to confirm.")


def submit(study: Study, session: StudySession) -> QuestionView:
    if not session.selected:
        raise UserError("Select A, B, C or D first.")
    return save(study, session, session.selected)


def change(study: Study, session: StudySession) -> QuestionView:
    cfg, sset, store = study.parts(session.annotator)
    rec = store.latest.get(session.index)
    session = replace(session, unlocked=True, selected=None)
    return question_view(cfg, sset, store, session, f"Your earlier answer was **{rec['answer'] if rec else '-'}**. "
                                                    "Choose your new answer.")


def go(study: Study, session: StudySession, index: int) -> QuestionView:
    if not session.annotator:
        raise UserError("Enter your annotator id and press Start / resume first.")
    return _show(study, session, index)


def jump(study: Study, session: StudySession, index: int | None) -> QuestionView:
    """A click on a question number in the navigator (index from 0)."""
    if index is None:
        raise UserError("Click a question number to go there.")
    return go(study, session, index)


def tick(study: Study, session: StudySession) -> str:
    """The progress line from the session only (no file, no dataset)."""
    return progress_line(session, study.time_limit)


def researcher(study: Study, token: str) -> tuple[str, Any]:
    """The researcher view: every annotator's progress, agreement and the Human row."""
    if not researcher_allowed(token):
        raise UserError("Wrong or missing researcher token (APP_STUDY_RESEARCHER_TOKEN on the server).")
    cfg = study.config
    if cfg is None:
        raise UserError(NOT_CONFIGURED)
    sset = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
    return researcher_summary(cfg, sset)
