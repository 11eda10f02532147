"""The painted-body panel: the body painted for the frame shown (3D view, legend, regions line,
the runs' heat), the camera facing the hit, the two models' painting choice, and the rotating
view (the turntable, drawn by render.py and kept on disk)."""
from __future__ import annotations

import threading
from typing import Any
from collections.abc import Callable, Iterator

import gradio as gr

from components.common import outcome
from components.common.ui import UNCHANGED
from components.impact import pair_view, painting, render, runs_view, view
from components.impact.body import load_body
from components.impact.data import ImpactItem
from components.impact.render import RenderUnavailable
from components.impact.runs import FrameRuns
from components.impact.ui.body_view import body_value, shown_key
from components.impact.ui.handlers import runs_panel
from components.impact.ui.session import ImpactResources, ImpactSession, ImpactTab
from components.impact.ui.views import CameraView, FrameView, PaintView, TurntableView

MANNEQUIN_NOTE = " Vertex-level SMPL-X annotations are shown as their regions on the mannequin."
RENDER_LABEL = "Render turntable"


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
        painted = painting.paint_frame(body, item, frame, answer["regions"] if answer is not None else None)
        line = view.regions_line(painted.pred, painted.truth, painted.f1)
    alone = answer is not None and second is None  # compared: each side's problem is said beside the body
    if alone and answer.get("error") and not_reached(answer["error"]):
        line += f"  \n_{outcome.not_reached(not_reached(answer['error']))}_"
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
    cached = render.turntable_path(painted)
    if cached.exists():  # rendered once per painted state, then reused
        turn_value, turn_msg = str(cached), ""
    elif turntable:
        try:
            turn_value, turn_msg = str(render.turntable_for(body, painted, on_frame=on_frame)), ""
        except RenderUnavailable as exc:
            turn_value, turn_msg = None, f"Rotating view unavailable: {exc}"
    note = body.note + (MANNEQUIN_NOTE if body.kind != "smplx"
                        and "painted as their regions" not in body.note else "")
    # a painting the page shows already is left alone (UNCHANGED), so the camera the visitor turned stays
    body3d = UNCHANGED if shown_key(shown) == painted.key else \
        body_value(body, painted.key, painted.colors, painted.camera, cached.parent)   # render.render_dir()
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
        painted = painting.paint_frame(body, item, frame, b if paint == "second" else a)
    truth = item.frames.get(frame)
    line = pair_view.regions_pair_line(first, second, list(truth.regions) if truth else None,
                                       pair_view.frame_f1(body, item, frame, a),
                                       pair_view.frame_f1(body, item, frame, b))
    return painted, line


def not_reached(error: str | None) -> str:
    """A recorded error that is a transport failure (components/common/outcome.py), without the
    "backend error: " the region answers put before it; '' for any other error."""
    text = str(error or "").removeprefix("backend error: ")
    return text if outcome.is_not_reached(text) and " failed" in text else ""


def reset_view(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str, frame: Any) -> CameraView:
    """The camera facing the hit region of the frame shown, sent even when unchanged (`nudge`
    moves it by a hair, so the page applies it after the user turned the body)."""
    value = frame_view(tab, session, qid, view.shown_frame(tab.item(qid), frame)).body3d
    alpha, beta, radius = value["camera"]
    return CameraView(body3d={**value, "camera": [alpha, beta, round(radius + 0.001 * (res.next_reset() % 2), 3)]})


def set_paint(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str, frame: Any,
              paint: str, shown: dict | None = None) -> PaintView:
    """The painting of a frame both compared models answered: their difference, or one of them
    against the truth."""
    session = session.with_paint(paint)
    return PaintView(session=session, body=frame_view(tab, session, qid, view.shown_frame(tab.item(qid), frame),
                                                      shown=shown))


def set_runs_heat(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str, frame: Any,
                  on: bool, shown: dict | None = None) -> PaintView:
    """The runs panel's toggle: the body painted with how many runs named each region at the
    frame shown (k of N runs, the annotated regions striped green), or this session's painting again."""
    session = session.with_runs_heat(on)
    return PaintView(session=session, body=frame_view(tab, session, qid, view.shown_frame(tab.item(qid), frame),
                                                      shown=shown))


def render_turntable(tab: ImpactTab, res: ImpactResources, session: ImpactSession, qid: str,
                     frame: Any) -> Iterator[TurntableView]:
    """The rotating view of the frame shown. Drawing one takes seconds (36 frames, then the
    encoding), so the button itself counts the frames drawn while it runs (where the visitor
    looks: they just pressed it), and is given back its label when the view is there or failed."""
    number = view.checked_frame(tab.item(qid), frame)
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
        label = (f"Rendering: {now} of {render.TURNTABLE_FRAMES} frames" if now < render.TURNTABLE_FRAMES
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
