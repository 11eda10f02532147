"""The model-runs panel: Run temporal (the moments of the clip), Run spatial (the regions of its
annotated frames), with one or two compared models, and Stop."""
from __future__ import annotations

from typing import Any
from collections.abc import Callable

import gradio as gr

from backends.pair import partner_id
from components.common import outcome
from components.common.ui import View
from components.impact import view
from components.impact.data import ImpactItem
from components.impact.pairs import region_pair, temporal_pair
from components.impact.pipeline import annotated_frames, check_stop, frame_images, select_regions
from components.impact.solvers import TemporalPrediction, single_method_note, solvers_for
from components.impact.ui.handlers.body import frame_view, not_reached
from components.impact.ui.handlers.frame import timeline_for
from components.impact.ui.session import ImpactResources, ImpactSession, ImpactTab
from components.impact.ui.views import SpatialView, TemporalView
from components.settings.session import SessionSettings, backend_for


def run_temporal(tab: ImpactTab, res: ImpactResources, session: ImpactSession, settings: dict | None,
                 qid: str, frame: float, style: str, *, progress: gr.Progress | None = None) -> TemporalView:
    cancel = res.fresh_stop()
    item = tab.item(qid)
    backend = backend_for(settings)
    solver = solvers_for(backend, SessionSettings.from_state(settings), style=style).temporal
    if progress is not None:
        progress(0.1, desc=f"{solver.method}: localizing")
    if partner_id(getattr(solver, "backend", None)):  # compared: one request, both models' moments
        pair = temporal_pair(solver, item, cancel)
        second = {**pair.second.to_record(), "only_first": pair.only_first, "only_second": pair.only_second}
        session = session.with_temporal(qid, pair.first.to_record(), solver.method, second, pair.second.method)
        status = f"① {temporal_status(pair.first)}  \n② {temporal_status(pair.second)}"
    else:
        pred = solver.localize(item, cancel=cancel)
        session = session.with_temporal(qid, pred.to_record(), solver.method)
        status = _with_note(temporal_status(pred), single_method_note(backend))
    cursor = None if view.frame_problem(frame, item) else int(float(frame))
    return TemporalView(session=session, timeline=timeline_for(item, session, cursor), status=status)


def run_spatial(tab: ImpactTab, res: ImpactResources, session: ImpactSession, settings: dict | None,
                qid: str, frame: Any, shown: dict | None = None, *,
                progress: gr.Progress | None = None) -> SpatialView:
    cancel = res.fresh_stop()
    item = tab.item(qid)
    frame = view.checked_frame(item, frame)
    backend = backend_for(settings)
    solver = solvers_for(backend, SessionSettings.from_state(settings)).regions
    frames = sorted({*(annotated_frames(item) or [frame]), frame})
    track = (lambda fs: progress.tqdm(fs, desc=f"{solver.name}: regions")) if progress is not None else None
    partner = partner_id(getattr(solver, "backend", None))
    if partner:  # compared: each frame's one request to both models
        firsts, seconds = paired_regions(solver, item, frames, cancel=cancel, track=track)
        session = session.with_spatial(qid, firsts, solver.name, seconds, partner)
        differ = sum(1 for f in firsts if sorted(firsts[f]["regions"]) != sorted(seconds[f]["regions"]))
        status = (f"Spatial: ① **{solver.name}** and ② **{partner}** on {len(frames)} frame(s) of {qid}; "
                  f"they differ on {differ}.")
    else:
        answers = select_regions(solver, item, frames, cancel=cancel, track=track)
        session = session.with_spatial(qid, {str(f): a.as_dict() for f, a in answers.items()}, solver.name)
        status = _with_note(f"Spatial: **{solver.name}** on {len(frames)} frame(s) of {qid}.",
                            single_method_note(backend))
    return SpatialView(session=session, body=frame_view(tab, session, qid, frame, shown=shown), status=status,
                       paint=gr.update(visible=bool(session.spatial_second), value=session.paint))


def _with_note(status: str, note: str) -> str:
    return f"{status}  \n{note}" if note else status


def paired_regions(solver, item: ImpactItem, frames: list[int], *, cancel=None,
                   track: Callable | None = None) -> tuple[dict[str, dict], dict[str, dict]]:
    """Both compared models' region answers for each frame ({frame: answer dict} each), from one
    request per frame sent to both (components/impact/pairs.region_pair)."""
    images = frame_images(item, frames) if frames and solver.needs_image else {}
    firsts, seconds = {}, {}
    for f in (track(frames) if track is not None else frames):
        check_stop(cancel)
        pair = region_pair(solver, images.get(f), item.query, ref=f"{item.qid}#{f}", cancel=cancel)
        firsts[str(f)], seconds[str(f)] = pair.first.as_dict(), pair.second.as_dict()
    return firsts, seconds


def stop(tab: ImpactTab, res: ImpactResources, session: ImpactSession) -> View:
    """Stop: the running model call or set run ends before its next step (nothing else changes)."""
    res.ask_stop()
    return View()


def temporal_status(pred: TemporalPrediction) -> str:
    """One readable line about a temporal answer (method, status, raw text)."""
    head = f"Temporal: **{pred.method}**"
    if pred.prompt_style:
        head += f" · {pred.num_frames_sent} frames sent"
    text = {"ok": f"{len(pred.windows)} interval(s)", "none": "the model answered that no such impact "
            "occurs (empty prediction, counted)", "unparsed": f"no interval could be read after "
            f"{len(pred.attempts)} attempt(s); kept raw, counted as unparsed",
            "error": outcome.not_reached(not_reached(pred.error)) if not_reached(pred.error)
            else f"backend error: {pred.error}"}.get(pred.status, pred.status)
    raw = f"  \nRaw answer: `{pred.raw[:300]}`" if pred.raw else ""
    notes = f"  \nHow it was read: {'; '.join(pred.notes[:3])}" if pred.notes else ""
    return f"{head} · {text}{raw}{notes}"
