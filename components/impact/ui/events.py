"""The Impact tab's events: each component's event, wired to its handler with an explicit api_name."""
from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

import gradio as gr

from components.common.ui import TabContext, user_errors
from components.impact.ui import handlers, page
from components.impact.ui.handlers import ImpactData, View
from components.impact.ui.session import BodyViews, ImpactSession, StopEvents

if TYPE_CHECKING:
    from components.impact.ui.layout import ImpactComponents


def outputs(result: View) -> list:
    """A view's fields in order, nested views flattened: the event's outputs list."""
    values: list = []
    for f in fields(result):
        value = getattr(result, f.name)
        values.extend(outputs(value) if isinstance(value, View) else [value])
    return values


def wire(ctx: TabContext, data: ImpactData, stops: StopEvents, views: BodyViews,
          c: ImpactComponents) -> None:
    """Every event of the tab, each with the api_name gradio_client and the tests call.

    Events that read the frame box take its raw value (preprocess=False): a cleared or absurd box
    then reaches the handler, which says what to type, instead of gradio's own "Could not
    preprocess ..." error. Their other inputs are plain values (the Model3D's is a FileData dict)."""
    raw = {"preprocess": False}

    def gate(request: gr.Request | None):
        session_hash = getattr(request, "session_hash", None)
        return lambda glb: views.should_send(session_hash, glb)

    @user_errors
    def on_clip(qid: str, session: ImpactSession, shown: str | dict | None, request: gr.Request):
        return outputs(handlers.on_clip(data, session, qid, shown, gate=gate(request)))

    @user_errors
    def on_frame(qid: str, frame_no: Any, session: ImpactSession, shown: str | dict | None, request: gr.Request):
        return outputs(handlers.on_frame(data, session, qid, frame_no, shown, gate=gate(request)))

    @user_errors
    def on_load(session: ImpactSession, request: gr.Request):
        views.page_loaded(request.session_hash)
        return outputs(handlers.on_load(data, session, dict(request.query_params)))

    @user_errors
    def on_body_shown(qid: str, frame_no: Any, session: ImpactSession, request: gr.Request):
        return handlers.on_body_shown(data, session, qid, frame_no,
                                      lambda glb: views.view_shown(request.session_hash, glb))

    @user_errors
    def on_reset_view(qid: str, frame_no: Any, session: ImpactSession, request: gr.Request):
        return handlers.reset_view(data, session, qid, frame_no, views.next_reset(request.session_hash))

    on_render = user_errors(lambda qid, frame_no, session: outputs(
        handlers.render_turntable(data, session, qid, frame_no)))
    on_copy_link = user_errors(lambda qid, frame_no: handlers.copy_link(data, qid, frame_no))

    @user_errors
    def on_timeline_click(qid: str, session: ImpactSession, evt: gr.EventData):
        return outputs(handlers.on_timeline_click(data, qid, handlers.clicked_frame(evt)))

    @user_errors
    def on_run_temporal(qid: str, settings: dict, frame_no: Any, session: ImpactSession,
                        style: str, request: gr.Request, progress=gr.Progress()):
        return outputs(handlers.run_temporal(data, session, settings, qid, frame_no, style,
                                             cancel=stops.for_session(request.session_hash),
                                             progress=progress))

    @user_errors
    def on_run_spatial(qid: str, settings: dict, frame_no: Any, session: ImpactSession,
                       shown: str | dict | None, request: gr.Request, progress=gr.Progress()):
        return outputs(handlers.run_spatial(data, session, settings, qid, frame_no, shown=shown,
                                            cancel=stops.for_session(request.session_hash),
                                            progress=progress, gate=gate(request)))

    @user_errors
    def on_metrics(split_name: str, settings: dict, session: ImpactSession, style: str,
                   request: gr.Request, progress=gr.Progress()):
        return handlers.set_metrics(data.annotations, None if split_name == "all" else split_name,
                                    settings, session, progress, style=style,
                                    cancel=stops.for_session(request.session_hash))

    def release_session(request: gr.Request) -> None:
        stops.release(request.session_hash)  # the page closed: its running calls stop
        views.release(request.session_hash)

    # .input: only the user's choice; a deep link sets the dropdown without resetting the frame
    c.clip.input(on_clip, [c.clip, c.state, c.body3d], c.clip_outputs, api_name="on_clip")
    c.frame.change(on_frame, [c.clip, c.frame, c.state, c.body3d],
                   [c.video, c.timeline, *c.frame_outputs, c.status],
                   trigger_mode="always_last", show_progress="hidden", api_name="on_frame", **raw)
    c.hooks.focus(on_body_shown, [c.clip, c.frame, c.state], [c.body3d], show_progress="hidden",
                  api_name="on_body_shown", **raw)
    c.reset_view.click(on_reset_view, [c.clip, c.frame, c.state], [c.body3d], show_progress="hidden",
                       api_name="on_reset_view", **raw)
    c.timeline.click(on_timeline_click, [c.clip, c.state], [c.video, c.frame],
                     api_name="on_timeline_click")
    c.step_back.click(None, js=page.STEP_BACK_JS)
    c.step_on.click(None, js=page.STEP_ON_JS)
    c.copy_link.click(on_copy_link, [c.clip, c.frame], [c.link], api_name="on_copy_link", **raw).then(
        None, [c.link], [c.link], js=page.COPY_JS)
    c.run_temporal.click(on_run_temporal, [c.clip, ctx.settings, c.frame, c.state, c.prompt_style],
                         [c.state, c.timeline, c.status], api_name="on_run_temporal", **raw)
    c.run_spatial.click(on_run_spatial, [c.clip, ctx.settings, c.frame, c.state, c.body3d],
                        [c.state, *c.frame_outputs, c.status], api_name="on_run_spatial", **raw)
    c.render_button.click(on_render, [c.clip, c.frame, c.state], [c.turntable, c.turntable_msg],
                          api_name="on_render", **raw)
    c.metrics_button.click(on_metrics, [c.split, ctx.settings, c.state, c.prompt_style], [c.metrics],
                           api_name="on_metrics")
    if ctx.demo is not None:
        if data.first is not None:
            ctx.demo.load(on_load, [c.state], c.load_outputs, api_name="on_load_impact").then(
                None, js=page.READY_JS)
        ctx.demo.unload(release_session)
