"""The question on screen, shared by every panel of the Cloze tab: the question set a session's
controls name (kept until its folder changes), the clips shown (frame grids or videos), the
progress line and navigator, and drawing the next question ahead."""
from __future__ import annotations

import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import gradio as gr

from components.cloze.spec import SPEC
from components.cloze.data import ClozeDataset, folder_stamp, shared_dataset
from components.cloze.frames import clip_grids, prefetch
from components.cloze.human import latest_records, study_questions
from components.cloze.metrics import PAPER_KEYS
from components.cloze.runs import ClozeRuns, loader_for
from components.cloze.runs_view import SORTS
from components.cloze.questions import Question, QuestionSet, build_set
from components.cloze.study.media import opaque_videos
from components.cloze.ui.views import AnswerBoxes, QuestionView
from components.cloze.ui.session import ClozeSession
from components.common.ui import UNCHANGED
from components.base.io import read_jsonl
from components.base.errors import UserError
from components.base.lru import SingleFlightLRU

PAPER_FRAMES = 16
RUNS_WAIT_S = 60   # how long a chosen question order waits for the runs to be read
SETS_KEPT = 64
#: the question sets drawn (each set's questions in the session's order), shared by every visitor
SETS: SingleFlightLRU[tuple, tuple[ClozeDataset, QuestionSet]] = SingleFlightLRU(SETS_KEPT)


def mmss(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def writable_dir(preferred: Path, fallback_name: str) -> Path:
    """`preferred` (created), else a folder of that name in the system temp folder."""
    try:
        preferred.mkdir(parents=True, exist_ok=True)
        return preferred
    except OSError:
        fallback = Path(tempfile.gettempdir()) / fallback_name
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def practice_dir(data_dir: str | Path) -> Path:
    """Where practice playthroughs are recorded ($APP_PRACTICE_DIR, else <data>/cloze/practice):
    apart from a real study's answers (the study page's), so practice never counts as a study."""
    env = os.environ.get("APP_PRACTICE_DIR")
    return writable_dir(Path(env) if env else Path(data_dir) / SPEC.data / "practice", "cloze-practice")


def _runs_table(session: ClozeSession) -> ClozeRuns:
    """The runs' table the question order reads (waited for: the visitor asked for the order)."""
    loaded = loader_for(session.data_dir, session.runs).wait(RUNS_WAIT_S)
    if loaded is None:
        raise UserError("The runs are still being read; choose the order again in a moment.")
    return loaded.table


def in_runs_order(questions: list[Question], table: ClozeRuns, order: str) -> list[Question]:
    """`questions` in the runs' order `order` (runs_view.SORTS): the runs' questions sorted, then
    the ones no run answered in the set's order; a filter ("people") keeps only its questions."""
    _label, kwargs = SORTS[order]
    rank = {(s.stem, s.dim): i for i, s in enumerate(table.questions(**kwargs))}
    key = [(q, rank.get((q.stem, PAPER_KEYS.get(q.dim, q.dim)))) for q in questions]
    ranked = sorted((pair for pair in key if pair[1] is not None), key=lambda pair: pair[1])
    rest = [] if kwargs.get("people_only") else [q for q, r in key if r is None]
    return [q for q, _ in ranked] + rest


def _set_key(session: ClozeSession) -> tuple:
    return (str(Path(session.root).resolve()), session.set_name, session.dims, session.seed, session.human,
            folder_stamp(session.root))


def questions_for(session: ClozeSession) -> tuple[ClozeDataset, QuestionSet]:
    """The dataset and question set, cached per (folder, set, dims, seed, mode) until the folder
    changes; a set asked for by several requests at once is built once. In Model mode a session
    with an `order` steps through the set in the runs' order (`in_runs_order`); a practice
    playthrough always keeps its own order (the runs would give its answers away)."""
    if session.order and not session.human:
        if session.order not in SORTS:
            raise UserError(f"Question order: one of {', '.join(SORTS)}, not {session.order!r}.")
        ds, plain = questions_for(replace(session, order=""))
        table = _runs_table(session)
        ordered = SETS.get((*_set_key(session), session.order, id(table)),
                                  lambda: (ds, replace(plain, name=f"{plain.name}:{session.order}",
                                                       questions=in_runs_order(plain.questions, table,
                                                                               session.order))))[1]
        if not ordered.questions:
            what = ("where people were right and every model wrong (that needs the study's answers)"
                    if session.order == "people" else f"for “{SORTS[session.order][0]}”")
            raise UserError(f"Question order: the runs have no question of this set {what}; the order is "
                            "left as it was.")
        return ds, ordered
    key = _set_key(session)

    def make() -> tuple[ClozeDataset, QuestionSet]:
        ds = shared_dataset(session.root)
        mixed = session.dims == ("Mixed",) and "mixed" in ds.sets and session.set_name == "all"
        set_name = "mixed" if mixed else session.set_name
        if session.human:
            return ds, study_questions(ds, set_name, session.seed, session.dims)
        return ds, build_set(ds, set_name, session.dims, seed=session.seed)

    return SETS.get(key, make)


def shown_question(session: ClozeSession) -> tuple[str, str] | None:
    """(stem, dim) of the question on screen (None before the first question)."""
    if not session.loaded:
        return None
    try:
        _, qs = questions_for(session)
    except Exception:  # noqa: BLE001 - a folder that no longer reads shows no question
        return None
    if not qs.questions:
        return None
    q = qs.questions[min(max(0, session.index), len(qs.questions) - 1)]
    return q.stem, q.dim


def index_of(questions: list[Question], key: tuple[str, str] | None) -> int | None:
    """Where the question (stem, dim) stands in `questions` (None: not there)."""
    if key is None:
        return None
    return next((i for i, q in enumerate(questions) if (q.stem, q.dim) == key), None)


def clip_views(ds: ClozeDataset, q: Question, display: str) -> list:
    """[before, after, A..D] as frame grids, or as video paths."""
    inst = ds.instance(q.stem)
    names = ["before", "after", *q.options]
    if display == "video":
        return [str(inst.clip_file(n)) for n in names]   # a repository's clips fetched first
    return clip_grids([inst.clip_path(n) for n in names], PAPER_FRAMES)


def prefetch_around(ds: ClozeDataset, questions: list[Question], index: int, display: str, *, model: bool,
                    answered: set | None = None) -> None:
    """Make, in the background, what the next action will show: the next question's frame grids
    (and, in a playthrough, the first unanswered one's, where an answer goes); in Model mode also
    the frames a model is sent for the question on screen."""
    if model:
        inst = ds.instance(questions[index].stem)
        prefetch([inst.clip_path(n) for n in ("before", "after", *questions[index].options)], PAPER_FRAMES,
                 kind="jpeg")
    if display == "video":
        return
    ahead = [index + 1]
    if answered is not None:
        ahead.append(next((k % len(questions) for k in range(index + 1, index + 1 + len(questions))
                           if (questions[k % len(questions)].stem, questions[k % len(questions)].dim)
                           not in answered), index))
    for nxt in dict.fromkeys(k for k in ahead if 0 <= k < len(questions) and k != index):
        inst = ds.instance(questions[nxt].stem)
        prefetch([inst.clip_path(n) for n in ("before", "after", *questions[nxt].options)], PAPER_FRAMES)


def media_cache(data_dir: str | Path) -> Path:
    """Where the playthrough's opaque-named links to its clips live (under the served data folder)."""
    return writable_dir(Path(data_dir) / SPEC.data / ".study-media", "cloze-study-media")


NAVIGATOR_MARKS_MAX = 300
NAVIGATOR_NEAR = 10   # a large set's navigator: the questions this far before and after


def render(session: ClozeSession, display: str) -> tuple[ClozeSession, QuestionView]:
    """The current question's clips, progress line and navigator; the clock restarts and the
    Model panel's answer of another question is cleared."""
    ds, qs = questions_for(session)
    questions = qs.questions
    index = min(max(0, session.index), len(questions) - 1)
    session = replace(session, index=index, shown_at=time.time(), selected=None, total=len(questions))
    if display == "video" and session.human:  # a playthrough never sends a clip's real name
        values = opaque_videos(media_cache(session.data_dir), "tab", session.annotator or session.session_id or "-",
                               index, ds.instance(questions[index].stem), questions[index])
    else:
        values = clip_views(ds, questions[index], display)
    video = display == "video"
    same_players = session.players == display

    def shown(value, as_video: bool):
        # a question in the display already shown sends only its media, as plain values: an update
        # that also sets `visible` costs gradio a new component per player on each question
        if same_players:
            return value if as_video == video else UNCHANGED
        return gr.update(value=value if as_video == video else None, visible=as_video == video)

    clips = (*[shown(values[i], False) for i in range(2)], *[shown(values[i], True) for i in range(2)],
             *[shown(values[2 + i], False) for i in range(4)],
             *[shown(values[2 + i], True) for i in range(4)])
    answered = latest_records(read_jsonl(session.file)) if session.file else {}
    prefetch_around(ds, questions, index, display, model=not session.human,
                    answered=set(answered) if session.human else None)
    done = sum(1 for x in questions if (x.stem, x.dim) in answered)
    # a set of a few hundred questions lists them all and marks the answered ones; a larger one
    # (the released 1,521 stems: 4,563) lists the questions near this one and takes any number
    # typed: a list of thousands cost the page ~0.9 s on every question, even unchanged
    if len(questions) <= NAVIGATOR_MARKS_MAX:
        marks = [f"{i + 1} · answered" if (x.stem, x.dim) in answered else f"{i + 1}" for i, x in enumerate(questions)]
        listed = f"{qs.name}:{len(questions)}:" + ",".join(str(i) for i, m in enumerate(marks) if "·" in m)
        shown = marks[index]
    else:
        near = range(max(0, index - NAVIGATOR_NEAR), min(len(questions), index + NAVIGATOR_NEAR + 1))
        marks = [str(i + 1) for i in sorted({0, *near, len(questions) - 1})]
        listed, shown = f"{qs.name}:{len(questions)}:{near.start}", str(index + 1)
    navigator = shown if listed == session.navigator else gr.update(choices=marks, value=shown)
    session = replace(session, navigator=listed, players=display)
    clock, tally = (" · 00:00", f" · answered {done}/{len(questions)}") if session.human else ("", "")
    ordered = f" · {SORTS[session.order][0].lower()}" if session.order in SORTS and not session.human else ""
    progress = f"**Question {index + 1} of {len(questions)}{clock}**{tally}{ordered}"
    return session, QuestionView(clips=clips, progress=progress, navigator=navigator, answer=AnswerBoxes.cleared())
