"""The frame panel: the frame slider and its box, the timeline under the player (a click seeks),
and the link to the clip and frame shown (Copy link)."""
from __future__ import annotations

from typing import Any

import gradio as gr

from components.impact import links, pair_view, timeline, view
from components.impact.data import ImpactItem
from components.impact.ui.handlers.body import frame_view
from components.impact.ui.session import ImpactResources, ImpactSession, ImpactTab
from components.impact.ui.views import AddressView, FrameMoveView, LinkView, SeekView


def timeline_for(item: ImpactItem, session: ImpactSession, frame: int | None) -> str:
    """The timeline at `frame`: the session model's moments and, compared, the second model's
    on a row of its own; under it the temporal call's reasoning (and the two models' answers)."""
    record = session.temporal.get(item.qid)
    windows = record["pred_relevant_windows"] if record else None
    second = session.temporal_second.get(item.qid) if record else None
    if second is None:
        return timeline.timeline_html(item, windows, frame, session.temporal_method) + \
            pair_view.temporal_beside(record, None)
    return timeline.timeline_html(item, windows, frame, record.get("method", session.temporal_method),
                                  second_windows=second["pred_relevant_windows"],
                                  second_method=second.get("method", ""), only_first=second.get("only_first", []),
                                  only_second=second.get("only_second", [])) + pair_view.temporal_beside(record, second)


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
    query = links.frame_link(item.qid, None if view.frame_problem(frame, item) else int(float(frame)))
    return LinkView(link=gr.update(value=query, visible=True))


def follow_address(tab: ImpactTab, res: ImpactResources, qid: Any, frame: Any) -> AddressView:
    """The address of the clip and frame shown, for the page's address bar (links.frame_link, the
    one place the link is written; no data is read: this runs on every frame step)."""
    return AddressView(address=links.frame_link(qid, frame))
