"""The Model panel: a chosen backend (or the edge baseline) answers the question on screen or the
whole set, scored like the released benchmark; and the order sensitivity of the paper's Table 4."""
from __future__ import annotations

import os
import re
import uuid
from dataclasses import replace
from pathlib import Path

import gradio as gr

from backends.pair import partner_id
from components.cloze.spec import SPEC
from components.cloze import view
from components.cloze.data import ClozeDataset
from components.cloze.metrics import PAPER_KEYS, score_results
from components.cloze.pairs import answer_pair
from components.cloze.questions import Question
from components.cloze.pipeline import answer_safely, run_orders, run_set
from components.cloze.solvers import ClozeSolvers, SolverSettings, solvers_for
from components.cloze.ui.handlers.question import PAPER_FRAMES, index_of, questions_for, render, shown_question, \
    writable_dir
from components.cloze.ui.views import AnswerBoxes, OrderView, RunOneView, RunSetView
from components.cloze.ui.session import ClozeResources, MODEL, ClozeSession, ClozeTab
from components.base.admin import admin_mode
from components.common.fields import whole
from components.base.errors import MediaError
from components.common import outcome

from components.settings.session import SessionSettings, backend_for, compare_backend_for, own_backend_for

CLIPS_PER_QUESTION = 6


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "run"


def runs_dir(data_dir: str | Path) -> Path:
    """The shared runs folder (what every visitor's leaderboard lists)."""
    env = os.environ.get("APP_CLOZE_RUNS_DIR")
    return writable_dir(Path(env) if env else Path(data_dir) / SPEC.data / "runs", "cloze-runs")


def visitor_folder(res: ClozeResources, parent: Path) -> Path:
    """A new folder of this visitor's under `parent`, removed when the page closes."""
    folder = parent / uuid.uuid4().hex[:12]
    folder.mkdir(parents=True, exist_ok=True)
    res.folders.append(folder)
    return folder


def visitor_runs_dir(res: ClozeResources, data_dir: str | Path) -> Path:
    """Where a visitor's "Run the set" writes: the shared folder with APP_ADMIN=1, else a folder
    of this page's own (listed only on its leaderboard, removed when the page closes)."""
    if admin_mode():
        return runs_dir(data_dir)
    own = [f for f in res.folders if f.parent.name == "visitors"]
    return own[0] if own else visitor_folder(res, runs_dir(data_dir) / "visitors")


def frame_cap(settings: dict | SessionSettings | None) -> int:
    """Frames per clip: the paper's 16, lowered so that the six clips of a question (BEGINNING,
    END, four candidates) fit the session's max frames per request."""
    chosen = settings if isinstance(settings, SessionSettings) else SessionSettings.from_state(settings)
    try:
        per_clip = int(chosen.max_frames or CLIPS_PER_QUESTION * PAPER_FRAMES) // CLIPS_PER_QUESTION
        return max(1, min(PAPER_FRAMES, per_clip))
    except (TypeError, ValueError):
        return PAPER_FRAMES


def solver_settings(settings, edge: str | None, strict: bool = False, cancel=None,
                    prompt_style: str | None = None) -> SolverSettings:
    return SolverSettings(max_frames=frame_cap(settings), edge_variant=edge or "edge1",
                          strict=bool(strict), cancel=cancel, prompt_style=prompt_style or "api")


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def run_one(tab: ClozeTab, res: ClozeResources, session: ClozeSession, settings: dict, root: str, set_name: str,
            dims: str, seed: float, edge: str, strict: bool, prompt_style: str, display: str) -> RunOneView:
    """Answer the question on screen with the session's backend (or the edge baseline), found
    in the evaluation order whichever order showed it (a practice question, a link's); the
    question is shown with its answer, the set's first loaded when nothing was on screen yet."""
    shown = shown_question(session)
    session = session.with_inputs(MODEL, root, set_name, dims, seed)
    ds, qs = questions_for(session)
    index = index_of(qs.questions, shown) or 0
    session, question = render(replace(session, index=index, file="", annotator=""), display)
    q = qs.questions[session.index]
    backend = backend_for(settings)
    solvers = solvers_for(backend, solver_settings(settings, edge, strict, prompt_style=prompt_style))
    rec, beside = _answered(solvers, ds, q, compared=bool(partner_id(backend)))
    question = replace(question, answer=answer_boxes(rec, q.expected, beside))
    return RunOneView(session=session, question=question, summary=answer_summary(rec, q))


def answer_summary(rec: dict, q: Question) -> str:
    """Run this question's summary line: the stem, the paper's dimension (S, A, P: folder C is
    P), the expected and the picked letter, the outcome in a word (the headline says why)."""
    not_reached = outcome.is_not_reached(rec.get("error"), answered=bool(rec.get("answer")),
                                         truncated=bool(rec.get("truncated")))
    word = ("correct" if rec.get("correct") else "wrong") if rec.get("answer") else \
        "truncated" if rec.get("truncated") else outcome.NOT_REACHED if not_reached else \
        "media error" if str(rec.get("error") or "").startswith("media") else "unparsed"
    return (f"{q.stem} · dimension {PAPER_KEYS.get(q.dim, q.dim)} · expected {q.expected} · picked "
            f"{rec.get('answer') or '—'} · {word} · frames per clip {rec.get('used_num_frames', '-')} · "
            f"attempts {rec.get('attempts', '-')}")


def answer_boxes(rec: dict, expected: str, beside: str) -> AnswerBoxes:
    """The Model panel's boxes and the headline for one record: a call that was not reached says
    so once (the headline), with no '(unparsed)' letter and no error repeated as a reason."""
    not_reached = outcome.is_not_reached(rec.get("error"), answered=bool(rec.get("answer")),
                                         truncated=bool(rec.get("truncated")))
    parsed = rec.get("answer") or ("" if not_reached else "(truncated)" if rec.get("truncated") else "(unparsed)")
    why = rec.get("reason") or ("" if not_reached else rec.get("error") or "")
    return AnswerBoxes(raw=rec.get("raw", ""), parsed=parsed, reason=why, option_map=rec["option_map"],
                       beside=beside, headline=view.headline_html(rec, expected))


def _answered(solvers: ClozeSolvers, ds: ClozeDataset, q: Question, *, compared: bool) -> tuple[dict, str]:
    """The session model's record for `q` and what goes beside the answer boxes: both models'
    answers side by side when the session compares two, else the model's reasoning."""
    if compared:
        try:
            pair = answer_pair(solvers, ds.instance(q.stem), q)
        except MediaError:
            pass  # a broken clip: recorded as an error below, for either model
        else:
            return {"key": q.key, "stem": q.stem, "dim": q.dim, **pair.first}, view.pair_html(pair)
    rec = answer_safely(solvers.solver, ds, q)
    return rec, view.answer_html(rec)


def _not_reached(count: int, failures: list[str] | None) -> str:
    """The questions no reply came back for (a transport failure: not saved, asked again by the
    next run), counted apart from the unparsed replies, with the last reason heard."""
    if not count:
        return ""
    why = f": {outcome.reason(failures[-1])}" if failures else ""
    return f" · {outcome.NOT_REACHED} {count}{why} (no reply; run again to ask them)"


def heard_failures(solver: object) -> list[str]:
    """The transport failures a model solver is told of between its attempts (its `on_attempt`),
    collected for the set summary; [] for a solver without attempts (the edge baselines)."""
    heard: list[str] = []
    if getattr(solver, "on_attempt", False) is None:
        def on_attempt(_attempt: int, why: str) -> None:
            if outcome.is_not_reached(why):
                heard.append(why)
        solver.on_attempt = on_attempt   # type: ignore[attr-defined]
    return heard


def _run_summary(name: str, set_name: str, res: dict, failures: list[str] | None = None) -> str:
    m = score_results(res["results"])
    counts = res["counts"]
    return (f"**{name}** on {set_name}: S {_percent(m['S'])} · A {_percent(m['A'])} · P {_percent(m['P'])} · "
            f"acc {_percent(m['acc'])} · 3/3 {_percent(m['3/3'])} · parse rate {_percent(m['parse_rate'])} · "
            + _invalid(m)
            + _missing(m)
            + f"{counts['done']} new, {counts['skipped']} resumed"
            + _not_reached(counts.get("failed", 0), failures)
            + (f" · **stopped**: {counts.get('stopped', 0)} not asked; run again to go on"
               if res.get("stopped") else ""))


def _invalid(m: dict) -> str:
    """The answers skipped as invalid, by kind ('' when none)."""
    kinds = {k: n for k, n in (m.get("invalid_kinds") or {}).items() if n}
    count = m.get("invalid_entries_skipped") or sum(kinds.values())
    if not count:
        return ""
    named = f" ({', '.join(f'{k} {n}' for k, n in kinds.items())})" if kinds else ""
    return f"invalid {count}{named} · "


def _missing(m: dict) -> str:
    """Dimensions a stem has no entry for (the released scores leave them out of the
    denominator, so they are said here; '' when none)."""
    missing = {k: n for k, n in (m.get("missing_entries") or {}).items() if n}
    if not missing:
        return ""
    return "missing entries " + ", ".join(f"{k} {n}" for k, n in missing.items()) + " (left out, as released) · "


def run_whole_set(tab: ClozeTab, res: ClozeResources, session: ClozeSession, settings: dict, root: str, set_name: str,
                  dims: str, seed: float, edge: str, strict: bool, prompt_style: str = "api", *,
                  progress=None) -> RunSetView:
    """Answer the whole set into this app's runs folder (resumable; Stop or closing the page ends
    it before the next question, and the page's folders go only after it ended). With "compare
    with", each model answers the set into a result file of its own (the same requests, one model
    after the other), so both rows reach the leaderboard."""
    session = session.with_inputs(MODEL, root, set_name, dims, seed)
    ds, qs = questions_for(session)
    compared = compare_backend_for(settings)
    backends = [own_backend_for(settings), compared] if compared is not None else [backend_for(settings)]
    summaries, files = [], []
    with res.working() as stop:
        res.fresh_stop()
        total = len(qs.questions) * len(backends)
        seen = [0]

        def tick_progress(_rec: dict) -> None:
            seen[0] += 1
            if progress is not None:
                progress((seen[0], total), desc="cloze questions")

        if progress is not None:
            progress((0, total), desc="cloze questions")
        for backend in backends:
            solvers = solvers_for(backend, solver_settings(settings, edge, strict, cancel=stop,
                                                           prompt_style=prompt_style))
            style = "" if (prompt_style or "api") == "api" else f"-{prompt_style}"
            name = safe_name(f"{solvers.name}-{qs.name}-seed{session.seed}{style}")
            out = visitor_runs_dir(res, session.data_dir) / f"{name}.json"
            failures = heard_failures(solvers.solver)
            result = run_set(solvers.solver, ds, qs.questions, out, progress=False, on_result=tick_progress,
                             stop=stop)
            result["stopped"] = stop.is_set()
            mark = f"{'①②'[len(files)]} " if compared is not None else ""
            summaries.append(mark + _run_summary(solvers.name, qs.name, result, failures))
            files.append(str(out))
            if stop.is_set():
                break
    return RunSetView(summary="  \n".join(summaries),
                      results_file=gr.update(value=files[0] if len(files) == 1 else files, visible=True))


def stop(tab: ClozeTab, res: ClozeResources, session: ClozeSession) -> None:
    res.ask_stop()


def order_sensitivity(tab: ClozeTab, res: ClozeResources, session: ClozeSession, settings: dict, root: str,
                      set_name: str, dims: str, seed: float, edge: str, k: float, limit: float,
                      prompt_style: str = "api", *, progress=None) -> OrderView:
    """The first `limit` questions under k candidate orders: FR, CFR, Range, Disp (Table 4)."""
    session = session.with_inputs(MODEL, root, set_name, dims, seed)
    ds, qs = questions_for(session)
    k = whole(k, "Orders k", default=4, least=2, most=24)   # 4 candidates have 4! = 24 orders
    questions = qs.questions[:whole(limit, "Questions", default=6, least=1)]
    with res.working() as stop:
        res.fresh_stop()
        # the session's model alone (a compared model's answers would not be shown)
        solvers = solvers_for(own_backend_for(settings), solver_settings(settings, edge, cancel=stop,
                                                                         prompt_style=prompt_style))
        result = run_orders(solvers.solver, ds, questions, k,
                            on_step=(lambda i, t: progress((i, t), desc="orders")) if progress else None)
    m = result["metrics"]
    return OrderView(order_out=f"**{solvers.name}**, {m['questions']} questions × {m['orders']} orders: "
                     f"FR {m['FR']:.1f} · CFR {m['CFR']:.1f} · Range {m['Range']:.1f} · Disp. {m['Disp']:.2f} · "
                     f"accuracy per order {', '.join(f'{a:.1f}' for a in m['per_order_acc'])}")

