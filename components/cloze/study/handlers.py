"""The study page's handlers. Each returns the page's question outputs (QuestionView), computed
from the typed session, the cached set and the annotator's store. Nothing sent to the browser
names an option: media go out under opaque names (media.py), errors about media are replaced by a
neutral message (the detail is logged on the server). Nothing opens without a credential
(access.py): a session that was never started by one changes nothing."""
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
from components.cloze.spec import SPEC
from components.cloze.questions import distractor_type
from components.cloze.study import catch as checks
from components.cloze.study import practice as practice_mod
from components.cloze.study.access import browser_handle, identify
from components.cloze.study.cache import StudySet, study_set
from components.cloze.study.catch import CatchQuestion
from components.cloze.study.config import StudyConfig, load_config, researcher_allowed
from components.cloze.study.media import frames_file, opaque_copies, prefetch_edge_view, question_clips
from components.cloze.study.report import ResearcherReport, researcher_report
from components.cloze.study.routing import Router, router_for
from components.cloze.study.store import AnnotatorStore, all_records, store_for
from components.cloze.study.timing import from_page
from components.base.errors import MediaError, UserError
from components.common.ui import Update, View, several

log = logging.getLogger(__name__)
NOT_CONFIGURED = ("No study is configured here. The researcher sets one up in `<data>/cloze/study.json` "
                  "or the APP_STUDY environment variable.")
NOT_STARTED = "Open your invitation link (or enter your code) and press Start first."
WRONG_TOKEN = "Wrong or missing researcher token (APP_STUDY_RESEARCHER_TOKEN on the server)."


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
    stage: str = ""          # "" | "intro" (instruction + practice) | "question" | "check" | "done"
    check: CatchQuestion | None = None
    routed: int | None = None   # the question the router gave this annotator (routed studies)
    practised: str | None = None

    @property
    def key(self) -> str:
        """What the page's timing stamp names: this showing of this question."""
        what = f"c{self.check.number}" if self.stage == "check" and self.check else str(self.index)
        return f"{what}:{self.shown_at or 0:.3f}"


class Study:
    """The configured study of one data folder (config re-read when the study file changes)."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = str(datasource.open_data_dir(data_dir))  # a repository: its local mirror
        self._key: tuple | None = None
        self._config: StudyConfig | None = None

    def _source_key(self) -> tuple:
        env = os.environ.get("APP_STUDY", "").strip()
        path = Path(env) if env and not env.startswith("{") else Path(self.data_dir) / SPEC.data / "study.json"
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
        if not annotator:
            raise UserError(NOT_STARTED)
        sset = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
        return cfg, sset, store_for(cfg, annotator, sset.questions)

    def router(self, cfg: StudyConfig, sset: StudySet) -> Router | None:
        """The study's router (routed studies only), filled from every annotator's answers."""
        if not cfg.routed:
            return None

        def seed(router: Router) -> None:
            done: dict[str, list[int]] = {}
            for rec in all_records(cfg):
                done.setdefault(str(rec["annotator"]), []).append(rec["task_index"])
            for who, tasks in done.items():
                router.observe(who, tasks)
        key = f"{(cfg.results / cfg.study_id).resolve()}:{cfg.set_name}"
        return router_for(key, len(sset.questions), cfg.judgments, cfg.lease_s, seed)


def warm(study: Study) -> None:
    """Load the configured set before the first annotator asks (32 starting together otherwise wait
    ~2 s on its load at 1,521 stems), then move everything loaded so far out of the garbage
    collector's view: its full collections walked the whole loaded set, 80-140 ms with every request
    in the process stopped, several times a minute under load."""
    try:
        cfg = study.config
        if cfg is not None:
            sset = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
            for line in (*sset.dropped, *sset.warnings):
                log.warning("study %s, set %s: %s", cfg.study_id, cfg.set_name, line)
            study.router(cfg, sset)
    except UserError as exc:   # shown to the first annotator who opens the page
        log.warning("The study could not be loaded ahead: %s", exc)
    gc.collect()
    gc.freeze()


def mmss(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def _where(session: StudySession) -> str:
    if session.stage == "check":
        return "a quick check question"
    if session.stage == "done":
        return "done"
    return f"question {session.index + 1} of {session.total}"


def progress_line(session: StudySession, limit: float | None, now: float | None = None) -> str:
    """The progress line from the session alone (no I/O), as text."""
    if not session.annotator or session.total == 0:
        return "Open your invitation link (or enter your code) and press **Start**."
    if session.stage == "intro":
        return f"**{session.annotator} · before you start** · answered 0/{session.total}"
    elapsed = (now or time.time()) - (session.shown_at or now or time.time())
    clock = mmss(elapsed)
    if limit:
        left = limit - elapsed
        clock = f"{mmss(left)} left" if left > 0 else "time is up - please answer now"
    return (f"**{session.annotator} · {_where(session)} · {clock}** · "
            f"answered {session.answered}/{session.total}")


def progress_html(session: StudySession, limit: float | None, message: str = "") -> str:
    """The progress line as the page shows it. Its clock runs in the browser (page.py) from the
    elapsed time and limit carried here, so no request is made per second."""
    if message:
        return f'<p class="study-message">{html.escape(message)}</p>'
    if not session.annotator or session.total == 0:
        return "<p>Open your invitation link (or enter your code) and press <b>Start</b>.</p>"
    name = html.escape(session.annotator)
    if session.stage in ("intro", "done"):
        what = "before you start" if session.stage == "intro" else "all done - thank you"
        return f"<p><b>{name} · {what}</b> · answered {session.answered}/{session.total}</p>"
    elapsed = max(0.0, time.time() - (session.shown_at or time.time()))
    clock = (f'<span class="study-clock" data-elapsed="{elapsed:.1f}" data-limit="{limit or 0:g}" '
             f'data-key="{session.key}">{mmss(elapsed)}</span>')
    return (f"<p><b>{name} · {_where(session)} · {clock}</b> · "
            f"answered {session.answered}/{session.total}</p>")


@dataclass
class Layout(View):
    """Which parts of the page show (sent on start and on Begin only: changing a component's
    properties makes gradio rebuild it, so answers send values only). Each field a visibility."""

    head: Update                   # the credential box and Start: only until someone is started
    intro: Update
    question_box: Update
    image: Update
    video_box: Update
    submit: Update


@dataclass
class QuestionView(View):
    """What the page shows for one question (a view: its fields name the page's components,
    app.py); every field is a plain value."""

    session: StudySession
    image: str | None              # the frames image (a file under an opaque name), else None
    videos: tuple = several(6)     # BEGINNING, END, A-D under opaque names (video display), else None
    progress: str
    marks: str                  # the letters' state and the question's media, read by page.py
    navigator: str
    feedback: str


#: the six players empty (frames display, the end of the study)
NO_VIDEOS = (None,) * 6


def layout_for(cfg: StudyConfig | None, stage: str = "question") -> Layout:
    video = cfg is not None and cfg.display == "video"
    confirm = cfg is not None and cfg.answer_flow == "confirm"
    asking = cfg is not None and stage in ("question", "check", "done")
    return Layout(head=gr.update(visible=stage == "refused"),
                  intro=gr.update(visible=cfg is not None and stage == "intro"),
                  question_box=gr.update(visible=asking), image=gr.update(visible=asking and not video),
                  video_box=gr.update(visible=asking and video), submit=gr.update(visible=asking and confirm))


def _clips(sset: StudySet, session: StudySession) -> list[Path]:
    if session.stage == "check" and session.check is not None:
        return checks.check_clips(sset.dataset, session.check)
    q = sset.questions[session.index]
    return question_clips(sset.dataset.instance(q.stem), q)


def _media(cfg: StudyConfig, sset: StudySet, session: StudySession) -> tuple[str | None, tuple]:
    if session.stage == "done":
        return None, NO_VIDEOS
    clips = _clips(sset, session)
    slot_key = f"check{session.check.number}" if session.stage == "check" and session.check else session.index
    try:
        if cfg.display == "video":
            return None, tuple(opaque_copies(cfg.media_cache, cfg.study_id, session.annotator, slot_key, clips))
        return frames_file(cfg.media_cache, cfg.study_id, str(slot_key), clips, cfg.display), NO_VIDEOS
    except (MediaError, OSError, ValueError) as exc:
        log.error("study %s question %s media failed: %s", cfg.study_id, slot_key, exc)
        raise UserError("This question's media could not be loaded; please tell the researcher (the "
                        "details are in the server log).") from None


def marks_html(store: AnnotatorStore, session: StudySession, image: Any = None,
               videos: tuple | list | None = None) -> str:
    """The marked letter (the choice made or the earlier answer), whether the letters are locked
    (answered, "Change my answer" not pressed), and the names of the question's media: the page
    stamps the time when they are all shown (page.py)."""
    rec = store.latest.get(session.index) if session.stage == "question" else None
    locked = session.stage == "done" or (rec is not None and not session.unlocked)
    mark = session.selected or (rec["answer"] if rec else "")
    media = ",".join(Path(p).name for p in [image, *(videos or [])] if p)
    return (f'<div class="study-marks" data-mark="{html.escape(mark)}" data-locked="{int(locked)}" '
            f'data-q="{session.key}" data-media="{html.escape(media)}" '
            f'data-key="{session.key}:{mark}:{int(locked)}"></div>')


NAVIGATOR_ALL = 300  # up to this many questions the navigator lists all; beyond, answered + nearby


def _own(store: AnnotatorStore, session: StudySession) -> list[int]:
    """A routed annotator's questions: those they answered and the one they were given."""
    return sorted({*store.latest, *([session.routed] if session.routed is not None else [])})


def navigator_html(store: AnnotatorStore, session: StudySession, routed: bool = False) -> str:
    """Question numbers to jump to; answered ones are marked "answered" (never as right or wrong)."""
    if routed:
        shown: Any = _own(store, session)
    elif session.total <= NAVIGATOR_ALL:
        shown = range(session.total)
    else:
        near = range(max(0, session.index - 10), min(session.total, session.index + 11))
        shown = sorted({*store.latest, *near})
    cells = []
    for i in shown:
        state = " answered" if i in store.latest else ""
        current = ' aria-current="true"' if i == session.index and session.stage == "question" else ""
        label = f"question {i + 1}" + (", answered" if state else "")
        cells.append(f'<button class="study-q{state}" data-q="{i}" title="{label}" '
                     f'aria-label="{label}"{current}>{i + 1}</button>')
    return ('<div class="study-nav-grid">' + "".join(cells) + '</div>'
            '<p class="study-nav-legend"><span class="study-q answered"></span> answered · '
            '<span class="study-q" aria-current="true"></span> this question</p>')


def question_view(cfg: StudyConfig, sset: StudySet, store: AnnotatorStore, session: StudySession,
                  feedback: str, router: Router | None = None) -> QuestionView:
    session = replace(session, total=len(sset.questions), answered=len(store.latest))
    if session.stage == "intro":
        return QuestionView(session=session, image=None, videos=NO_VIDEOS,
                            progress=progress_html(session, cfg.time_limit_s), marks=marks_html(store, session),
                            navigator="", feedback=feedback)
    image, videos = _media(cfg, sset, session)
    if session.stage == "question":
        if cfg.resume == "last_viewed":
            store.save_position(session.index)
        rec = store.latest.get(session.index)
        if rec is not None and not session.unlocked:
            feedback = (feedback + " " if feedback else "") + (
                f"You answered **{rec['answer']}** to this question. Press **Change my answer** to change it.")
        if cfg.display != "video":
            _prefetch_next(cfg, sset, store, session, router)
    return QuestionView(session=session, image=image, videos=videos, progress=progress_html(session, cfg.time_limit_s),
                        marks=marks_html(store, session, image, videos),
                        navigator=navigator_html(store, session, cfg.routed), feedback=feedback)


def _prefetch_next(cfg: StudyConfig, sset: StudySet, store: AnnotatorStore, session: StudySession,
                   router: Router | None) -> None:
    """Draw, in the background, the question an answer here leads to (and the next one in order)."""
    if router is not None:
        following = {router.peek(store.annotator, set(store.latest))}
    else:
        following = {store.first_unanswered(session.index), session.index + 1}
    for nxt in following:
        if nxt is not None and 0 <= nxt < len(sset.questions) and nxt != session.index:
            q = sset.questions[nxt]
            prefetch_edge_view(question_clips(sset.dataset.instance(q.stem), q), cfg.display,
                               (cfg.media_cache, cfg.study_id, str(nxt)))


def _show(study: Study, session: StudySession, index: int, feedback: str = "") -> QuestionView:
    cfg, sset, store = study.parts(session.annotator)
    index = min(max(0, index), len(sset.questions) - 1)
    store.refresh()   # an answer the released app wrote since shows as answered (a stat when none did)
    session = replace(session, index=index, shown_at=time.time(), selected=None, unlocked=False,
                      stage="question", check=None)
    return question_view(cfg, sset, store, session, feedback, study.router(cfg, sset))


def _next(study: Study, session: StudySession, feedback: str, after: int | None) -> QuestionView:
    """The annotator's next question: a check when one is due, else (routed) the router's pick, else
    the next unanswered one after `after` (wrapping; the first unanswered one when None)."""
    cfg, sset, store = study.parts(session.annotator)
    router = study.router(cfg, sset)
    if checks.due(len(store.latest), len(store.checks), cfg.catch_every):
        closed = set()
        if router is not None:
            closed = {i for i, n in router.coverage().items() if n >= cfg.judgments}
        check = checks.make_check(sset.questions, set(store.latest), closed, store.checked_stems(),
                                  store.annotator, cfg.seed, len(store.checks) + 1)
        if check is not None:
            view_session = replace(session, stage="check", check=check, shown_at=time.time(), selected=None,
                                   unlocked=False)
            return question_view(cfg, sset, store, view_session, feedback)
    if router is not None:
        nxt = router.next_for(store.annotator, set(store.latest))
        if nxt is None:
            done = replace(session, stage="done", check=None, routed=None, shown_at=time.time())
            return question_view(cfg, sset, store, done, (feedback + " " if feedback else "") +
                                 "Every question that still needs judgments has yours - thank you, you are done.")
        return _show(study, replace(session, routed=nxt), nxt, feedback)
    nxt = store.first_unanswered(-1 if after is None else after)
    if nxt is None:   # as released: the next question in order (for review), the first on a start
        feedback += f" All {len(sset.questions)} questions are answered - thank you."
        nxt = 0 if after is None else min(after + 1, len(sset.questions) - 1)
    return _show(study, session, nxt, feedback)


def start(study: Study, session: StudySession, credential: str, hf_username: str | None = None,
          handle: str | None = None) -> tuple[Layout, QuestionView, dict | None]:
    """Start or resume, for the annotator the credential (or the browser's kept `handle`) opens
    (access.py). One that opens nothing changes nothing: no file is read or written, and the page
    shows one line saying why. Returns the layout, the view and what the browser keeps (None: keep
    what it has): for an invitation, its `browser_handle`, never the token; for an open study, the
    typed id."""
    cfg = study.config
    if cfg is None:
        raise UserError(NOT_CONFIGURED)
    who = identify(cfg, credential, hf_username, handle)
    if who.annotator is None:
        empty = QuestionView(session=StudySession(), image=None, videos=NO_VIDEOS,
                             progress=progress_html(StudySession(), None, who.refusal), marks="", navigator="",
                             feedback="")
        forget = {} if handle and not (credential or "").strip() else None   # a kept place that opens nothing
        return layout_for(cfg, "refused"), empty, forget
    cfg, sset, store = study.parts(who.annotator)
    store.open_run()
    router = study.router(cfg, sset)
    if router is not None:
        router.observe(store.annotator, list(store.latest))
    session = StudySession(annotator=store.annotator, session_id=uuid.uuid4().hex[:12])
    stored = ({"session": browser_handle(cfg, who.annotator) or ""} if who.how == "invite"
              else {"credential": store.annotator} if who.how == "open" else {})
    done = len(store.latest)
    if cfg.practice and not done and not store.practised:
        intro = question_view(cfg, sset, store, replace(session, stage="intro"), "")
        return layout_for(cfg, "intro"), intro, stored
    greeting = f"Welcome back, {store.annotator}: {done} answered so far." if done else f"Welcome, {store.annotator}."
    return layout_for(cfg), _resume(study, session, greeting), stored


def _resume(study: Study, session: StudySession, greeting: str) -> QuestionView:
    cfg, _, store = study.parts(session.annotator)
    if cfg.routed:
        return _next(study, session, greeting, None)
    return _show(study, session, store.resume_index(cfg.resume), greeting)


def practice(study: Study, session: StudySession, letter: str) -> tuple[StudySession, str]:
    """The practice question's answer: told at once (it is not part of the study)."""
    _, _, store = study.parts(session.annotator)
    if session.stage != "intro":
        raise UserError("The practice question is before the study; your study questions are below.")
    store.practice(letter, letter == practice_mod.ANSWER)
    return replace(session, practised=letter), practice_mod.feedback(letter)


def begin(study: Study, session: StudySession) -> tuple[Layout, QuestionView]:
    cfg, _, _ = study.parts(session.annotator)
    if session.stage != "intro":
        raise UserError(NOT_STARTED)
    if session.practised is None:
        raise UserError("Try the practice question first (click A, B, C or D under it).")
    return layout_for(cfg), _resume(study, replace(session, stage="question"), "The study begins.")


def _reveal(cfg: StudyConfig, rec: dict, number: int) -> str:
    if cfg.blind:
        return f"Question {number}: answer **{rec['answer']}** saved."
    if rec["correct"]:
        return f"Question {number}: **Correct** - {rec['expected']} was the true middle."
    return (f"Question {number}: **Not quite** - {rec['expected']} was the true middle; you chose "
            f"{rec['answer']}: {distractor_type(rec['chosen'])}.")


def save(study: Study, session: StudySession, letter: str, stamp: str | None = None) -> QuestionView:
    """Record the answer (fsynced), then move on to the next question."""
    cfg, sset, store = study.parts(session.annotator)
    timing = from_page(stamp, session.key, time.time() - (session.shown_at or time.time()))
    if session.stage == "check" and session.check is not None:
        store.answer_check(session.check, letter, timing=timing, session=session.session_id)
        message = "Answer saved." if cfg.blind else (
            "Check: **right**." if letter == session.check.expected else "Check: not the right one.")
        return _next(study, replace(session, check=None, stage="question"), message, session.index)
    if session.stage != "question":
        raise UserError(NOT_STARTED)
    if cfg.routed and session.index not in store.latest and session.index != session.routed:
        raise UserError("In this study the next question is chosen for you; answer the one shown.")
    if session.index in store.latest and not session.unlocked:
        raise UserError(f"You already answered question {session.index + 1}; press **Change my answer** "
                        "to change it.")
    rec = store.answer(session.index, letter, display=cfg.display, flow=cfg.answer_flow, timing=timing,
                       session=session.session_id, redo=session.unlocked)
    router = study.router(cfg, sset)
    if router is not None:
        router.observe(store.annotator, [session.index])
    message = _reveal(cfg, rec, session.index + 1)
    if rec["redo_count"]:
        message += f" (changed; change #{rec['redo_count']})"
    if cfg.routed and session.routed is not None and session.routed not in store.latest:
        return _show(study, session, session.routed, message)   # back to the question they were given
    return _next(study, session, message, session.index)


def choose(study: Study, session: StudySession, letter: str, stamp: str | None = None) -> QuestionView:
    cfg, sset, store = study.parts(session.annotator)
    if cfg.answer_flow == "immediate":
        return save(study, session, letter, stamp)
    if session.stage == "question" and session.index in store.latest and not session.unlocked:
        raise UserError("Press **Change my answer** first.")
    session = replace(session, selected=letter)
    return question_view(cfg, sset, store, session, f"Selected **{letter}**; press **Submit** to confirm.")


def submit(study: Study, session: StudySession, stamp: str | None = None) -> QuestionView:
    if not session.selected:
        raise UserError("Select A, B, C or D first.")
    return save(study, session, session.selected, stamp)


def change(study: Study, session: StudySession) -> QuestionView:
    cfg, sset, store = study.parts(session.annotator)
    rec = store.latest.get(session.index) if session.stage == "question" else None
    if rec is None:
        raise UserError("This question has no answer to change yet.")
    if sset.questions[session.index].stem in store.checked_stems():
        raise UserError("This answer is final: its video has since been shown in a check question.")
    session = replace(session, unlocked=True, selected=None)
    return question_view(cfg, sset, store, session, f"Your earlier answer was **{rec['answer']}**. "
                                                    "Choose your new answer.")


def go(study: Study, session: StudySession, index: int) -> QuestionView:
    if not session.annotator or session.stage in ("", "intro"):
        raise UserError(NOT_STARTED)
    cfg, sset, store = study.parts(session.annotator)
    if session.stage == "check":
        raise UserError("Answer this check question first.")
    if cfg.routed:
        own = _own(store, session)
        if index not in own:
            raise UserError("In this study the next question is chosen for you; you can go back to the "
                            "ones you answered.")
    return _show(study, session, index)


def step(study: Study, session: StudySession, by: int) -> QuestionView:
    """Previous / Next: in a routed study through the annotator's own questions only."""
    if not session.annotator or session.stage in ("", "intro"):
        raise UserError(NOT_STARTED)
    cfg, _, store = study.parts(session.annotator)
    if cfg.routed:
        own = _own(store, session)
        here = own.index(session.index) if session.index in own else len(own) - 1
        return go(study, session, own[min(max(0, here + by), len(own) - 1)] if own else session.index)
    return go(study, session, session.index + by)


def jump(study: Study, session: StudySession, index: int | None) -> QuestionView:
    """A click on a question number in the navigator (index from 0)."""
    if index is None:
        raise UserError("Click a question number to go there.")
    return go(study, session, index)


def tick(study: Study, session: StudySession) -> str:
    """The progress line from the session only (no file, no dataset)."""
    return progress_line(session, study.time_limit)


@dataclass
class ResearcherView(View):
    summary: str
    coverage: Update
    annotators: Update


def researcher(study: Study, token: str) -> ResearcherView:
    """The researcher view; a wrong token gives one line and clears what was shown before."""
    empty = gr.update(value=[], visible=False)
    if not researcher_allowed(token):
        return ResearcherView(summary=WRONG_TOKEN, coverage=empty, annotators=empty)
    cfg = study.config
    if cfg is None:
        return ResearcherView(summary=NOT_CONFIGURED, coverage=empty, annotators=empty)
    sset = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
    report: ResearcherReport = researcher_report(cfg, sset)
    cov_headers, cov_rows = report.coverage_table()
    who_headers, who_rows = report.annotator_table()
    return ResearcherView(summary=report.markdown(),
                          coverage=gr.update(value=cov_rows or [["-"] * len(cov_headers)], headers=cov_headers, visible=True),
                          annotators=gr.update(value=who_rows or [["-"] * len(who_headers)], headers=who_headers, visible=True))
