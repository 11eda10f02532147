"""The Impact tab's components and event wiring; the handlers are in handlers/, wired through
components/common/ui.py's TabEvents."""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import gradio as gr

from components.common.stopping import wire_stop
from components.common.ui import TabContext, TabEvents, message_line
from components.impact import pair_view, runs_view
from components.impact.prompts.temporal import STYLE_ROWS, STYLES
from components.impact.ui import page
from components.impact.ui import handlers as h
from components.impact.ui.handlers import runs_panel
from components.impact.ui.body_view import body_viewer
from components.impact.ui.session import RESOURCES, ImpactSession, tab_source
from components.impact.ui.views import AddressView, CameraView, ClipView, FrameMoveView, LinkView, LoadView, MetricsView, \
    PaintView, RunsPanelView, SeekView, SpatialView, TemporalView, TurntableView

__all__ = ["build_tab"]

TAGLINE = ("Find <b>when</b> a queried impact hits a person in a clip (frame-accurate moments) and "
           "<b>where</b> on the body: the hit regions are painted on the 3D body.")
ABOUT = """
**Impact** reproduces *HAPACT: Human-Centric Physical Impact Localization in Movies*. Pick a clip
and run the temporal localizer (when: intervals at 24 fps, each frame [(f-1)/fps, f/fps]) and the
spatial one (where: HAPACT's 18 body regions for each annotated frame) with the model chosen in the
Model panel, then move the frame slider: the body is painted for the frame under the playhead
(hit, predicted only, missed). With the **baseline** backend no model is used: the temporal method
is a *motion-energy baseline* (frame differences) and the spatial one a *text-only baseline* (the
body-part words of the query). **Metrics for the set** runs the same over every clip and scores it
with HAPACT's metrics beside the paper's rows; unparsed answers are never guessed: like a "None",
they are no prediction, left out of the temporal scores as the reference (QV-M2) leaves them, and
counted.

Keys (when no text box has the focus): **.** / **,** next / previous frame, **space** play /
pause. A link to this view (`?tab=impact&clip=h0003&frame=85`) opens the same frame; add
`&present=1` for a projector.
"""


@dataclass(kw_only=True)
class ImpactComponents:
    """The tab's components that events read or write, each named like the view fields it fills
    (ui/views.py): an event's outputs are the components its view's fields name."""

    session: gr.State   # the ImpactSession
    clip: gr.Dropdown
    run_temporal: gr.Button
    run_spatial: gr.Button
    stop: gr.Button
    prompt_style: gr.Dropdown
    video: gr.Video
    body3d: gr.HTML   # ui/body_view.py
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
    beside: gr.HTML
    paint: gr.Radio
    status: gr.Markdown
    message: gr.Markdown
    body_note: gr.Markdown
    split: gr.Dropdown
    metrics_button: gr.Button
    metrics: gr.Markdown
    poll: gr.Timer   # the preparation timer
    runs_panel: gr.HTML   # what every run answered (ui/handlers/runs_panel.py)
    runs_heat: gr.Checkbox   # paint how many runs named each region on the body
    runs_timer: gr.Timer   # on while the run files load


def build_tab(ctx: TabContext) -> None:
    """The tab's components; its data (the annotation file) is read when a page opens."""
    source = tab_source(ctx.data_dir, tuple(getattr(ctx, "runs", ()) or ()))
    c = _layout()
    _runs_panel(_wire(ctx, source, c), c)


def warm(data_dir) -> None:
    """After start-up (components/common/warm.py): read the annotation file before a page asks."""
    tab_source(data_dir).get()


def _layout() -> ImpactComponents:
    session = gr.State(ImpactSession())
    gr.HTML(f"<p class='tab-caption'>{TAGLINE}</p>", elem_id="impact-intro", container=False)
    with gr.Row(elem_id="impact-controls", elem_classes=["tab-controls"], equal_height=True):
        clip = gr.Dropdown(choices=[], value=None, label="Clip (type a qid or words to find one)", allow_custom_value=True,
                           elem_id="impact-clip", scale=5, min_width=220)
        run_temporal = gr.Button("Run temporal", variant="primary", elem_id="impact-run-temporal", scale=0,
                                 min_width=140)
        run_spatial = gr.Button("Run spatial", variant="primary", elem_id="impact-run-spatial", scale=0,
                                min_width=130)
        stop = gr.Button("Stop", variant="stop", elem_id="impact-stop", scale=0, min_width=80)
    message = message_line("impact-message")
    with gr.Row(elem_id="impact-main"):
        with gr.Column(scale=3, min_width=300):
            video = gr.Video(show_label=False, buttons=[],
                             elem_id="impact-video", interactive=False)
        with gr.Column(scale=2, min_width=260):
            body3d = body_viewer("impact-body3d")
        with gr.Column(scale=2, min_width=260, visible=True, elem_id="impact-turntable-col"):
            turntable = gr.Video(label="Body, rotating", elem_id="impact-turntable", autoplay=True,
                                 loop=True, interactive=False, buttons=[])
    timeline = gr.HTML("", elem_id="impact-timeline",
                       js_on_load=page.SEEK_JS, container=False)
    with gr.Row(elem_id="impact-steps", equal_height=True):
        frame = gr.Slider(minimum=1, maximum=2, step=1, value=1, label="Frame (1-based, 24 fps)",
                          elem_id="impact-frame", scale=5, min_width=200)
        step_back = gr.Button("◀ frame", elem_id="impact-step-back", scale=0, min_width=90)
        step_on = gr.Button("frame ▶", elem_id="impact-step-on", scale=0, min_width=90)
        reset_view = gr.Button("Face the hit", elem_id="impact-reset-view", scale=0, min_width=110)
        render_button = gr.Button("Render turntable", elem_id="impact-render-turntable", scale=0, min_width=150)
        copy_link = gr.Button("Copy link", elem_id="impact-copy-link", scale=0, min_width=100,
                              elem_classes=["tab-config"])
    link = gr.Textbox(label="Link to this view", elem_id="impact-link", interactive=False, max_lines=1,
                      visible=False)
    with gr.Row(equal_height=True, elem_id="impact-readout"):
        legend = gr.HTML(elem_id="impact-legend", container=False)
        regions = gr.Markdown(elem_id="impact-regions")
    runs_panel, runs_heat = _runs_fold()
    # shown once two compared models answered a frame: paint their difference or one of them
    paint = gr.Radio(pair_view.PAINT_CHOICES, value="difference", label="Body painting (two models)",
                     elem_id="impact-paint", visible=False)
    beside = gr.HTML("", elem_id="impact-beside", container=False)
    turntable_msg = gr.Markdown(elem_id="impact-turntable-msg", elem_classes=["tab-caption"])
    status = gr.Markdown(elem_id="impact-status")
    body_note = gr.Markdown(elem_id="impact-body-note", elem_classes=["tab-caption"])
    hooks = gr.HTML("", elem_id="impact-hooks", js_on_load=page.HOOKS_JS)
    with gr.Accordion("Model settings: the Table 7 prompt variant", open=False, elem_id="impact-model-settings",
                      elem_classes=["tab-config"]):
        prompt_style = gr.Dropdown(choices=[("auto (from the model name)", "auto")]
                                   + [(f"{STYLE_ROWS[s]} ({s})", s) for s in STYLES], value="auto",
                                   label="Prompt variant (Table 7)", elem_id="impact-prompt-style",
                                   info="its prompt verbatim and frame count (192; VTimeLLM 100, "
                                        "TRACE 128, Grounded-Video-LLM 96)")
    with gr.Accordion("Metrics for the set", open=False, elem_id="impact-metrics", elem_classes=["tab-config"]):
        gr.Markdown("Runs the chosen model (or the baselines) over every clip of the set and scores "
                    "it with HAPACT's metrics; the paper's rows (HAPACT test split, 433 queries / "
                    "3,142 frames) are listed beneath for reference. Every row names its data: "
                    "rows on different data are not comparable. Unparsed answers are scored as "
                    "empty predictions and counted, never guessed. **Stop** ends the run.")
        with gr.Row(equal_height=True):
            split = gr.Dropdown(choices=["all"], value="all", label="Split",
                                elem_id="impact-split", scale=1)
            metrics_button = gr.Button("Compute metrics for the set", elem_id="impact-run-metrics", scale=2)
        metrics = gr.Markdown(elem_id="impact-metrics-table")
    with gr.Accordion("About this tab", open=False, elem_id="impact-about", elem_classes=["tab-config", "tab-about"]):
        gr.Markdown(ABOUT)
    return ImpactComponents(
        session=session, clip=clip, run_temporal=run_temporal, run_spatial=run_spatial, stop=stop,
        prompt_style=prompt_style, video=video, body3d=body3d, turntable=turntable, turntable_msg=turntable_msg,
        render_button=render_button, timeline=timeline, frame=frame, step_back=step_back, step_on=step_on,
        reset_view=reset_view, copy_link=copy_link, link=link, hooks=hooks, legend=legend, regions=regions,
        beside=beside, paint=paint, status=status, message=message, body_note=body_note, split=split,
        metrics_button=metrics_button, metrics=metrics, poll=gr.Timer(1.0, active=False), runs_panel=runs_panel,
        runs_heat=runs_heat, runs_timer=gr.Timer(1.0, active=False))


def _wire(ctx: TabContext, source, c: ImpactComponents) -> TabEvents:
    """Every event of the tab, each with the api_name gradio_client and the tests call.

    Events that read the frame box take its raw value (preprocess=False): a cleared or absurd box
    then reaches the handler, which says what to type, instead of gradio's own "Could not
    preprocess ..." error. Their other inputs are plain values (the 3D view's is its value dict)."""
    ev = TabEvents(source.get, RESOURCES, c.message, data_dir=ctx.data_dir, components=c)
    on = ev.on
    raw = {"preprocess": False}
    # .input: only the user's choice; a deep link sets the dropdown without resetting the frame
    views = [on(c.clip.input, h.on_clip, [c.session, c.clip, c.body3d], ClipView, api_name="on_clip",
                drop_repeat=True),
             on(c.frame.change, h.on_frame, [c.session, c.clip, c.frame, c.body3d], FrameMoveView,
                trigger_mode="always_last", show_progress="hidden", api_name="on_frame", **raw)]
    on(c.reset_view.click, h.reset_view, [c.session, c.clip, c.frame], CameraView, show_progress="hidden",
       api_name="on_reset_view", **raw)
    on(c.timeline.click, h.on_timeline_click, [c.session, c.clip], SeekView, kind="data",
       api_name="on_timeline_click")
    c.step_back.click(None, js=page.STEP_BACK_JS)
    c.step_on.click(None, js=page.STEP_ON_JS)
    on(c.copy_link.click, h.copy_link, [c.session, c.clip, c.frame], LinkView, api_name="on_copy_link",
       **raw).then(None, [c.link], [c.link], js=page.COPY_JS)
    on(c.run_temporal.click, h.run_temporal, [c.session, ctx.settings, c.clip, c.frame, c.prompt_style],
       TemporalView, kind="progress", api_name="on_run_temporal", **raw)
    on(c.run_spatial.click, h.run_spatial, [c.session, ctx.settings, c.clip, c.frame, c.body3d],
       SpatialView, kind="progress", api_name="on_run_spatial", **raw)
    on(c.paint.input, h.set_paint, [c.session, c.clip, c.frame, c.paint, c.body3d], PaintView,
       show_progress="hidden", api_name="on_paint", **raw)
    on(c.runs_heat.input, h.set_runs_heat, [c.session, c.clip, c.frame, c.runs_heat, c.body3d], PaintView,
       show_progress="hidden", api_name="on_runs_heat", **raw)
    wire_stop(ev, c.stop, c.session, api_name="on_stop")   # "Stopping…" until the run has
    on(c.render_button.click, h.render_turntable, [c.session, c.clip, c.frame], TurntableView,
       api_name="on_render", **raw)
    on(c.metrics_button.click, h.set_metrics, [c.session, c.split, ctx.settings, c.prompt_style], MetricsView,
       kind="progress", api_name="on_metrics")
    if ctx.demo is not None:
        opened = ev.on_open(ctx, h.on_load, [c.session], LoadView, api_name="on_load_impact")
        opened.then(None, js=page.READY_JS)
        views += [opened, on(c.poll.tick, h.on_load, [c.session], LoadView, kind="params",
                             api_name="on_load_impact_prepared", show_progress="hidden")]
        ev.release_on(ctx.demo)
    if ctx.address is not None:
        _follow_address(ev, ctx.address, c, views)
    return ev


def _follow_address(ev: TabEvents, address: gr.Textbox, c: ImpactComponents, views: list) -> None:
    """The address follows the clip and frame shown (links.frame_link writes it), written once each
    view that moves them has answered: its boxes then hold the view's clip and frame. (Triggered by
    the boxes' own change events, the clip's change read the frame box before the same answer had
    set it: every Impact link first wrote `frame=1`.) Queued and always_last: gradio's page holds
    back a repeat only while a queued run of the event is open, then sends it with the values of
    that moment."""
    follow = ev.over(SimpleNamespace(address=address))
    for view in views:
        follow.on(view.then, h.follow_address, [c.clip, c.frame], AddressView, addressed=False,
                  preprocess=False, show_progress="hidden", trigger_mode="always_last", concurrency_limit=None,
                  api_name="_impact_address")


def _runs_fold() -> tuple[gr.HTML, gr.Checkbox]:
    """What every run answered on the clip and the frame shown (handlers in ui/handlers/runs_panel.py),
    and the toggle painting it on the body."""
    gr.HTML(f"<style>{runs_view.CSS}</style>", container=False, elem_id="impact-runs-css")
    # no fold around it: its rows share the timeline's x range (the same container, no padding)
    panel = gr.HTML("", elem_id="impact-runs-panel", container=False)
    heat = gr.Checkbox(False, label="Paint the runs' answers on the body: each region by how many of the N runs "
                       "named it at this frame (annotated regions striped green)", elem_id="impact-runs-heat",
                       container=False)
    return panel, heat


def _runs_panel(ev: TabEvents, c: ImpactComponents) -> None:
    """The runs panel follows the clip and the frame, and polls while the run files load."""
    # one event for every trigger, one request at a time: answers arrive in the order asked, so an
    # older clip or frame never replaces the newer one's panel
    ev.on([c.clip.change, c.frame.change, c.runs_timer.tick], runs_panel.show, [c.session, c.clip, c.frame],
          RunsPanelView, addressed=False, api_name="_impact_runs_panel", show_progress="hidden",
          trigger_mode="always_last", preprocess=False, concurrency_limit=1, concurrency_id="impact-runs-panel")
