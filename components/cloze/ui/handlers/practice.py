"""The practice playthrough: a person plays the set in the released study's order, answers are
recorded (resumable under the same id, exportable) apart from any real study, and the true middle
is named after each answer unless Blind is on. Real human studies run on the study page
(`python -m components.cloze.study`): invitation tokens, no option names anywhere."""
from __future__ import annotations

import secrets
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import gradio as gr

from components import datasource
from components.cloze import reveal
from components.cloze.human import (annotator_file, answer_feedback, export_records, latest_records, load_progress,
                                    new_session_id, playthrough_blind, record_answer, sanitise_annotator)
from components.cloze.metrics import PAPER_KEYS
from components.cloze.questions import Question
from components.cloze.runs import loader_for
from components.cloze.ui.handlers.question import index_of, mmss, practice_dir, questions_for, render, \
    shown_question
from components.cloze.ui.views import AnswerView, ClockView, ExportView, NavView, StartView, TimerView
from components.cloze.ui.session import ClozeResources, ClozeSession, ClozeTab
from components.base.errors import UserError
from components.base.io import atomic_write_text, read_jsonl

from components.common.ui import UNCHANGED


def anonymous_id() -> str:
    return f"anon-{secrets.token_hex(3)}"


def _open_practice(session: ClozeSession, annotator: str | None, chosen: int | None) -> tuple[ClozeSession, str]:
    """The player's file, resumed at the first unanswered question (at `chosen`, the question on
    screen, when the visitor asked for it); and the greeting. An empty id starts under a fresh
    anonymous one (shown in the box, kept by the browser)."""
    name = sanitise_annotator((annotator or "").strip() or anonymous_id())
    session = replace(session, annotator=name, file=str(annotator_file(practice_dir(session.data_dir), name)),
                      session_id=new_session_id())
    _, qs = questions_for(session)
    total = len(qs.questions)
    progress = load_progress(session.file, qs.questions)
    done = progress.answered_count(qs.questions)
    message = (f"Resumed practice as {name}: {done} of {total} already answered." if done
               else f"Practice playthrough as {name} (recorded under this id; type it again to resume).")
    if chosen is not None:
        return replace(session, index=chosen), message + " Answer the question on screen."
    if progress.next_index is None:
        return (replace(session, index=total - 1),
                f"All {total} questions are answered; use the navigator to review or redo.")
    return replace(session, index=progress.next_index), message


def start(tab: ClozeTab, res: ClozeResources, session: ClozeSession, mode: str, root: str, set_name: str, dims: str,
          seed: float, annotator: str, display: str) -> StartView:
    """Start / resume (practice playthrough) or Load the question set (model mode). A question
    the visitor asked for (a link, ◀ ▶, the navigator) is the one played, when the set has it;
    else the first unanswered one / the set's first."""
    asked = shown_question(session) if session.pinned else None
    session = session.with_inputs(mode, root, set_name, dims, seed)
    _, qs = questions_for(session)
    chosen = index_of(qs.questions, asked)
    if session.human:
        session, feedback = _open_practice(session, annotator, chosen)
    else:
        session, feedback = replace(session, file="", index=chosen or 0), ""
    session, view = render(replace(session, pinned=False), display)
    return StartView(session=session, question=view, feedback=feedback,
                     annotator=session.annotator if session.human else UNCHANGED)


def tick(tab: ClozeTab, res: ClozeResources, session: ClozeSession) -> ClockView:
    """The progress line's clock (every second while a practice question is shown)."""
    if not session.loaded or session.shown_at is None or not session.total or not session.human:
        return ClockView()
    return ClockView(progress=f"**Question {session.index + 1} of {session.total} · "
                     f"{mmss(time.time() - session.shown_at)}**")


def go_to(session: ClozeSession, display: str, target: int, *, pin: bool = True) -> NavView:
    """Question `target` on screen; `pin`: the visitor asked for it (Start then plays it)."""
    if not session.loaded:
        return NavView(session=session)
    session, question = render(replace(session, index=target, pinned=session.pinned or pin), display)
    return NavView(session=session, question=question)


def previous_question(tab: ClozeTab, res: ClozeResources, session: ClozeSession, display: str) -> NavView:
    return go_to(session, display, session.index - 1)


def next_question(tab: ClozeTab, res: ClozeResources, session: ClozeSession, display: str) -> NavView:
    return go_to(session, display, session.index + 1)


def navigate(tab: ClozeTab, res: ClozeResources, session: ClozeSession, display: str, label: str) -> NavView:
    """The navigator's label "7 · answered", or a number typed into it -> question 7."""
    words = str(label or "").split()
    if not session.loaded or not words:
        return go_to(session, display, session.index)
    if not words[0].isdigit() or not 1 <= int(words[0]) <= session.total:
        raise UserError(f"Type a question number from 1 to {session.total} into the navigator "
                        f"(it said {str(label)[:20]!r}).")
    return go_to(session, display, int(words[0]) - 1)


def redisplay(tab: ClozeTab, res: ClozeResources, session: ClozeSession, display: str) -> NavView:
    return go_to(session, display, session.index, pin=False)


def _save_answer(session: ClozeSession, letter: str, display: str, flow: str, blind: bool) -> AnswerView:
    """Append the answer durably (fsynced before this returns), then show the next unanswered one."""
    if not session.file and session.human and session.loaded:
        # a question opened from a link (a presenter's, the configuration hidden): the first answer
        # starts a playthrough under a made-up id, on the question shown
        session = replace(session, annotator=anonymous_id(), session_id=new_session_id())
        session = replace(session, file=str(annotator_file(practice_dir(session.data_dir), session.annotator)))
    if not session.file:
        raise UserError("Press Start / resume first.")
    _, qs = questions_for(session)
    questions = qs.questions
    shown_at = session.shown_at if session.shown_at is not None else time.time()
    # once a player answered blind, the playthrough stays blind (unticking never reveals answers)
    blind = playthrough_blind(read_jsonl(session.file), blind)
    rec = record_answer(session.file, questions[session.index], task_index=session.index, answer=letter,
                        annotator=session.annotator, session=session.session_id, set_name=qs.name,
                        order_seed=session.seed, display_mode=display, answer_flow=flow,
                        elapsed_sec=time.time() - shown_at, blind=bool(blind),
                        data_revision=datasource.data_revision(session.root))
    feedback = answer_feedback(session.index + 1, rec, blind=blind)
    progress = load_progress(session.file, questions)
    if not blind:
        feedback += _runs_reveal(session, questions[session.index], latest_records(read_jsonl(session.file)))
    if progress.next_index is not None:
        later = [i for i in range(session.index + 1, len(questions))
                 if (questions[i].stem, questions[i].dim) not in progress.answered]
        session = replace(session, index=later[0] if later else progress.next_index)
    else:
        feedback += f" All {len(questions)} questions answered - thank you."
    session, view = render(replace(session, pinned=False), display)
    return AnswerView(session=session, question=view, feedback=feedback)


RUNS_REVEAL_WAIT_S = 3.0   # an answer given while the runs are still read waits this long for them


def _runs_reveal(session: ClozeSession, q: Question, answered: dict) -> str:
    """After a practice answer (never a blind one): what the runs chose on that question, on the
    letters the player saw, and the running score placed among the runs on the same questions
    (components/cloze/reveal.py); '' without runs."""
    loader = loader_for(session.data_dir, session.runs)
    loaded = loader.result() or loader.wait(RUNS_REVEAL_WAIT_S)
    if loaded is None:
        return " (The runs' answers are still being read.)"
    table = loaded.table
    if table is None:   # the runs folders could not be listed: nothing to place the answer among
        return ""
    chose = reveal.runs_chose(table.question(q.stem, PAPER_KEYS.get(q.dim, q.dim), q.option_map), q.option_map)
    placed = reveal.standing(table, answered)
    return (f" {chose}" if chose else "") + (f" **Score** {placed}" if placed else "")


def choose(tab: ClozeTab, res: ClozeResources, session: ClozeSession, letter: str, display: str, flow: str,
           blind: bool) -> AnswerView:
    """A letter button: answers at once, or (select then submit) only selects."""
    if flow == "immediate":
        return _save_answer(session, letter, display, flow, blind)
    return AnswerView(session=replace(session, selected=letter), feedback=f"Selected {letter}; press Submit.")


def submit(tab: ClozeTab, res: ClozeResources, session: ClozeSession, display: str, flow: str,
           blind: bool) -> AnswerView:
    if not session.selected:
        raise UserError("Select A, B, C or D first.")
    return _save_answer(session, session.selected, display, flow, blind)


def export(res: ClozeResources, session: ClozeSession, fmt: str) -> ExportView:
    """The session's latest answers as a JSON or CSV file to download (removed with the page)."""
    if not session.file:
        raise UserError("Start a playthrough first; its answers are exported.")
    text = export_records(read_jsonl(session.file), fmt)
    folder = Path(tempfile.mkdtemp(prefix="cloze-export-"))
    res.folders.append(folder)
    out = folder / f"{session.annotator}.{fmt}"
    atomic_write_text(out, text)
    return ExportView(export_file=gr.update(value=str(out), visible=True))


def export_json(tab: ClozeTab, res: ClozeResources, session: ClozeSession) -> ExportView:
    return export(res, session, "json")


def export_csv(tab: ClozeTab, res: ClozeResources, session: ClozeSession) -> ExportView:
    return export(res, session, "csv")


def runs_shut(session: ClozeSession, blind: bool) -> bool:
    """A blind practice playthrough (the box ticked, or any answer of the player's file given
    blind) keeps every runs view shut, "Runs across questions" included: its counts and its links
    into Model mode would name the true middle."""
    if not session.human:
        return False
    return playthrough_blind(read_jsonl(session.file) if session.file else [], blind)


def clock_timer(tab: ClozeTab, res: ClozeResources, session: ClozeSession) -> TimerView:
    """The practice clock ticks while a practice playthrough is started (Start / resume)."""
    return TimerView(timer=gr.Timer(active=session.human and session.loaded))
