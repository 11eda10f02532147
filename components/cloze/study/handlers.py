"""The study page's handlers. Each returns the full list of the page's question outputs (QUESTION
in app.py), computed from the typed session, the cached set and the annotator's store. Nothing sent
to the browser names an option: media go out under opaque names (media.py), errors about media are
replaced by a neutral message (the detail is logged on the server)."""
from __future__ import annotations

import logging
import os
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gradio as gr

from components.cloze.human import sanitise_annotator
from components.cloze.questions import LETTERS, distractor_type
from components.cloze.study.cache import StudySet, study_set
from components.cloze.study.config import StudyConfig, load_config, researcher_allowed
from components.cloze.study.media import edge_view, opaque_videos, question_clips
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
        self.data_dir = data_dir
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


def mmss(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def progress_line(session: StudySession, limit: float | None, now: float | None = None) -> str:
    """The progress line from the session alone (the tick does no I/O)."""
    if not session.annotator or session.total == 0:
        return "Enter your annotator id and press **Start / resume**."
    elapsed = (now or time.time()) - (session.shown_at or now or time.time())
    clock = mmss(elapsed)
    if limit:
        left = limit - elapsed
        clock = f"{mmss(left)} left" if left > 0 else "time is up - please answer now"
    return (f"**{session.annotator} · question {session.index + 1} of {session.total} · {clock}** · "
            f"answered {session.answered}/{session.total}")


def _media(cfg: StudyConfig, sset: StudySet, session: StudySession) -> tuple[Any, list[Any]]:
    q = sset.questions[session.index]
    inst = sset.dataset.instance(q.stem)
    video = cfg.display == "video"
    try:
        if video:
            paths = opaque_videos(cfg.media_cache, cfg.study_id, session.annotator, session.index, inst, q)
            return gr.update(value=None, visible=False), [gr.update(value=p, visible=True) for p in paths]
        image = edge_view(question_clips(inst, q))
        return gr.update(value=image, visible=True), [gr.update(value=None, visible=False)] * 6
    except (MediaError, OSError, ValueError) as exc:
        log.error("study %s question %d media failed: %s", cfg.study_id, session.index + 1, exc)
        raise UserError(f"Question {session.index + 1}'s media could not be loaded; please tell the "
                        "researcher (the details are in the server log).") from None


def _buttons(cfg: StudyConfig, store: AnnotatorStore, session: StudySession) -> list[Any]:
    rec = store.latest.get(session.index)
    locked = rec is not None and not session.unlocked
    mark = session.selected or (rec["answer"] if rec else None)
    letters = [gr.update(variant="primary" if x == mark else "secondary", interactive=not locked)
               for x in LETTERS]
    submit = gr.update(visible=cfg.answer_flow == "confirm", interactive=not locked)
    change = gr.update(visible=locked)
    return [*letters, submit, change]


NAVIGATOR_ALL = 300  # up to this many questions the navigator lists all; beyond, answered + current


def _navigator(store: AnnotatorStore, session: StudySession) -> Any:
    shown = range(session.total) if session.total <= NAVIGATOR_ALL else sorted({*store.latest, session.index})
    marks = [f"{i + 1} · answered" if i in store.latest else f"{i + 1}" for i in shown]
    current = next((m for m in marks if m.split()[0] == str(session.index + 1)), None)
    return gr.update(choices=marks, value=current)


def question_view(cfg: StudyConfig, sset: StudySet, store: AnnotatorStore, session: StudySession,
                  feedback: str) -> list[Any]:
    """[state, image, 6 videos, progress, A-D, submit, change, navigator, feedback, video box]."""
    session = replace(session, total=len(sset.questions), answered=len(store.latest))
    image, videos = _media(cfg, sset, session)
    store.save_position(session.index)
    rec = store.latest.get(session.index)
    if rec is not None and not session.unlocked:
        feedback = (feedback + " " if feedback else "") + (
            f"You answered **{rec['answer']}** to this question. Press **Change my answer** to change it.")
    return [session, image, *videos, progress_line(session, cfg.time_limit_s), *_buttons(cfg, store, session),
            _navigator(store, session), feedback, gr.update(visible=cfg.display == "video")]


def _show(study: Study, session: StudySession, index: int, feedback: str = "") -> list[Any]:
    cfg, sset, store = study.parts(session.annotator)
    index = min(max(0, index), len(sset.questions) - 1)
    session = replace(session, index=index, shown_at=time.time(), selected=None, unlocked=False)
    return question_view(cfg, sset, store, session, feedback)


def start(study: Study, session: StudySession, annotator: str) -> tuple[list[Any], dict]:
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


def save(study: Study, session: StudySession, letter: str) -> list[Any]:
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


def choose(study: Study, session: StudySession, letter: str) -> list[Any]:
    cfg, sset, store = study.parts(session.annotator)
    if cfg.answer_flow == "immediate":
        return save(study, session, letter)
    if session.index in store.latest and not session.unlocked:
        raise UserError("Press **Change my answer** first.")
    session = replace(session, selected=letter)
    return question_view(cfg, sset, store, session, f"Selected **{letter}**; press **Submit** to confirm.")


def submit(study: Study, session: StudySession) -> list[Any]:
    if not session.selected:
        raise UserError("Select A, B, C or D first.")
    return save(study, session, session.selected)


def change(study: Study, session: StudySession) -> list[Any]:
    cfg, sset, store = study.parts(session.annotator)
    rec = store.latest.get(session.index)
    session = replace(session, unlocked=True, selected=None)
    return question_view(cfg, sset, store, session, f"Your earlier answer was **{rec['answer'] if rec else '-'}**. "
                                                    "Choose your new answer.")


def go(study: Study, session: StudySession, index: int) -> list[Any]:
    if not session.annotator:
        raise UserError("Enter your annotator id and press Start / resume first.")
    return _show(study, session, index)


def navigate(study: Study, session: StudySession, label: str) -> list[Any]:
    return go(study, session, int(str(label).split()[0]) - 1)


def tick(study: Study, session: StudySession) -> str:
    """The clock: from the session only (no file, no dataset)."""
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
