"""The Impact tab's components and event wiring (the handlers live in handlers.py)."""
from __future__ import annotations

from dataclasses import dataclass, fields

import gradio as gr

from components.common.ui import TabContext, user_errors
from components.impact import view
from components.impact.ui import handlers
from components.impact.ui.handlers import ImpactData, View
from components.impact.temporal_prompt import STYLE_ROWS, STYLES
from components.impact.ui.session import ImpactSession, StopEvents

INTRO = ("Find **when** a queried impact hits a person in a short clip (24 fps, frame-accurate "
         "moments) and **where** on the body, as in [HAPACT](https://arxiv.org/abs/2610.22895). "
         "Pick a clip, run the temporal and spatial localizers with the model chosen in the Model "
         "panel, then scrub the frame slider. With the **baseline** backend no model is used: "
         "the temporal method is a *motion-energy baseline* (frame differences) and the spatial "
         "one a *text-only baseline* (the body-part words of the query).")

# a click on a timeline block sends its first frame to Python (gr.EventData.frame)
SEEK_JS = """
element.addEventListener('click', (event) => {
  const el = event.target.closest('[data-frame]');
  if (el) { trigger('click', {frame: parseInt(el.dataset.frame)}); }
});
"""


def outputs(result: View) -> list:
    """A view's fields in order, nested views flattened: the event's outputs list."""
    values: list = []
    for f in fields(result):
        value = getattr(result, f.name)
        values.extend(outputs(value) if isinstance(value, View) else [value])
    return values


@dataclass
class ImpactComponents:
    """The tab's components that events read or write."""

    state: gr.State
    clip: gr.Dropdown
    run_temporal: gr.Button
    run_spatial: gr.Button
    prompt_style: gr.Dropdown
    video: gr.Video
    body3d: gr.Model3D
    turntable: gr.Video
    turntable_msg: gr.Markdown
    render_button: gr.Button
    timeline: gr.HTML
    frame: gr.Slider
    legend: gr.HTML
    regions: gr.Markdown
    status: gr.Markdown
    body_note: gr.Markdown
    split: gr.Dropdown
    metrics_button: gr.Button
    metrics: gr.Markdown

    @property
    def frame_outputs(self) -> list:  # FrameView's fields
        return [self.body3d, self.legend, self.regions, self.turntable, self.turntable_msg,
                self.body_note]

    @property
    def clip_outputs(self) -> list:  # ClipView's fields
        return [self.video, self.frame, self.timeline, *self.frame_outputs]


def build_tab(ctx: TabContext) -> None:
    data = handlers.load_data(ctx.data_dir)
    c = _layout(data)
    _wire(ctx, data, StopEvents(), c)


def _layout(data: ImpactData) -> ImpactComponents:
    first = data.first
    state = gr.State(ImpactSession())
    gr.Markdown(INTRO, elem_id="impact-intro")
    if data.load_error:
        gr.Markdown(f"**Note:** {data.load_error}", elem_id="impact-load-error")
    with gr.Row(equal_height=True):
        clip = gr.Dropdown(choices=view.clip_choices(data.annotations) if data.annotations else [],
                           value=first.qid if first else None, label="Clip (qid · query)",
                           elem_id="impact-clip", scale=4)
        run_temporal = gr.Button("Run temporal", variant="primary", elem_id="impact-run-temporal", scale=1)
        run_spatial = gr.Button("Run spatial", elem_id="impact-run-spatial", scale=1)
        prompt_style = gr.Dropdown(choices=[("auto (from the model name)", "auto")]
                                   + [(f"{STYLE_ROWS[s]} ({s})", s) for s in STYLES], value="auto",
                                   label="Prompt variant (Table 7)", elem_id="impact-prompt-style",
                                   info="the Table 7 row's prompt, verbatim, and its frame count "
                                        "(192; VTimeLLM 100, TRACE 128, Grounded-Video-LLM 96)",
                                   scale=1)
    with gr.Row():
        video = gr.Video(value=str(first.video) if first else None, label="Clip (24 fps)",
                         elem_id="impact-video", interactive=False)
        body3d = gr.Model3D(label="Body, interactive 3D (painted for this frame)",
                            elem_id="impact-body3d", clear_color=(0.97, 0.97, 0.98, 1.0),
                            camera_position=(90, 90, 3.4), height=420)
        with gr.Column():
            turntable = gr.Video(label="Body, rotating", elem_id="impact-turntable", autoplay=True,
                                 loop=True, interactive=False)
            turntable_msg = gr.Markdown(elem_id="impact-turntable-msg")
            render_button = gr.Button("Render turntable", size="sm", elem_id="impact-render-turntable")
    timeline = gr.HTML(view.timeline_html(first, None) if first else "", label="Timeline",
                       elem_id="impact-timeline", js_on_load=SEEK_JS)
    frame = gr.Slider(1, first.num_frames if first else 2, step=1,
                      value=(first.moments[0][0] if first and first.moments else 1),
                      label="Frame (1-based, 24 fps)", elem_id="impact-frame")
    legend = gr.HTML(elem_id="impact-legend")
    regions = gr.Markdown(elem_id="impact-regions")
    status = gr.Markdown(elem_id="impact-status")
    body_note = gr.Markdown(elem_id="impact-body-note")
    with gr.Accordion("Metrics for the set", open=False, elem_id="impact-metrics"):
        gr.Markdown("Runs the chosen model (or the baselines) over every clip of the set and scores "
                    "it with HAPACT's metrics; the paper's rows (HAPACT test split, 433 queries / "
                    "3,142 frames) are listed beneath for reference. Every row names its data: "
                    "rows on different data are not comparable. Unparsed answers are scored as "
                    "empty predictions and counted, never guessed.")
        with gr.Row():
            split = gr.Dropdown(choices=["all"] + data.splits(), value="all", label="Split",
                                elem_id="impact-split", scale=1)
            metrics_button = gr.Button("Compute metrics for the set", elem_id="impact-run-metrics", scale=2)
        metrics = gr.Markdown(elem_id="impact-metrics-table")
    return ImpactComponents(state, clip, run_temporal, run_spatial, prompt_style, video, body3d,
                            turntable, turntable_msg, render_button, timeline, frame, legend,
                            regions, status, body_note, split, metrics_button, metrics)


def _wire(ctx: TabContext, data: ImpactData, stops: StopEvents, c: ImpactComponents) -> None:
    """Every event of the tab, each with the api_name gradio_client and the tests call."""

    on_clip = user_errors(lambda qid, session, shown: outputs(
        handlers.on_clip(data, session, qid, shown)))
    on_frame = user_errors(lambda qid, frame_no, session, shown: outputs(
        handlers.on_frame(data, session, qid, frame_no, shown)))
    on_render = user_errors(lambda qid, frame_no, session: outputs(
        handlers.render_turntable(data, session, qid, frame_no)))

    @user_errors
    def on_timeline_click(qid: str, session: ImpactSession, evt: gr.EventData):
        return outputs(handlers.on_timeline_click(data, qid, handlers.clicked_frame(evt)))

    @user_errors
    def on_run_temporal(qid: str, settings: dict, frame_no: float, session: ImpactSession,
                        style: str, request: gr.Request, progress=gr.Progress()):
        return outputs(handlers.run_temporal(data, session, settings, qid, frame_no, style,
                                             cancel=stops.for_session(request.session_hash),
                                             progress=progress))

    @user_errors
    def on_run_spatial(qid: str, settings: dict, frame_no: float, session: ImpactSession,
                       shown: str | None, request: gr.Request, progress=gr.Progress()):
        return outputs(handlers.run_spatial(data, session, settings, qid, frame_no, shown=shown,
                                            cancel=stops.for_session(request.session_hash),
                                            progress=progress))

    @user_errors
    def on_metrics(split_name: str, settings: dict, session: ImpactSession, style: str,
                   request: gr.Request, progress=gr.Progress()):
        return handlers.set_metrics(data.annotations, None if split_name == "all" else split_name,
                                    settings, session, progress, style=style,
                                    cancel=stops.for_session(request.session_hash))

    def release_session(request: gr.Request) -> None:
        stops.release(request.session_hash)  # the page closed: its running calls stop

    c.clip.change(on_clip, [c.clip, c.state, c.body3d], c.clip_outputs, api_name="on_clip")
    c.frame.change(on_frame, [c.clip, c.frame, c.state, c.body3d], [c.video, c.timeline, *c.frame_outputs],
                   trigger_mode="always_last", show_progress="hidden", api_name="on_frame")
    c.timeline.click(on_timeline_click, [c.clip, c.state], [c.video, c.frame],
                     api_name="on_timeline_click")
    c.run_temporal.click(on_run_temporal, [c.clip, ctx.settings, c.frame, c.state, c.prompt_style],
                         [c.state, c.timeline, c.status], api_name="on_run_temporal")
    c.run_spatial.click(on_run_spatial, [c.clip, ctx.settings, c.frame, c.state, c.body3d],
                        [c.state, *c.frame_outputs, c.status], api_name="on_run_spatial")
    c.render_button.click(on_render, [c.clip, c.frame, c.state], [c.turntable, c.turntable_msg],
                          api_name="on_render")
    c.metrics_button.click(on_metrics, [c.split, ctx.settings, c.state, c.prompt_style], [c.metrics],
                           api_name="on_metrics")
    if ctx.demo is not None:
        if data.first is not None:
            ctx.demo.load(on_clip, [c.clip, c.state, c.body3d], c.clip_outputs, api_name="on_clip_1")
        ctx.demo.unload(release_session)
