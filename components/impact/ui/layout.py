"""The Impact tab's components (their events are wired in events.py, answered in handlers.py)."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from components.common.ui import TabContext
from components.impact import view
from components.impact.ui import handlers, page
from components.impact.ui.events import outputs, wire
from components.impact.ui.handlers import ImpactData
from components.impact.prompts.temporal import STYLE_ROWS, STYLES
from components.impact.ui.session import BodyViews, ImpactSession, StopEvents

__all__ = ["build_tab", "outputs"]

INTRO = ("Find **when** a queried impact hits a person in a short clip (24 fps, frame-accurate "
         "moments) and **where** on the body, as in [HAPACT](https://arxiv.org/abs/2610.22895). "
         "Pick a clip, run the temporal and spatial localizers with the model chosen in the Model "
         "panel, then scrub the frame slider. With the **baseline** backend no model is used: "
         "the temporal method is a *motion-energy baseline* (frame differences) and the spatial "
         "one a *text-only baseline* (the body-part words of the query).")


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
    step_back: gr.Button
    step_on: gr.Button
    reset_view: gr.Button
    copy_link: gr.Button
    link: gr.Textbox
    hooks: gr.HTML
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
        return [self.video, self.frame, self.timeline, *self.frame_outputs, self.status]

    @property
    def load_outputs(self) -> list:  # LoadView's fields
        return [self.clip, self.video, self.frame, self.timeline, *self.frame_outputs[1:], self.status]


def build_tab(ctx: TabContext) -> None:
    data = handlers.load_data(ctx.data_dir)
    c = _layout(data)
    wire(ctx, data, StopEvents(), BodyViews(), c)


def _layout(data: ImpactData) -> ImpactComponents:
    first = data.first
    state = gr.State(ImpactSession())
    gr.Markdown(f"{INTRO}  \n_{page.SHORTCUTS}_", elem_id="impact-intro")
    if data.load_error:
        gr.Markdown(f"**Note:** {data.load_error}", elem_id="impact-load-error")
    with gr.Row(elem_id="impact-controls"):
        clip = gr.Dropdown(choices=view.clip_choices(data.annotations) if data.annotations else [],
                           value=first.qid if first else None, label="Clip (qid · query)",
                           elem_id="impact-clip", scale=4)
        run_temporal = gr.Button("Run temporal", variant="primary", elem_id="impact-run-temporal", scale=1)
        run_spatial = gr.Button("Run spatial", elem_id="impact-run-spatial", scale=1)
        prompt_style = gr.Dropdown(choices=[("auto (from the model name)", "auto")]
                                   + [(f"{STYLE_ROWS[s]} ({s})", s) for s in STYLES], value="auto",
                                   label="Prompt variant (Table 7)", elem_id="impact-prompt-style",
                                   info="its prompt verbatim and frame count (192; VTimeLLM 100, "
                                        "TRACE 128, Grounded-Video-LLM 96)", scale=2, min_width=220)
    status = gr.Markdown(elem_id="impact-status")
    with gr.Row(elem_id="impact-main"):
        with gr.Column(scale=3, min_width=300):
            video = gr.Video(value=str(first.video) if first else None, label="Clip (24 fps)",
                             elem_id="impact-video", interactive=False)
            timeline = gr.HTML(view.timeline_html(first, None) if first else "", label="Timeline",
                               elem_id="impact-timeline", js_on_load=page.SEEK_JS)
            frame = gr.Slider(minimum=1, maximum=first.num_frames if first else 2, step=1,
                              value=handlers.first_frame(first) if first else 1,
                              label="Frame (1-based, 24 fps)", elem_id="impact-frame")
            with gr.Row(elem_id="impact-steps"):
                step_back = gr.Button("◀ frame (,)", size="sm", elem_id="impact-step-back")
                step_on = gr.Button("frame ▶ (.)", size="sm", elem_id="impact-step-on")
                copy_link = gr.Button("Copy link to this view", size="sm", elem_id="impact-copy-link")
            link = gr.Textbox(label="Link to this view", elem_id="impact-link", interactive=False,
                              max_lines=1, visible=True, placeholder="press Copy link to this view")
        with gr.Column(scale=2, min_width=300):
            body3d = gr.Model3D(label="Body, interactive 3D (painted for this frame)",
                                elem_id="impact-body3d", clear_color=(0.97, 0.97, 0.98, 1.0),
                                camera_position=view.FRONT_CAMERA, height=420)
            reset_view = gr.Button("Reset view (face the hit)", size="sm", elem_id="impact-reset-view")
            legend = gr.HTML(elem_id="impact-legend")
            regions = gr.Markdown(elem_id="impact-regions")
            turntable = gr.Video(label="Body, rotating", elem_id="impact-turntable", autoplay=True,
                                 loop=True, interactive=False, height=220)
            turntable_msg = gr.Markdown(elem_id="impact-turntable-msg")
            render_button = gr.Button("Render turntable", size="sm", elem_id="impact-render-turntable")
    hooks = gr.HTML("", elem_id="impact-hooks", js_on_load=page.HOOKS_JS, head=page.CSS)
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
                            turntable, turntable_msg, render_button, timeline, frame, step_back,
                            step_on, reset_view, copy_link, link, hooks, legend, regions, status,
                            body_note, split, metrics_button, metrics)
