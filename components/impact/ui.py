"""The Impact tab (HAPACT): when a person is hit in a clip, and where on the body.

Handlers only parse inputs, call the logic modules and format outputs. Per-session predictions
live in a gr.State dict: {"temporal": {qid: prediction record}, "spatial": {qid: {frame: answer}},
"methods": {"temporal": name, "spatial": name}}.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

from components.common.errors import UserError
from components.impact import view
from components.common.ui import TabContext, user_errors

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


def _empty_state() -> dict:
    return {"temporal": {}, "spatial": {}, "methods": {}}


def _annotations(data_dir: Path):
    from components.impact.annotations import load_annotations

    path = Path(data_dir) / "impact" / "annotations.json"
    if not path.exists():
        return None, (f"No impact annotations at `{path}`. Run `python examples/generate.py` for "
                      "example clips, or put your own annotations.json (formats.md) there.")
    try:
        return load_annotations(path), None
    except UserError as exc:
        return None, f"Could not load `{path}`: {exc}"


def _item(annotations, qid: str | None):
    if annotations is None:
        raise UserError("No impact annotations are loaded; see the note at the top of the tab.")
    items = annotations.by_qid()
    if not qid or qid not in items:
        raise UserError("Choose a clip first.")
    return items[qid]


def _frame_view(annotations, qid: str, frame: int, state: dict, *, turntable: bool):
    """Everything that depends on (clip, frame, predictions): GLB, legend, regions line, turntable."""
    from components.impact.body import load_body
    from components.impact.render import RenderUnavailable

    item = _item(annotations, qid)
    frame = int(max(1, min(item.num_frames, int(frame or 1))))
    body = load_body()
    answer = state.get("spatial", {}).get(qid, {}).get(str(frame))
    pred_labels = answer["regions"] if answer is not None else None
    painted = view.paint_frame(body, item, frame, pred_labels)
    line = view.regions_line(painted.pred, painted.truth, painted.f1)
    if answer is not None and answer.get("error"):
        line += f"  \n_Model answer not usable ({answer['error']}); raw: `{answer.get('raw', '')[:200]}`_"
    elif answer is not None and answer.get("note"):
        line += f"  \n_{answer['note']}_"
    turn_value, turn_msg = None, "Press **Render turntable** for a rotating view of this frame."
    cached = view.turntable_path(painted)
    if cached.exists():  # rendered once per painted state, then reused
        turn_value, turn_msg = str(cached), ""
    elif turntable:
        try:
            turn_value, turn_msg = str(view.turntable_for(body, painted)), ""
        except RenderUnavailable as exc:
            turn_value, turn_msg = None, f"Rotating view unavailable: {exc}"
    note = body.note + (" Vertex-level SMPL-X annotations are shown as their regions on the mannequin."
                        if body.kind != "smplx" and "painted as their regions" not in body.note else "")
    return (str(painted.glb), view.legend_html(painted.legend), line,
            turn_value, turn_msg, f"_{note}_")


def build_tab(ctx: TabContext) -> None:
    annotations, load_error = _annotations(ctx.data_dir)
    choices = view.clip_choices(annotations) if annotations else []
    first = annotations.items[0] if annotations and annotations.items else None
    state = gr.State(_empty_state())

    gr.Markdown(INTRO, elem_id="impact-intro")
    if load_error:
        gr.Markdown(f"**Note:** {load_error}", elem_id="impact-load-error")
    with gr.Row(equal_height=True):
        clip = gr.Dropdown(choices=choices, value=first.qid if first else None,
                           label="Clip (qid · query)", elem_id="impact-clip", scale=4)
        run_temporal = gr.Button("Run temporal", variant="primary", elem_id="impact-run-temporal", scale=1)
        run_spatial = gr.Button("Run spatial", elem_id="impact-run-spatial", scale=1)
        prompt_style = gr.Dropdown(choices=["auto", "open", "gemini", "gpt"], value="auto",
                                   label="Prompt variant (Table 7)", elem_id="impact-prompt-style",
                                   info="auto: from the model name", scale=1)
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
                    "it with HAPACT's metrics; the paper's rows (HAPACT test split) are listed "
                    "beneath for reference.")
        with gr.Row():
            split = gr.Dropdown(choices=["all"] + sorted({i.split for i in (annotations.items if annotations else []) if i.split}),
                                value="all", label="Split", elem_id="impact-split", scale=1)
            metrics_button = gr.Button("Compute metrics for the set", elem_id="impact-run-metrics", scale=2)
        metrics = gr.Markdown(elem_id="impact-metrics-table")

    frame_outputs = [body3d, legend, regions, turntable, turntable_msg, body_note]

    @user_errors
    def on_clip(qid: str, st: dict):
        item = _item(annotations, qid)
        start = item.moments[0][0] if item.moments else 1
        record = st.get("temporal", {}).get(qid)
        line = timeline_for(item, record, start, st)
        return (gr.Video(value=str(item.video), playback_position=(start - 1) / item.fps),
                gr.Slider(minimum=1, maximum=item.num_frames, value=start), line,
                *_frame_view(annotations, qid, start, st, turntable=False))

    def timeline_for(item, record, frame_no, st):
        windows = record["pred_relevant_windows"] if record else None
        return view.timeline_html(item, windows, frame_no, st.get("methods", {}).get("temporal", ""))

    @user_errors
    def on_frame(qid: str, frame_no: float, st: dict):
        item = _item(annotations, qid)
        frame_no = int(frame_no)
        return (gr.Video(playback_position=(frame_no - 1) / item.fps),
                timeline_for(item, st.get("temporal", {}).get(qid), frame_no, st),
                *_frame_view(annotations, qid, frame_no, st, turntable=False))

    @user_errors
    def on_timeline_click(qid: str, st: dict, evt: gr.EventData):
        data = getattr(evt, "_data", None) or {}
        if not data.get("frame"):
            return gr.skip(), gr.skip()
        item = _item(annotations, qid)
        frame_no = int(max(1, min(item.num_frames, int(data["frame"]))))
        return gr.Video(playback_position=(frame_no - 1) / item.fps), gr.Slider(value=frame_no)

    @user_errors
    def on_run_temporal(qid: str, settings: dict, frame_no: float, st: dict, style: str,
                        progress=gr.Progress()):
        from components.impact.temporal_solvers import make_temporal_solver
        from components.settings.session import SessionSettings, backend_for

        item = _item(annotations, qid)
        backend = backend_for(settings)
        solver = make_temporal_solver(backend, style=style,
                                      max_frames=SessionSettings.from_state(settings).max_frames)
        progress(0.1, desc=f"{solver.method}: localizing")
        pred = solver.localize(item)
        st = {**st, "temporal": {**st.get("temporal", {}), qid: pred.to_record()},
              "methods": {**st.get("methods", {}), "temporal": solver.method}}
        return st, timeline_for(item, pred.to_record(), int(frame_no), st), temporal_status(pred)

    @user_errors
    def on_run_spatial(qid: str, settings: dict, frame_no: float, st: dict,
                       progress=gr.Progress()):
        from components.impact.cli import annotated_frames
        from components.impact.region_prompt import region_solver_for
        from components.settings.session import backend_for

        item = _item(annotations, qid)
        backend = backend_for(settings)
        solver = region_solver_for(backend)
        frames = annotated_frames(item) or [int(frame_no)]
        if int(frame_no) not in frames:
            frames = sorted({*frames, int(frame_no)})
        images = _frame_images(item, frames) if not backend.is_baseline else {}
        answers = {}
        for i, f in enumerate(progress.tqdm(frames, desc=f"{solver.name}: regions")):
            answers[str(f)] = solver.select(images.get(f), item.query, ref=f"{item.qid}#{f}").as_dict()
        st = {**st, "spatial": {**st.get("spatial", {}), qid: answers},
              "methods": {**st.get("methods", {}), "spatial": solver.name}}
        return (st, *_frame_view(annotations, qid, int(frame_no), st, turntable=False),
                f"Spatial: **{solver.name}** on {len(frames)} frame(s) of {qid}.")

    @user_errors
    def on_render(qid: str, frame_no: float, st: dict):
        return _frame_view(annotations, qid, int(frame_no), st, turntable=True)[3:5]

    @user_errors
    def on_metrics(split_name: str, settings: dict, st: dict, style: str, progress=gr.Progress()):
        return set_metrics(annotations, None if split_name == "all" else split_name, settings, st,
                           progress, style=style)

    outputs_clip = [video, frame, timeline, *frame_outputs]
    clip.change(on_clip, [clip, state], outputs_clip)
    frame.change(on_frame, [clip, frame, state], [video, timeline, *frame_outputs],
                 trigger_mode="always_last", show_progress="hidden")
    timeline.click(on_timeline_click, [clip, state], [video, frame])
    run_temporal.click(on_run_temporal, [clip, ctx.settings, frame, state, prompt_style],
                       [state, timeline, status])
    run_spatial.click(on_run_spatial, [clip, ctx.settings, frame, state], [state, *frame_outputs, status])
    render_button.click(on_render, [clip, frame, state], [turntable, turntable_msg])
    metrics_button.click(on_metrics, [split, ctx.settings, state, prompt_style], [metrics])
    if first is not None and ctx.demo is not None:
        ctx.demo.load(on_clip, [clip, state], outputs_clip)


def _frame_images(item, frames: list[int]) -> dict[int, Any]:
    from components.media import open_video

    source = open_video(item.video)
    try:
        return {f: fr.image for f, fr in zip(frames, source.frames_at_indices([f - 1 for f in frames]))}
    finally:
        source.close()


def temporal_status(pred) -> str:
    """One readable line about a temporal answer (method, status, raw text)."""
    head = f"Temporal: **{pred.method}**"
    if pred.prompt_style:
        head += f" · {pred.num_frames_sent} frames sent"
    text = {"ok": f"{len(pred.windows)} interval(s)", "none": "the model answered that no such impact "
            "occurs (empty prediction, counted)", "unparsed": f"no interval could be read after "
            f"{len(pred.attempts)} attempt(s); kept raw, counted as unparsed",
            "error": f"backend error: {pred.error}"}.get(pred.status, pred.status)
    raw = f"  \nRaw answer: `{pred.raw[:300]}`" if pred.raw else ""
    return f"{head} · {text}{raw}"


def set_metrics(annotations, split_name: str | None, settings: dict, st: dict, progress=None,
                *, style: str = "auto") -> str:
    """Run (or reuse) predictions for every clip of the set, then both metric tables."""
    from components.impact.cli import annotated_frames, evaluate_spatial
    from components.impact.region_prompt import region_solver_for
    from components.impact.temporal_metrics import evaluate_temporal
    from components.impact.temporal_solvers import make_temporal_solver
    from components.settings.session import SessionSettings, backend_for

    if annotations is None:
        raise UserError("No impact annotations are loaded.")
    items = annotations.split(split_name)
    backend = backend_for(settings)
    solver = make_temporal_solver(backend, style=style,
                                  max_frames=SessionSettings.from_state(settings).max_frames)
    region_solver = region_solver_for(backend)
    preds, spatial = [], {}
    iterator = progress.tqdm(items, desc="clips") if progress is not None else items
    for item in iterator:
        preds.append(solver.localize(item).to_record())
        frames = [f for f in annotated_frames(item) if f in item.frames]
        images = _frame_images(item, frames) if frames and not backend.is_baseline else {}
        for f in frames:
            spatial[(item.qid, f)] = region_solver.select(images.get(f), item.query,
                                                          ref=f"{item.qid}#{f}").as_dict()
    temporal = evaluate_temporal([i.gt_record() for i in items], preds, fps=annotations.fps)
    unparsed = sum(1 for p in preds if p.get("status") == "unparsed")
    parts = [f"**Temporal** — {solver.method}; {len(items)} clip(s); unparsed answers: {unparsed}",
             view.temporal_table([(solver.method, temporal)]),
             "**By moment length and count** (mAP@0.3)", view.breakdown_table([(solver.method, temporal)])]
    if spatial:
        result = evaluate_spatial(annotations, spatial, split=split_name)
        parts += [f"**Spatial** — {region_solver.name}", view.spatial_table([(region_solver.name, result)])]
    return "\n\n".join(parts)
