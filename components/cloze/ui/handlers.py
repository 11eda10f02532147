"""The Cloze tab's handlers: module-level functions taking the typed session (plus the inputs) and
returning a typed view whose fields map, in order, to the event's output components (layout.py
spreads them). The logic lives in the sibling modules of components/cloze."""
from __future__ import annotations

import dataclasses
import functools
import html
import logging
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from collections.abc import Callable

import gradio as gr

from backends.errors import BackendError
from components.cloze import links
from components.cloze.build import build_instance
from components.cloze.frames import clip_grids, prefetch
from components.cloze.human import (HubPush, annotator_file, export_records, latest_records,
                                    load_progress, load_study_files, new_session_id, record_answer,
                                    sanitise_annotator, study_dir, study_questions)
from components.cloze.data import ClozeDataset, find_root, folder_stamp, load_dataset, safe_extract_zip, shared_dataset
from components.cloze.leaderboard import comparability_note, reference_rows, row_from_results, table
from components.cloze.questions import Question, QuestionSet, build_set, distractor_type, set_names
from components.cloze.runner import answer_safely, run_orders, run_set
from components.cloze.metrics import check_results, human_results, score_results
from components.cloze.study.config import researcher_allowed
from components.cloze.study.media import opaque_videos
from components.cloze.solvers import SolverSettings, solvers_for
from components.cloze.ui.session import PRIVATE, RESOURCES, ClozeSession, resolve_root, shown_root
from components.common.admin import admin_mode
from components.common.errors import UserError
from components.common.fields import number, whole
from components.common.io import atomic_write_text, load_json, read_jsonl
from components.common.ui import user_errors
from components.settings.session import SessionSettings, backend_for

log = logging.getLogger(__name__)
UNCHANGED_CLIPS = 12  # BEGINNING/END images, BEGINNING/END videos, A-D images, A-D videos
PAPER_FRAMES = 16


# ---- views: one field per output component, in the order layout.py lists them ------------------
@dataclass
class QuestionView:
    clips: tuple            # UNCHANGED_CLIPS updates (images shown for "frames", videos for "video")
    progress: Any           # "**Question i of n · 00:00** · answered k/n"
    navigator: Any          # gr.update(choices=["1 ✓", "2", ...], value=...)

    @classmethod
    def unchanged(cls) -> QuestionView:
        return cls((gr.update(),) * UNCHANGED_CLIPS, gr.update(), gr.update())


@dataclass
class NavView:
    session: ClozeSession
    question: QuestionView


@dataclass
class AnswerView:
    session: ClozeSession
    question: QuestionView
    feedback: str


@dataclass
class StartView:
    session: ClozeSession
    question: QuestionView
    feedback: str
    timer: Any  # the progress clock runs in the human study only


@dataclass
class ModeView:
    question_group: Any
    model_group: Any
    compare_group: Any
    answer_row: Any
    export_row: Any
    annotator: Any
    blind: Any
    start: Any


@dataclass
class SourceView:
    session: ClozeSession
    root: Any
    status: Any


@dataclass
class RootView:
    set_name: Any
    status: str


@dataclass
class RunOneView:
    raw: str
    letter: str
    reason: str
    option_map: dict
    summary: str


@dataclass
class RunSetView:
    summary: str
    results_file: str


@dataclass
class LeaderboardView:
    leaderboard: Any
    human_vs_model: Any


@dataclass
class LinkView:
    """A page opened from a link to a question: the question shown, the controls it was built from."""

    session: ClozeSession
    question: QuestionView
    feedback: Any
    mode: Any
    root: Any
    set_name: Any
    dims: Any
    seed: Any
    mode_view: ModeView
    note: str = ""  # to the message line: what in the link was not understood

    @classmethod
    def unchanged(cls, session: ClozeSession, note: Any = None) -> LinkView:
        keep = gr.skip()
        return cls(session, QuestionView((keep,) * UNCHANGED_CLIPS, keep, keep), keep, keep, keep, keep,
                   keep, keep, ModeView(*[keep] * 8), keep if note is None else note)


@dataclass
class LinkBoxView:
    link: Any  # the query string (the page adds its own address), in the now visible link box


@dataclass
class BuildView:
    session: ClozeSession
    message: str
    root: str


# ---- views -> the outputs list (layout.py wires every handler through `emit`) ---------------
# The tab's message line is the last output of every event: cleared by an action that works,
# or one readable line for what went wrong. Errors never raise into gradio, so its red "Error"
# badges and toasts never cover a control.
UNEXPECTED = "Something went wrong while doing that ({}); nothing was changed. Try again, or reload the page."


def _is_view(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, (type, ClozeSession))


def _fields(view: Any) -> list:
    out: list = []
    for f in dataclasses.fields(view):
        if f.name == "note":
            continue
        value = getattr(view, f.name)
        if _is_view(value):
            out.extend(_fields(value))
        elif isinstance(value, tuple):
            out.extend(value)
        else:
            out.append(value)
    return out


def spread(view: Any) -> Any:
    """A view's fields in order as the outputs list, then the message line (the view's `note`,
    else cleared): a nested view or a tuple fills several components. A value that is not a view
    is one output, as it is."""
    if not _is_view(view):
        return view
    return [*_fields(view), getattr(view, "note", "")]


def failure_line(exc: BaseException, data_dir: str = "") -> str:
    """The message line for an exception a handler raised: never a stack trace, and a folder under
    the app's data folder is named relative to it, never as a server path."""
    if isinstance(exc, gr.Error):
        text = str(exc.message)  # already escaped by components.common.ui.shown_error
    elif isinstance(exc, (UserError, BackendError)):
        text = html.escape(str(exc), quote=False)
    else:
        log.exception("cloze tab: unexpected error")
        text = UNEXPECTED.format(type(exc).__name__)
    if data_dir:
        text = text.replace(os.path.abspath(data_dir) + os.sep, "").replace(os.path.abspath(data_dir), ".")
    return f"⚠ {text}"


def emit(handler: Callable[..., Any], n_out: int) -> Callable[..., Any]:
    """`handler` as gradio calls it with `n_out` outputs plus the message line: same signature
    (gr.Request and gr.Progress still reach it); an error leaves the outputs as they are."""
    @functools.wraps(handler)
    def call(*args, **kwargs):
        try:
            result = handler(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - shown on the message line
            session = args[0] if args and isinstance(args[0], ClozeSession) else None
            return [gr.skip()] * n_out + [failure_line(exc, session.data_dir if session else "")]
        return spread(result) if _is_view(result) else [result, ""]
    return call


# ---- helpers ---------------------------------------------------------------------------------
def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "run"


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


def runs_dir(data_dir: str | Path) -> Path:
    """The shared runs folder (what every visitor's leaderboard lists)."""
    env = os.environ.get("APP_CLOZE_RUNS_DIR")
    return writable_dir(Path(env) if env else Path(data_dir) / "cloze" / "runs", "cloze-runs")


def visitor_runs_dir(data_dir: str | Path, request: gr.Request | None) -> Path:
    """Where a visitor's "Run the set" writes: the shared folder with APP_ADMIN=1, else a folder
    of this page's own (listed only on its leaderboard, removed when the page closes)."""
    if admin_mode():
        return runs_dir(data_dir)
    resources = RESOURCES.get(getattr(request, "session_hash", None))
    own = [f for f in resources.folders if f.parent.name == "visitors"]
    return own[0] if own else _visitor_folder(runs_dir(data_dir) / "visitors", request)


CLIPS_PER_QUESTION = 6


def frame_cap(settings: dict | SessionSettings | None) -> int:
    """Frames per clip: the paper's 16, lowered so that the six clips of a question (BEGINNING,
    END, four candidates) fit the session's max frames per request."""
    chosen = settings if isinstance(settings, SessionSettings) else SessionSettings.from_state(settings)
    try:
        per_clip = int(chosen.max_frames or CLIPS_PER_QUESTION * PAPER_FRAMES) // CLIPS_PER_QUESTION
        return max(1, min(PAPER_FRAMES, per_clip))
    except (TypeError, ValueError):
        return PAPER_FRAMES


def solver_settings(settings, edge: str | None, strict: bool = False,
                    cancel: threading.Event | None = None, prompt_style: str | None = None) -> SolverSettings:
    return SolverSettings(max_frames=frame_cap(settings), edge_variant=edge or "edge1",
                          strict=bool(strict), cancel=cancel, prompt_style=prompt_style or "api")


_sets_cache: dict[tuple, tuple[tuple, tuple[ClozeDataset, QuestionSet]]] = {}
_sets_lock = threading.Lock()


def questions_for(session: ClozeSession) -> tuple[ClozeDataset, QuestionSet]:
    """The dataset and question set, cached per (folder, set, dims, seed, mode) until the folder changes."""
    key = (str(Path(session.root).resolve()), session.set_name, session.dims, session.seed, session.human)
    stamp = folder_stamp(session.root)
    with _sets_lock:
        hit = _sets_cache.get(key)
        if hit and hit[0] == stamp:
            return hit[1]
    ds = shared_dataset(session.root)
    mixed = session.dims == ("Mixed",) and "mixed" in ds.sets and session.set_name == "all"
    set_name = "mixed" if mixed else session.set_name
    if session.human:
        value = ds, study_questions(ds, set_name, session.seed, session.dims)
    else:
        value = ds, build_set(ds, set_name, session.dims, seed=session.seed)
    with _sets_lock:
        _sets_cache[key] = (stamp, value)
    return value


def clip_views(ds: ClozeDataset, q: Question, display: str) -> list:
    """[before, after, A..D] as frame grids, or as video paths."""
    inst = ds.instance(q.stem)
    names = ["before", "after", *q.options]
    if display == "video":
        return [str(inst.clip_path(n)) for n in names]
    return clip_grids([inst.clip_path(n) for n in names], PAPER_FRAMES)


def prefetch_around(ds: ClozeDataset, questions: list[Question], index: int, display: str, *, model: bool,
                    answered: set | None = None) -> None:
    """Make, in the background, what the next action will show: the next question's frame grids
    (and, in a study, the first unanswered one's, where an answer goes); in Model mode also the
    frames a model is sent for the question on screen."""
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
    """Where the human study's opaque-named links to its clips live (under the served data folder)."""
    return writable_dir(Path(data_dir) / "cloze" / ".study-media", "cloze-study-media")


def render(session: ClozeSession, display: str) -> tuple[ClozeSession, QuestionView]:
    """The current question's clips, progress line and navigator; the clock restarts."""
    ds, qs = questions_for(session)
    questions = qs.questions
    index = min(max(0, session.index), len(questions) - 1)
    session = replace(session, index=index, shown_at=time.time(), selected=None, total=len(questions))
    if display == "video" and session.human:  # the study never sends a clip's real name
        values = opaque_videos(media_cache(session.data_dir), "tab", session.annotator or session.session_id or "-",
                               index, ds.instance(questions[index].stem), questions[index])
    else:
        values = clip_views(ds, questions[index], display)
    video = display == "video"

    def shown(value, as_video: bool):
        return gr.update(value=value if as_video == video else None, visible=as_video == video)

    clips = (*[shown(values[i], False) for i in range(2)], *[shown(values[i], True) for i in range(2)],
             *[shown(values[2 + i], False) for i in range(4)],
             *[shown(values[2 + i], True) for i in range(4)])
    answered = latest_records(read_jsonl(session.file)) if session.file else {}
    prefetch_around(ds, questions, index, display, model=not session.human,
                    answered=set(answered) if session.human else None)
    marks = [f"{i + 1} · answered" if (x.stem, x.dim) in answered else f"{i + 1}" for i, x in enumerate(questions)]
    done = sum(1 for x in questions if (x.stem, x.dim) in answered)
    progress = f"**Question {index + 1} of {len(questions)} · 00:00** · answered {done}/{len(questions)}"
    return session, QuestionView(clips, progress, gr.update(choices=marks, value=marks[index]))


# ---- human study -----------------------------------------------------------------------------
_pushers: dict[str, HubPush] = {}  # one optional Hub push per study folder, per process
_pushers_lock = threading.Lock()


def start_hub_push(folder: Path) -> None:
    """Start (once per folder, per process) the optional Hub push of the study files."""
    with _pushers_lock:
        if str(folder) in _pushers:
            return
        push = HubPush.from_env(folder)
        if push is None:
            return
        try:
            push.start()
        except Exception as exc:  # noqa: BLE001 - pushing is optional; answers stay on disk
            gr.Warning(f"Could not start pushing study files to {push.repo_id}: {exc}")
            return
        _pushers[str(folder)] = push


def _open_study(session: ClozeSession, annotator: str) -> tuple[ClozeSession, str]:
    """The annotator's file, resumed at the first unanswered question; and the greeting."""
    name = sanitise_annotator(annotator)
    folder = study_dir(session.data_dir)
    session = replace(session, annotator=name, file=str(annotator_file(folder, name)),
                      session_id=new_session_id())
    start_hub_push(folder)
    _, qs = questions_for(session)
    total = len(qs.questions)
    progress = load_progress(session.file, qs.questions)
    done = progress.answered_count(qs.questions)
    if progress.next_index is None:
        return (replace(session, index=total - 1),
                f"All {total} questions are answered; use the navigator to review or redo.")
    message = f"Resumed: {done} of {total} already answered." if done else f"New session for {name}."
    return replace(session, index=progress.next_index), message


@user_errors
def start(session: ClozeSession, mode: str, root: str, set_name: str, dims: str, seed: float,
          annotator: str, display: str) -> StartView:
    """Start / resume (human study) or Load the question set (model mode)."""
    session = session.with_inputs(mode, root, set_name, dims, seed)
    if session.human:
        session, message = _open_study(session, annotator)
    else:
        session, message = replace(session, file="", index=0), ""
    session, view = render(session, display)
    return StartView(session, view, message, gr.Timer(active=session.human))


def tick(session: ClozeSession) -> Any:
    """The progress line's clock (every second while a study question is shown)."""
    if not session.loaded or session.shown_at is None or not session.total:
        return gr.update()
    return f"**Question {session.index + 1} of {session.total} · {mmss(time.time() - session.shown_at)}**"


@user_errors
def go_to(session: ClozeSession, display: str, target: int) -> NavView:
    if not session.loaded:
        return NavView(session, QuestionView.unchanged())
    return NavView(*render(replace(session, index=target), display))


def previous_question(session: ClozeSession, display: str) -> NavView:
    return go_to(session, display, session.index - 1)


def next_question(session: ClozeSession, display: str) -> NavView:
    return go_to(session, display, session.index + 1)


def navigate(session: ClozeSession, display: str, label: str) -> NavView:
    """The navigator's label "7 · answered" -> question 7."""
    return go_to(session, display, int(str(label).split()[0]) - 1)


def redisplay(session: ClozeSession, display: str) -> NavView:
    return go_to(session, display, session.index)


def _feedback(number: int, rec: dict, letter: str, blind: bool) -> str:
    if blind:
        return f"Question {number}: answer saved."
    if rec["correct"]:
        return f"Question {number}: **Correct** - {rec['expected']} was the true middle."
    return (f"Question {number}: **Not quite** - {rec['expected']} was the true middle; you chose "
            f"{letter}: {distractor_type(rec['chosen'])}.")


def _save_answer(session: ClozeSession, letter: str, display: str, flow: str, blind: bool) -> AnswerView:
    """Append the answer durably (fsynced before this returns), then show the next unanswered one."""
    if not session.file:
        raise UserError("Press Start / resume first (with an annotator id).")
    _, qs = questions_for(session)
    questions = qs.questions
    shown_at = session.shown_at if session.shown_at is not None else time.time()
    rec = record_answer(session.file, questions[session.index], task_index=session.index, answer=letter,
                        annotator=session.annotator, session=session.session_id, set_name=qs.name,
                        order_seed=session.seed, display_mode=display, answer_flow=flow,
                        elapsed_sec=time.time() - shown_at, blind=bool(blind))
    feedback = _feedback(session.index + 1, rec, letter, blind)
    progress = load_progress(session.file, questions)
    if progress.next_index is not None:
        later = [i for i in range(session.index + 1, len(questions))
                 if (questions[i].stem, questions[i].dim) not in progress.answered]
        session = replace(session, index=later[0] if later else progress.next_index)
    else:
        feedback += f" All {len(questions)} questions answered - thank you."
    session, view = render(session, display)
    return AnswerView(session, view, feedback)


@user_errors
def choose(session: ClozeSession, letter: str, display: str, flow: str, blind: bool) -> AnswerView:
    """A letter button: answers at once, or (select then submit) only selects."""
    if flow == "immediate":
        return _save_answer(session, letter, display, flow, blind)
    return AnswerView(replace(session, selected=letter), QuestionView.unchanged(),
                      f"Selected {letter}; press Submit.")


@user_errors
def submit(session: ClozeSession, display: str, flow: str, blind: bool) -> AnswerView:
    if not session.selected:
        raise UserError("Select A, B, C or D first.")
    return _save_answer(session, session.selected, display, flow, blind)


@user_errors
def export(session: ClozeSession, fmt: str) -> str:
    """The session's latest answers as a JSON or CSV file to download."""
    if not session.file:
        raise UserError("Start a session first; its answers are exported.")
    text = export_records(read_jsonl(session.file), fmt)
    out = Path(tempfile.mkdtemp(prefix="cloze-export-")) / f"{session.annotator}.{fmt}"
    atomic_write_text(out, text)
    return str(out)


def export_json(session: ClozeSession) -> str:
    return export(session, "json")


def export_csv(session: ClozeSession) -> str:
    return export(session, "csv")


# ---- data folder and mode --------------------------------------------------------------------
def _visitor_folder(parent: Path, request: gr.Request | None) -> Path:
    """A new folder of this visitor's under `parent`, removed when the page closes."""
    folder = parent / uuid.uuid4().hex[:12]
    folder.mkdir(parents=True, exist_ok=True)
    RESOURCES.get(getattr(request, "session_hash", None)).folders.append(folder)
    return folder


@user_errors
def upload(session: ClozeSession, file, request: gr.Request = None) -> SourceView:
    """An uploaded zip in the released layout, extracted safely into a folder of this visitor's
    (another visitor cannot open it; it is removed when the page closes, or at once when bad)."""
    if file is None:
        return SourceView(session, gr.update(), gr.update())
    path = Path(file if isinstance(file, str) else file.name)
    dest = _visitor_folder(Path(session.data_dir) / "cloze" / "uploads", request)
    try:
        safe_extract_zip(path, dest)
        root = find_root(dest)
        ds = load_dataset(root)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    session = replace(session, own_roots=(*session.own_roots, str(dest)))
    return SourceView(session, shown_root(str(root), session.data_dir),
                      f"Loaded {len(ds.instances)} stems from {path.name}.")


@user_errors
def load_root(session: ClozeSession, root: str) -> RootView:
    ds = shared_dataset(resolve_root(root, session.data_dir, session.own_roots))
    problems = ds.problems()
    note = f"{len(ds.instances)} stems." + (f" Problems: {'; '.join(problems[:4])}" if problems else "")
    return RootView(gr.update(choices=set_names(ds), value="all"), note)


@user_errors
def mode_view(mode: str) -> ModeView:
    human = mode == "Human study"
    return ModeView(gr.update(visible=mode != "Compare"), gr.update(visible=mode == "Model"),
                    gr.update(visible=mode == "Compare"), *[gr.update(visible=human) for _ in range(4)],
                    gr.update(value="Start / resume" if human else "Load the question set"))


# ---- links to a question ---------------------------------------------------------------------
def open_page(session: ClozeSession, display: str, request: gr.Request = None) -> LinkView:
    """Page load: the question a link names (`?tab=cloze&stem=&q=`), else nothing changes (and the
    default sets' first questions are drawn ahead)."""
    params = dict(getattr(request, "query_params", None) or {})
    if not links.is_for_this_tab(params):
        draw_first_ahead(session, display)
    return open_link(session, params, display)


def warm(data_dir: str | Path) -> None:
    """After start-up (components/common/warm.py): read the default data folder (1,521 stems:
    ~60 ms, plus ~130 ms the first time a process checks a meta.json against its schema) and
    draw the default sets' first questions, as a page load would."""
    session = ClozeSession(data_dir=str(data_dir))
    load_root(session, "cloze")
    thread = draw_first_ahead(session, "frames")
    if thread is not None:
        thread.join()


def draw_first_ahead(session: ClozeSession, display: str, root: str = "cloze") -> threading.Thread | None:
    """While a visitor reads the page, build the default question sets (study and model order) and
    draw their first questions in the background, so that Start / resume shows one at once (at
    1,521 stems: ~85 ms for a set, ~0.4 s to decode a question's six clips). Kept across visitors:
    a second visitor finds both made. Nothing is shown or recorded; a folder that cannot be read
    is left for Start to report."""
    if display == "video" or not session.data_dir:
        return None

    def work() -> None:
        for mode in ("Human study", "Model"):
            try:
                ds, qs = questions_for(session.with_inputs(mode, root, "all", None, None))
                q = qs.questions[0]
                inst = ds.instance(q.stem)
                prefetch([inst.clip_path(n) for n in ("before", "after", *q.options)], PAPER_FRAMES)
            except Exception as exc:  # noqa: BLE001 - Start reports it to the visitor
                log.debug("cloze: drawing the first question ahead failed: %s", exc)
    thread = threading.Thread(target=work, name="cloze-first-ahead", daemon=True)
    thread.start()
    return thread


def _link_root(session: ClozeSession, req: links.LinkRequest, problems: list[str]) -> str:
    try:
        resolve_root(req.folder, session.data_dir, session.own_roots)
        return req.folder
    except UserError:
        problems.append(f"The link's folder `{req.folder}` is not a shared folder of this app's data; "
                        f"showing `{links.DEFAULT_FOLDER}`.")
        return links.DEFAULT_FOLDER


def open_link(session: ClozeSession, params: dict, display: str) -> LinkView:
    """The question a link names, shown and ready (in the human study it is answered after Start /
    resume); one line on the message line for each value that was not understood."""
    if not links.is_for_this_tab(params):
        return LinkView.unchanged(session)
    req = links.read_link(params)
    problems = list(req.problems)
    folder = _link_root(session, req, problems)
    session = session.with_inputs(req.mode, folder, req.set_name, req.dims_choice, req.seed)
    try:
        ds, qs = questions_for(session)
    except UserError as exc:
        if req.set_name == "all":
            return LinkView.unchanged(session, "⚠ The link could not be opened: "
                                      + failure_line(exc, session.data_dir).removeprefix("⚠ "))
        problems.append(f"The link's set `{req.set_name}` is not in this data; showing all.")
        session = replace(session, set_name="all")
        ds, qs = questions_for(session)
    index, missing = links.find_question(req, [(q.stem, q.dim) for q in qs.questions])
    problems += missing
    session, view = render(replace(session, index=index, file="", annotator=""), display)
    feedback = ("Opened from a link. To answer in the study, enter an annotator id and press Start / resume."
                if session.human else "")
    note = " ".join(problems)
    return LinkView(session, view, feedback, req.mode, shown_root(session.root, session.data_dir),
                    gr.update(choices=set_names(ds), value=session.set_name), req.dims_choice, session.seed,
                    mode_view(req.mode), f"⚠ {html.escape(note, quote=False)}" if note else "")


def _private(session: ClozeSession) -> bool:
    shown = Path(shown_root(session.root, session.data_dir)).as_posix()
    return any(shown == p or shown.startswith(p + "/") for p in PRIVATE)


def copy_link(session: ClozeSession) -> LinkBoxView:
    """The query string of a link to the question on screen (the page adds its own address)."""
    if not session.loaded:
        raise UserError("Copy link: open a question first (Start / resume, or Load the question set).")
    if _private(session):
        raise UserError("Copy link: this question is in a folder only this page can open (an upload or a "
                        f"build), so a link would not open it elsewhere; choose `{links.DEFAULT_FOLDER}` to "
                        "share a question.")
    _, qs = questions_for(session)
    q = qs.questions[min(max(0, session.index), len(qs.questions) - 1)]
    query = links.question_link(human=session.human, folder=shown_root(session.root, session.data_dir),
                                set_name=session.set_name, dims=session.dims, seed=session.seed,
                                stem=q.stem, dim=q.dim)
    return LinkBoxView(gr.update(value=query, visible=True))


# ---- model mode ------------------------------------------------------------------------------
def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


@user_errors
def run_one(session: ClozeSession, settings: dict, mode: str, root: str, set_name: str, dims: str,
            seed: float, edge: str, strict: bool, prompt_style: str = "api") -> RunOneView:
    """Answer the question shown with the session's backend (or the edge baseline)."""
    session = session.with_inputs("Model", root, set_name, dims, seed)
    ds, qs = questions_for(session)
    q = qs.questions[min(session.index, len(qs.questions) - 1)]
    solvers = solvers_for(backend_for(settings), solver_settings(settings, edge, strict,
                                                                 prompt_style=prompt_style))
    rec = answer_safely(solvers.solver, ds, q)
    why = rec.get("reason") or rec.get("error") or ""
    verdict = "correct" if rec["correct"] else ("wrong" if rec.get("answer") else
                                                "truncated at max_tokens - recorded as truncated, not scored"
                                                if rec.get("truncated") else
                                                "unparsed - counted as unparsed, not guessed")
    summary = (f"{q.stem} · {q.dim} · expected {q.expected} · {verdict} · frames per clip "
               f"{rec.get('used_num_frames', '-')} · attempts {rec.get('attempts', '-')}")
    return RunOneView(rec.get("raw", ""), rec.get("answer") or "(unparsed)", why, rec["option_map"], summary)


def _run_summary(name: str, set_name: str, res: dict) -> str:
    m = score_results(res["results"])
    counts = res["counts"]
    return (f"**{name}** on {set_name}: S {_percent(m['S'])} · A {_percent(m['A'])} · P {_percent(m['P'])} · "
            f"acc {_percent(m['acc'])} · 3/3 {_percent(m['3/3'])} · parse rate {_percent(m['parse_rate'])} · "
            f"invalid {m['invalid_entries_skipped']} ("
            + ", ".join(f"{k} {n}" for k, n in m["invalid_kinds"].items() if n) + ") · "
            f"{counts['done']} new, {counts['skipped']} resumed"
            + (f" · {counts['failed']} failed (backend error; run again to retry)" if counts.get("failed") else ""))


@user_errors
def run_whole_set(session: ClozeSession, settings: dict, root: str, set_name: str, dims: str,
                  seed: float, edge: str, strict: bool, prompt_style: str = "api",
                  request: gr.Request = None, progress=gr.Progress()) -> RunSetView:
    """Answer the whole set into this app's runs folder (resumable; stops when the page closes)."""
    session = session.with_inputs("Model", root, set_name, dims, seed)
    ds, qs = questions_for(session)
    stop = RESOURCES.get(getattr(request, "session_hash", None)).stop
    solvers = solvers_for(backend_for(settings), solver_settings(settings, edge, strict, cancel=stop,
                                                                 prompt_style=prompt_style))
    style = "" if (prompt_style or "api") == "api" else f"-{prompt_style}"
    out = visitor_runs_dir(session.data_dir, request) / f"{safe_name(f'{solvers.name}-{qs.name}-seed{session.seed}{style}')}.json"
    total = len(qs.questions)
    seen = [0]

    def tick_progress(_rec: dict) -> None:
        seen[0] += 1
        progress((seen[0], total), desc="cloze questions")

    progress((0, total), desc="cloze questions")
    res = run_set(solvers.solver, ds, qs.questions, out, progress=False, on_result=tick_progress, stop=stop)
    return RunSetView(_run_summary(solvers.name, qs.name, res), str(out))


@user_errors
def order_sensitivity(session: ClozeSession, settings: dict, root: str, set_name: str, dims: str,
                      seed: float, edge: str, k: float, limit: float, prompt_style: str = "api",
                      request: gr.Request = None, progress=gr.Progress()) -> str:
    """The first `limit` questions under k candidate orders: FR, CFR, Range, Disp (Table 4)."""
    session = session.with_inputs("Model", root, set_name, dims, seed)
    ds, qs = questions_for(session)
    k = whole(k, "Orders k", default=4, least=2, most=24)   # 4 candidates have 4! = 24 orders
    questions = qs.questions[:whole(limit, "Questions", default=6, least=1)]
    stop = RESOURCES.get(getattr(request, "session_hash", None)).stop
    solvers = solvers_for(backend_for(settings), solver_settings(settings, edge, cancel=stop,
                                                                 prompt_style=prompt_style))
    res = run_orders(solvers.solver, ds, questions, k,
                     on_step=lambda i, t: progress((i, t), desc="orders"))
    m = res["metrics"]
    return (f"**{solvers.name}**, {m['questions']} questions × {m['orders']} orders: "
            f"FR {m['FR']:.1f} · CFR {m['CFR']:.1f} · Range {m['Range']:.1f} · Disp. {m['Disp']:.2f} · "
            f"accuracy per order {', '.join(f'{a:.1f}' for a in m['per_order_acc'])}")


# ---- compare ---------------------------------------------------------------------------------
def _run_files(data_dir: str, request: gr.Request | None = None) -> dict[str, dict]:
    """The shared run result files and this page's own, by name; a half-written or malformed
    file is skipped."""
    runs = {}
    folders = [runs_dir(data_dir)]
    if not admin_mode():
        folders += [f for f in RESOURCES.get(getattr(request, "session_hash", None)).folders
                    if f.parent.name == "visitors"]
    for path in sorted(p for folder in folders for p in folder.glob("*.json")):
        try:
            runs[path.stem] = check_results(load_json(path, "result file"), str(path))
        except UserError:
            continue
    return runs


def _import_row(file) -> dict:
    path = Path(file if isinstance(file, str) else file.name)
    if path.suffix == ".jsonl":
        return row_from_results(f"Human ({path.stem})", human_results(load_study_files([path])), "imported")
    return row_from_results(path.stem, load_json(path, "result file"), "imported")


def _study_results(data_dir: str) -> dict:
    folder = study_dir(data_dir)
    files = sorted(folder.glob("*.jsonl")) if folder.exists() else []
    return human_results(load_study_files(files)) if files else {}


def _human_vs_model(human: dict, runs: dict[str, dict]) -> Any:
    keys = sorted({(s, d) for s, dd in human.items() for d in dd} |
                  {(s, d) for r in runs.values() for s, dd in r.items() for d in dd})
    rows = []
    for stem, dim in keys:
        h = human.get(stem, {}).get(dim)
        row = [stem, {"C": "P"}.get(dim, dim),
               "-" if h is None else ("✓ GT" if h["correct"] else "✗ " + ", ".join(str(p) for p in h["picks"]))]
        for run in runs.values():
            e = run.get(stem, {}).get(dim)
            pick = (e.get("option_map") or {}).get(e.get("answer") or "", "unparsed") if e else "-"
            row.append("-" if e is None else ("✓ " if e.get("correct") else "✗ ") + str(pick))
        rows.append(row)
    headers = ["stem", "dim", "Human", *runs] if rows else ["stem", "dim", "Human"]
    return gr.update(value=rows or [["-", "-", "-"]], headers=headers)


@user_errors
def refresh(session: ClozeSession, imported: list | None, files: list | None,
            token: str | None = "", request: gr.Request = None) -> LeaderboardView:
    """The paper's rows, imported files, this app's runs and this study, scored alike. The study's
    own answers (its row, the per-question human column) need the researcher token."""
    rows = reference_rows() + list(imported or [])
    rows += [_import_row(f) for f in files or []]
    runs = _run_files(session.data_dir, request)
    rows += [row_from_results(name, results, "this app") for name, results in runs.items()]
    human = _study_results(session.data_dir) if researcher_allowed(token) else {}
    if human:
        rows.append(row_from_results("Human (this study)", human, "this study",
                                     data=f"human study in '{Path(session.data_dir).name}'"))
    headers, body = table(rows)
    label = f"Leaderboard. {comparability_note()}"
    return LeaderboardView(gr.update(value=body, headers=headers, label=label), _human_vs_model(human, runs))


# ---- build an instance -----------------------------------------------------------------------
def _requested_gap(gap_start: float | None, gap_end: float | None) -> tuple[float, float] | None:
    """The gap typed, or None for an automatic one: both boxes empty, or both 0 (the page sends
    0 for a number box left empty)."""
    if gap_start in (None, 0) and gap_end in (None, 0):
        return None
    if gap_start is None or gap_end is None:
        raise UserError("Give both gap start and gap end, or leave both empty for an automatic gap.")
    start, end = number(gap_start, "Gap start", least=0), number(gap_end, "Gap end", least=0)
    if end <= start:
        raise UserError(f"Gap end ({end:g} s) must be after gap start ({start:g} s).")
    return start, end


@user_errors
def build(session: ClozeSession, file, gap_start: float | None, gap_end: float | None, seed: float,
          request: gr.Request = None, progress=gr.Progress()) -> BuildView:
    """A TempCloze instance cut from the uploaded video; the data folder then points at it."""
    if file is None:
        raise UserError("Upload a video first.")
    path = Path(file if isinstance(file, str) else file.name)
    gap = _requested_gap(gap_start, gap_end)
    out_root = _visitor_folder(Path(session.data_dir) / "cloze" / "built", request)
    progress(0.1, desc="cutting clips")
    stem = safe_name(path.stem)
    entry = build_instance(path, out_root, stem=stem, gap=gap,
                           seed=whole(seed, "Distractor seed", default=0, least=0))
    tries = "; ".join(f"gap {t['gap'][0]}-{t['gap'][1]} s flow {t['flow']:.2f}" for t in entry["gap_tries"])
    message = (f"Built **{stem}**: gap {entry['gap_start']}-{entry['gap_end']} s of {entry['duration']} s, "
               f"seed {entry['seed']}" + (f" (tries: {tries})" if tries else " (explicit gap)")
               + f". Saved under `{shown_root(str(out_root), session.data_dir)}` (yours until this page "
                 "closes); the tab now reads it.")
    return BuildView(replace(session, own_roots=(*session.own_roots, str(out_root))), message,
                     shown_root(str(out_root), session.data_dir))


def release_session(request: gr.Request) -> None:
    """Page closed: stop this session's running batches and drop its resources."""
    RESOURCES.release(getattr(request, "session_hash", None))
