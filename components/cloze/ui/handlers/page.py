"""The Cloze tab as a page: the mode's panels, opening the question a link names, copying a link
to the question on screen, and drawing the default sets' first questions ahead."""
from __future__ import annotations

import html
import logging
import threading
from dataclasses import replace
from pathlib import Path

import gradio as gr

from components.cloze.spec import SPEC
from components.cloze import links
from components.cloze.frames import prefetch
from components.cloze.questions import set_names
from components.cloze.ui.handlers.compare_panel import refresh
from components.cloze.ui.handlers.question import PAPER_FRAMES, index_of, questions_for, render, shown_question
from components.cloze.ui.handlers.source_panel import load_root
from components.cloze.ui.views import LinkBoxView, LinkView, ModePick, ModeView, NavView
from components.cloze.ui.session import ClozeResources, COMPARE, HUMAN, MODEL, PRACTICE, PRIVATE, RESOURCES, ClozeSession, \
    ClozeTab, resolve_root, shown_root
from components.base.errors import UserError

from components.common.ui import UNCHANGED, error_line, poll, preparing_note

log = logging.getLogger(__name__)

#: the line a linked question opens with in the practice playthrough. Each part names only what is
#: on screen: Start / resume where the configuration shows (`config-only`), the letter keys in
#: presentation mode (`present-only`), which hides Start (theme.py)
LINK_NOTE = ('Opened from a link: choose a letter to answer it<span class="present-only"> (or press its key, '
             'A-D or 1-4)</span><span class="config-only"> (or press Start / resume to play under your '
             'id)</span>.')


def mode_view(mode: str) -> ModeView:
    practice = mode == PRACTICE
    return ModeView(question_group=gr.update(visible=mode != COMPARE), model_group=gr.update(visible=mode == MODEL),
                    compare_group=gr.update(visible=mode == COMPARE), practice_row=gr.update(visible=practice),
                    answer_row=gr.update(visible=practice), export_row=gr.update(visible=practice),
                    start=gr.update(value="Start / resume" if practice else "Load the question set",
                                    visible=mode != COMPARE),
                    run_row=gr.update(visible=mode == MODEL), progress_box=gr.update(visible=mode != COMPARE),
                    status_line=gr.update(visible=mode != COMPARE), display=gr.update(visible=mode != COMPARE),
                    copy_link=gr.update(visible=mode != COMPARE), runs_fold=gr.update(visible=mode != COMPARE))


def pick_mode(tab: ClozeTab, res: ClozeResources, session: ClozeSession, mode: str, imported: list | None,
              token: str | None, display: str = "frames") -> ModePick:
    """The Mode radio: its panels; Compare opens on the leaderboard at once. The question on
    screen stays, numbered in the new mode's order (the practice playthrough's or the
    evaluation's), so that what the Model panel runs is the question shown; the last answer's
    verdict goes."""
    if mode == COMPARE:
        board = refresh(tab, res, session, imported, [], token)
        return ModePick(panels=mode_view(mode), board=board, feedback="", message=board.message,
                        session=replace(session, comparing=True))
    human = mode == PRACTICE
    if human == session.human:
        return ModePick(panels=mode_view(mode), feedback="", session=replace(session, comparing=False)
                        if session.comparing else UNCHANGED)
    shown = shown_question(session)
    session = replace(session, mode=HUMAN if human else MODEL, comparing=False)   # a playthrough's file stays
    if shown is None:
        return ModePick(panels=mode_view(mode), session=session, feedback="")
    _, qs = questions_for(session)
    session, question = render(replace(session, index=index_of(qs.questions, shown) or 0), display)
    return ModePick(panels=mode_view(mode), session=session, question=question, feedback="")


def order_questions(tab: ClozeTab, res: ClozeResources, session: ClozeSession, display: str, order: str | None
                    ) -> NavView:
    """The Order dropdown (Model mode): the navigator, ◀ ▶ and the keys step through the set in the
    runs' order (hardest first, most disagreement, people right and every model wrong, ...; "" the
    set's own), the question on screen kept when the new order has it. A practice playthrough keeps
    its own order: the runs' answers would spoil it."""
    order = order or ""
    if session.human:
        raise UserError("Question order: a practice playthrough keeps its own order (the runs' answers would "
                        "give it away); choose Model mode to order the questions by the runs.")
    shown = shown_question(session)
    session = replace(session, order=order)
    if shown is None:
        return NavView(session=session)
    _, qs = questions_for(session)   # refuses an order with no question, before anything changes
    session, question = render(replace(session, index=index_of(qs.questions, shown) or 0), display)
    return NavView(session=session, question=question)


def open_page(tab: ClozeTab, res: ClozeResources, session: ClozeSession, display: str, params: dict) -> LinkView:
    """Page load: the question a link names (`?tab=cloze&stem=&q=`), else nothing changes (and the
    default sets' first questions are drawn ahead). While the tab's data is still being made, only
    that is said, and the page asks again."""
    note = preparing_note(SPEC.data)
    if note is not None:
        return LinkView(session=session, poll=poll(True), message=note)
    if not links.is_for_this_tab(params):
        draw_first_ahead(session, display)
        return replace(_first_question(session, display), poll=poll(False))
    return replace(open_link(session, params, display, res), poll=poll(False))


def _first_question(session: ClozeSession, display: str) -> LinkView:
    """A page that names no question opens on the practice playthrough's first question, its
    clips shown (never six empty boxes); Start / resume then plays the visitor's first unanswered
    one. A folder that cannot be read is left for Start to report."""
    try:
        shown = session.with_inputs(PRACTICE, links.DEFAULT_FOLDER, "all", None, None)
        shown, view = render(replace(shown, index=0, file="", annotator="", pinned=False), display)
    except UserError:
        return LinkView(session=session, message=None)
    return LinkView(session=shown, question=view)


def warm(data_dir: str | Path) -> None:
    """After start-up (components/common/warm.py): read the default data folder (1,521 stems:
    ~60 ms, plus ~130 ms the first time a process checks a meta.json against its schema) and
    draw the default sets' first questions, as a page load would."""
    session = ClozeSession(data_dir=str(data_dir))
    load_root(ClozeTab(str(data_dir)), RESOURCES.get("warm"), session, SPEC.data)
    RESOURCES.release("warm")
    thread = draw_first_ahead(session, "frames")
    if thread is not None:
        thread.join()


def draw_first_ahead(session: ClozeSession, display: str, root: str = SPEC.data) -> threading.Thread | None:
    """While a visitor reads the page, build the default question sets (practice and model order)
    and draw their first questions in the background, so that Start / resume shows one at once (at
    1,521 stems: ~85 ms for a set, ~0.4 s to decode a question's six clips). Kept across visitors:
    a second visitor finds both made. Nothing is shown or recorded; a folder that cannot be read
    is left for Start to report."""
    if display == "video" or not session.data_dir:
        return None

    def work() -> None:
        for mode in (PRACTICE, MODEL):
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


def open_link(session: ClozeSession, params: dict, display: str, res: ClozeResources | None = None) -> LinkView:
    """The question a link names, shown and ready (in the practice playthrough a letter answers it:
    the first answer starts a playthrough under a made-up id, as Start / resume with an empty id
    would); one line on the message line for each value that was not understood."""
    if not links.is_for_this_tab(params):
        return LinkView(session=session, message=None)
    req = links.read_link(params)
    problems = list(req.problems)
    folder = _link_root(session, req, problems)
    session = replace(session.with_inputs(req.mode, folder, req.set_name, req.dims_choice, req.seed), order="")
    try:
        ds, qs = questions_for(session)
    except UserError as exc:
        if req.set_name == "all":
            return LinkView(session=session, message="⚠ The link could not be opened: "
                            + error_line(exc, session.data_dir).removeprefix("⚠ "))
        problems.append(f"The link's set `{req.set_name}` is not in this data; showing all.")
        session = replace(session, set_name="all")
        ds, qs = questions_for(session)
    if req.sort:
        try:
            session = replace(session, order=req.sort)
            _, qs = questions_for(session)
        except UserError as exc:
            problems.append(str(exc))
            session = replace(session, order="")
    index, missing = links.find_question(req, [(q.stem, q.dim) for q in qs.questions])
    problems += missing
    asked = req.stem is not None or req.number is not None
    session, view = render(replace(session, index=index, file="", annotator="", pinned=asked), display)
    feedback = LINK_NOTE if session.human and asked else ""
    board = UNCHANGED
    if req.mode == COMPARE:
        session = replace(session, comparing=True)
        board = refresh(ClozeTab(session.data_dir), res or ClozeResources(), session, [], [], None)
        problems += [board.message.removeprefix("⚠ ")] if board.message else []
    note = " ".join(problems)
    return LinkView(session=session, question=view, feedback=feedback, mode=req.mode, board=board,
                    root=shown_root(session.root, session.data_dir),
                    set_name=gr.update(choices=set_names(ds), value=session.set_name), dims=req.dims_choice,
                    seed=session.seed, panels=mode_view(req.mode),
                    order=UNCHANGED if session.human else session.order,
                    message=f"⚠ {html.escape(note, quote=False)}" if note else "")


def _private(session: ClozeSession) -> bool:
    shown = Path(shown_root(session.root, session.data_dir)).as_posix()
    return any(shown == p or shown.startswith(p + "/") for p in PRIVATE)


def view_address(tab: ClozeTab, session: ClozeSession) -> str:
    """The query string of the view `session` shows, for the page's address: the question on
    screen once the visitor asked for it, played it or runs a model on it (a page opened on the
    playthrough's first question says only the tab: a reload opens that again, and Start still
    resumes); a folder only this page can open is left out."""
    if session.comparing:
        return links.view_link(tab=links.TAB, mode="compare")
    shown = shown_question(session)
    asked = session.pinned or bool(session.file) or not session.human
    if shown is None or not asked or _private(session):
        return links.view_link(tab=links.TAB, mode=None if session.human else "model")
    return links.question_link(human=session.human, folder=shown_root(session.root, session.data_dir),
                               set_name=session.set_name, dims=session.dims, seed=session.seed,
                               stem=shown[0], dim=shown[1], sort=session.order)


def copy_link(tab: ClozeTab, res: ClozeResources, session: ClozeSession) -> LinkBoxView:
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
                                stem=q.stem, dim=q.dim, sort=session.order)
    return LinkBoxView(link=gr.update(value=query, visible=True))
