"""The Impact tab's handlers: parse inputs, call the logic modules, return a typed view.

Each handler takes the tab's loaded data, this visitor's `ImpactResources`, its `ImpactSession`
and the inputs, and returns a view (ui/views.py) naming only the components it changes (the rest
are left as they are; its `message` goes to the tab's message line). They raise UserError for
what the user can fix.
"""
from __future__ import annotations

import threading
from typing import Any
from collections.abc import Callable, Iterator

import gradio as gr

from backends.pair import partner_id
from components import datasource
from components.base.errors import UserError
from components.common import outcome
from components.common.ui import UNCHANGED, View, poll, preparing_note
from components.impact import links, pair_view, runs_view, view
from components.impact.data import ImpactItem
from components.impact.body import load_body
from components.impact.pairs import region_pair, temporal_pair
from components.impact.pipeline import annotated_frames, check_stop, evaluate_spatial, frame_images, select_regions
from components.impact.render import RenderUnavailable
from components.impact.runs import FrameRuns
from components.impact.solvers import single_method_note, solvers_for
from components.impact.metrics.temporal import evaluate_temporal, no_prediction_note
from components.impact.solvers import TemporalPrediction
from components.impact.ui.body_view import body_value, shown_key
from components.impact.ui.handlers import runs_panel
from components.impact.ui.session import ImpactResources, ImpactSession, ImpactTab
from components.impact.ui.views import CameraView, ClipView, FrameMoveView, FrameView, LinkView, LoadView, \
    MetricsView, PaintView, SeekView, SpatialView, TemporalView, TurntableView
from components.settings.session import SessionSettings, backend_for

MANNEQUIN_NOTE = " Vertex-level SMPL-X annotations are shown as their regions on the mannequin."


# -- handlers ------------------------------------------------------------------------------------

def frame_view(tab: ImpactTab, session: ImpactSession, qid: str, frame: int, *,
               shown: dict | None = None, turntable: bool = False,
               on_frame: Callable[[int, int], None] | None = None) -> FrameView:
    """The painted body, its legend, the regions line and the rotating view for one frame.

    `shown` is the 3D view's value as the page holds it: a painting it shows already is not sent
    again, so the camera the visitor turned stays.
    """
    item = tab.item(qid)
    frame = int(max(1, min(item.num_frames, int(frame or 1))))
    body = load_body()
    answer = session.answer_at(qid, frame)
    second = session.second_answer_at(qid, frame) if answer is not None else None
    if second is not None:
        painted, line = _paired_painting(body, item, frame, answer, second, session.paint)
    else:
        painted = view.paint_frame(body, item, frame, answer["regions"] if answer is not None else None)
        line = view.regions_line(painted.pred, painted.truth, painted.f1)
    alone = answer is not None and second is None  # compared: each side's problem is said beside the body
    if alone and answer.get("error") and _not_reached(answer["error"]):
        line += f"  \n_{outcome.not_reached(_not_reached(answer['error']))}_"
    elif alone and answer.get("error"):
        line += f"  \n_Model answer not usable ({answer['error']}); raw: `{answer.get('raw', '')[:200]}`_"
    elif alone and answer.get("note"):
        line += f"  \n_{answer['note']}_"
    if session.runs_heat:   # the runs' heat replaces the painting; the line keeps this session's answer
        heat = runs_panel.frame_runs(tab, qid, frame)
        if isinstance(heat, FrameRuns):
            painted = runs_view.paint_runs_heat(body, item, heat)
            line += "  \n" + runs_view.heat_line(heat)
        elif heat == "loading":
            line += "  \n_The run files are still being read: turn the runs' painting off and on in a moment._"
        else:
            line += f"  \n_No run answered frame {frame}: the body shows this session's painting._"
    turn_value, turn_msg = None, "Press **Render turntable** for a rotating view of this frame."
    cached = view.turntable_path(painted)
    if cached.exists():  # rendered once per painted state, then reused
        turn_value, turn_msg = str(cached), ""
    elif turntable:
        try:
            turn_value, turn_msg = str(view.turntable_for(body, painted, on_frame=on_frame)), ""
        except RenderUnavailable as exc:
            turn_value, turn_msg = None, f"Rotating view unavailable: {exc}"
    note = body.note + (MANNEQUIN_NOTE if body.kind != "smplx"
                        and "painted as their regions" not in body.note else "")
    # a painting the page shows already is left alone (UNCHANGED), so the camera the visitor turned stays
    body3d = UNCHANGED if shown_key(shown) == painted.key else \
        body_value(body, painted.key, painted.colors, painted.camera, view.render_dir())
    return FrameView(body3d=body3d, legend=view.legend_html(painted.legend), regions=line, turntable=turn_value,
                     turntable_msg=turn_msg, body_note=f"_{note}_", beside=pair_view.region_beside(answer, second))


def _paired_painting(body, item: ImpactItem, frame: int, first: dict, second: dict, paint: str):
    """(painting, regions line) of a frame both compared models answered: their difference, or
    one of them against the truth (`paint`, ImpactSession.PAINTS)."""
    a, b = first.get("regions") or [], second.get("regions") or []
    if paint == "difference":
        painted = pair_view.paint_difference(body, item, frame, a, b,
                                             (str(first.get("source", "")), str(second.get("source", ""))))
    else:
        painted = view.paint_frame(body, item, frame, b if paint == "second" else a)
    truth = item.frames.get(frame)
    line = pair_view.regions_pair_line(first, second, list(truth.regions) if truth else None,
                                       pair_view.frame_f1(body, item, frame, a),
                                       pair_view.frame_f1(body, item, frame, b))
    return painted, line


def timeline_for(item: ImpactItem, session: ImpactSession, frame: int | None) -> str:
    """The timeline at `frame`: the session model's moments and, compared, the second model's
    on a row of its own; under it the temporal call's reasoning (and the two models' answers)."""
    record = session.temporal.get(item.qid)
    windows = record["pred_relevant_windows"] if record else None
    second = session.temporal_second.get(item.qid) if record else None
    if second is None:
        return view.timeline_html(item, windows, frame, session.temporal_method) + \
            pair_view.temporal_beside(record, None)
    return view.timeline_html(item, windows, frame, record.get("method", session.temporal_method),
                              second_windows=second["pred_relevant_windows"],
                              second_method=second.get("method", ""), only_first=second.get("only_first", []),
                              only_second=second.get("only_second", [])) + pair_view.temporal_beside(record, second)


def first_frame(item: ImpactItem) -> int:
    return item.moments[0][0] if item.moments else 1


def on_clip(tab: ImpactTab, res: ImpactResources, session: ImpactSession, typed: str,
            shown: dict | None = None) -> ClipView:
    """A clip chosen from the list, or typed into it: a qid, or words of its query."""
    qid = view.find_clip(tab.annotations, typed) if tab.annotations is not None else None
    if qid is None and typed:
        raise UserError(f"No clip matches “{view.md_text(str(typed))[:80]}”: type a qid (e.g. "
                        f"{tab.first.qid if tab.first else 'h0001'}) or words of a clip's query.")
    item = tab.item(qid)
    start = first_frame(item)
    return ClipView(clip=gr.Dropdown(choices=view.clip_choices(tab.annotations, qid), value=qid),
                    video=gr.Video(value=str(datasource.local(item.video)), playback_position=(start - 1) / item.fps),
                    frame=gr.Slider(minimum=1, maximum=item.num_frames, value=start),
                    timeline=timeline_for(item, session, start),
                    body=frame_view(tab, session, qid, start, shown=shown), status="")


def on_load(tab: ImpactTab, res: ImpactResources, session: ImpactSession, params: dict[str, str]) -> LoadView:
    """The page opened: the clip and frame a deep link names (`?tab=impact&clip=&frame=`), else
    the first clip at its first moment, with one line about a link value that was not understood."""
    note = preparing_note("impact")
    if note is not None:
        return LoadView(poll=poll(True), message=note)
    if tab.first is None:
        return LoadView(poll=poll(False), message=f"⚠ {tab.load_error}")
    qid, frame, link_note = links.read_link(params, tab.annotations.items if tab.annotations else [])
    item = tab.item(qid or (tab.first.qid if tab.first else None))
    frame = frame or first_frame(item)
    return LoadView(clip=gr.Dropdown(choices=view.clip_choices(tab.annotations, item.qid), value=item.qid),
                    video=gr.Video(value=str(datasource.local(item.video)), playback_position=(frame - 1) / item.fps),
                    frame=gr.Slider(minimum=1, maximum=item.num_frames, value=frame),
                    timeline=timeline_for(item, session, frame), body=frame_view(tab, session, item.qid, frame),
                    status="", split=gr.Dropdown(choices=["all", *tab.splits()], value="all"), poll=poll(False),
                    message=f"⚠ {link_note}" if link_note else "")


def reset_view(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str, frame: Any) -> CameraView:
    """The camera facing the hit region of the frame shown, sent even when unchanged (`nudge`
    moves it by a hair, so the page applies it after the user turned the body)."""
    item = tab.item(qid)
    number = first_frame(item) if view.frame_problem(frame, item) else int(float(frame))
    value = frame_view(tab, session, qid, number).body3d
    alpha, beta, radius = value["camera"]
    return CameraView(body3d={**value, "camera": [alpha, beta, round(radius + 0.001 * (res.next_reset() % 2), 3)]})


def on_frame(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str, frame: Any,
             shown: dict | None = None) -> FrameMoveView:
    """A new frame from the slider or its box. A box left empty, or holding no frame of this
    clip, changes nothing but the message line, which says what to type; the next good frame
    clears that line. The status line (the last run's summary) stays."""
    item = tab.item(qid)
    problem = view.frame_problem(frame, item)
    if problem:
        res.frame_problem = True
        return FrameMoveView(message=f"⚠ {problem} The view stays at the last frame shown.")
    number = int(float(frame))
    # otherwise the message line is left as it is: the page moves the frame itself after a link
    # opened it, and the link's note stays
    message, res.frame_problem = ("" if res.frame_problem else None), False
    return FrameMoveView(video=gr.Video(playback_position=(number - 1) / item.fps),
                         timeline=timeline_for(item, session, number),
                         body=frame_view(tab, session, qid, number, shown=shown), message=message)


def checked_frame(item: ImpactItem, frame: Any) -> int:
    """The frame box's value as a frame of `item`; a UserError saying what to type otherwise."""
    problem = view.frame_problem(frame, item)
    if problem:
        raise UserError(problem)
    return int(float(frame))


def clicked_frame(payload: dict | None) -> int | None:
    """The frame a timeline click sent from the browser ({frame}), if any."""
    payload = payload or {}
    return int(payload["frame"]) if payload.get("frame") else None


def on_timeline_click(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str,
                      payload: dict | None) -> SeekView:
    frame = clicked_frame(payload)
    if not frame:
        return SeekView()
    item = tab.item(qid)
    frame = int(max(1, min(item.num_frames, frame)))
    return SeekView(video=gr.Video(playback_position=(frame - 1) / item.fps), frame=gr.Slider(value=frame))


def copy_link(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str, frame: Any) -> LinkView:
    """The query string of a link to the clip and frame shown (the page adds its own address);
    a frame box that holds no frame of the clip is left out of the link."""
    item = tab.item(qid)
    query = links.view_link(tab=links.TAB, clip=item.qid,
                           frame=None if view.frame_problem(frame, item) else int(float(frame)))
    return LinkView(link=gr.update(value=query, visible=True))


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
    frame = checked_frame(item, frame)
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


def set_paint(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str, frame: Any,
              paint: str, shown: dict | None = None) -> PaintView:
    """The painting of a frame both compared models answered: their difference, or one of them
    against the truth."""
    session = session.with_paint(paint)
    item = tab.item(qid)
    number = first_frame(item) if view.frame_problem(frame, item) else int(float(frame))
    return PaintView(session=session, body=frame_view(tab, session, qid, number, shown=shown))


def set_runs_heat(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str, frame: Any,
                  on: bool, shown: dict | None = None) -> PaintView:
    """The runs panel's toggle: the body painted with how many runs named each region at the
    frame shown (k of N runs, the annotated regions striped green), or this session's painting again."""
    session = session.with_runs_heat(on)
    item = tab.item(qid)
    number = first_frame(item) if view.frame_problem(frame, item) else int(float(frame))
    return PaintView(session=session, body=frame_view(tab, session, qid, number, shown=shown))


RENDER_LABEL = "Render turntable"


def render_turntable(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str,
                     frame: Any) -> Iterator[TurntableView]:
    """The rotating view of the frame shown. Drawing one takes seconds (36 frames, then the
    encoding), so the button itself counts the frames drawn while it runs (where the visitor
    looks: they just pressed it), and is given back its label when the view is there or failed."""
    number = checked_frame(tab.item(qid), frame)
    drawn = [0]
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["view"] = frame_view(tab, session, qid, number, turntable=True,
                                        on_frame=lambda done, _total: drawn.__setitem__(0, done))
        except BaseException as exc:  # noqa: BLE001 - raised again in the event below
            result["error"] = exc
    worker = threading.Thread(target=work, name="impact-turntable", daemon=True)
    worker.start()
    said = None
    while worker.is_alive():
        worker.join(0.2)
        now = drawn[0]
        label = (f"Rendering: {now} of {view.TURNTABLE_FRAMES} frames" if now < view.TURNTABLE_FRAMES
                 else "Rendering: encoding the video")
        if label != said and worker.is_alive():
            said = label
            yield TurntableView(render_button=gr.update(value=label, interactive=False))
    if "error" in result:
        yield TurntableView(render_button=gr.update(value=RENDER_LABEL, interactive=True))
        raise result["error"]
    body = result["view"]
    yield TurntableView(turntable=body.turntable, turntable_msg=body.turntable_msg,
                        render_button=gr.update(value=RENDER_LABEL, interactive=True))


def stop(tab: ImpactTab, res: ImpactResources, session: ImpactSession) -> View:
    """Stop: the running model call or set run ends before its next step (nothing else changes)."""
    res.ask_stop()
    return View()


def _not_reached(error: str | None) -> str:
    """A recorded error that is a transport failure (components/common/outcome.py), without the
    "backend error: " the region answers put before it; '' for any other error."""
    text = str(error or "").removeprefix("backend error: ")
    return text if outcome.is_not_reached(text) and " failed" in text else ""


def temporal_status(pred: TemporalPrediction) -> str:
    """One readable line about a temporal answer (method, status, raw text)."""
    head = f"Temporal: **{pred.method}**"
    if pred.prompt_style:
        head += f" · {pred.num_frames_sent} frames sent"
    text = {"ok": f"{len(pred.windows)} interval(s)", "none": "the model answered that no such impact "
            "occurs (empty prediction, counted)", "unparsed": f"no interval could be read after "
            f"{len(pred.attempts)} attempt(s); kept raw, counted as unparsed",
            "error": outcome.not_reached(_not_reached(pred.error)) if _not_reached(pred.error)
            else f"backend error: {pred.error}"}.get(pred.status, pred.status)
    raw = f"  \nRaw answer: `{pred.raw[:300]}`" if pred.raw else ""
    notes = f"  \nHow it was read: {'; '.join(pred.notes[:3])}" if pred.notes else ""
    return f"{head} · {text}{raw}{notes}"


def set_metrics(tab: ImpactTab, res: ImpactResources, session: ImpactSession, split_name: str | None,
                settings: dict | None, style: str = "auto", *, progress: gr.Progress | None = None) -> MetricsView:
    """Run the session's model (or the baselines) over every clip of the set, then both tables
    (Stop, or closing the page, ends it before the next clip). With "compare with", both models
    answer the same requests and each table has a row (with its intervals) for each."""
    annotations, cancel = tab.annotations, res.fresh_stop()
    split_name = None if split_name in (None, "all") else split_name
    if annotations is None:
        raise UserError("No impact annotations are loaded.")
    items = annotations.split(split_name)
    solvers = solvers_for(backend_for(settings), SessionSettings.from_state(settings), style=style)
    partner = partner_id(getattr(solvers.temporal, "backend", None))
    preds: list[list[dict]] = [[], []]
    spatial: list[dict] = [{}, {}]
    for item in (progress.tqdm(items, desc="clips") if progress is not None else items):
        check_stop(cancel)
        frames = [f for f in annotated_frames(item) if f in item.frames]
        if partner:
            pair = temporal_pair(solvers.temporal, item, cancel)
            preds[0].append(pair.first.to_record())
            preds[1].append(pair.second.to_record())
            firsts, seconds = paired_regions(solvers.regions, item, frames, cancel=cancel)
            for frame in frames:
                spatial[0][(item.qid, frame)] = firsts[str(frame)]
                spatial[1][(item.qid, frame)] = seconds[str(frame)]
            continue
        preds[0].append(solvers.temporal.localize(item, cancel=cancel).to_record())
        for frame, answer in select_regions(solvers.regions, item, frames, cancel=cancel).items():
            spatial[0][(item.qid, frame)] = answer.as_dict()
    names = [solvers.temporal.method] + ([preds[1][0]["method"] if preds[1] else partner] if partner else [])
    gt = [i.gt_record() for i in items]
    temporal = [(name, evaluate_temporal(gt, p, fps=annotations.fps)) for name, p in zip(names, preds)]
    temporal_data = view.data_label(annotations, split_name, temporal[0][1]["num_queries"], "queries")
    parts = [f"**Temporal** — {name}; {len(items)} clip(s); {_temporal_counts(result)}" for name, result in temporal]
    parts += [view.temporal_table(temporal, data=temporal_data),
              "**By moment length and count** (mAP\\@0.3)",
              view.breakdown_table(temporal, data=temporal_data)]
    region_names = [solvers.regions.name] + ([partner] if partner else [])
    scored = [(name, evaluate_spatial(annotations, answers, split=split_name))
              for name, answers in zip(region_names, spatial) if answers]
    if scored:
        parts += [f"**Spatial** — {name}; unparsed or failed answers: {result['invalid']} of "
                  f"{result['num_frames']} frame(s) (scored as nothing predicted)" for name, result in scored]
        parts.append(view.spatial_table(scored, data=view.data_label(
            annotations, split_name, scored[0][1]["num_frames"], "frames")))
    return MetricsView(metrics="\n\n".join(parts))


def _temporal_counts(result: dict) -> str:
    """What a temporal score rests on beyond its row: answers not read, queries with no prediction
    (left out, as QV-M2 leaves them), queries without windows and the queries @3+tgt averages over."""
    left_out = (no_prediction_note(result) or "queries with no prediction: 0.").replace("*", "\\*")
    return (f"unparsed answers: {result['unparsed']}, failed calls: {result['errors']} (both no "
            f"prediction, never guessed); {left_out} Ground truth without windows: "
            f"{result.get('gt_without_windows', 0)}; queries with 3+ moments (@3+tgt): "
            f"{result.get('@3+tgt_queries', 0)}")