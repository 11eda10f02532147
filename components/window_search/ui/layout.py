"""The Window search tab's components and event wiring (docs/ui-design.md); handlers are in handlers.py."""
from __future__ import annotations

import dataclasses
import inspect
from types import SimpleNamespace
from typing import Any
from collections.abc import Callable

import gradio as gr

from components.common.ui import TabContext, user_errors
from components.window_search import view
from components.window_search.ui import handlers as h
from components.window_search.ui.session import SESSIONS, WindowSearchSession

INTRO = ("Find the moment a query describes in a full movie, when a near-identical moment happens "
         "elsewhere: the top-K retrieved chunks are checked statement by statement, expanded past chunk "
         "edges when evidence is cut off, and the accepted window goes to the localizer.")


def outputs(view_value: Any) -> Any:
    """A view's fields in order (one field: the value itself, as gradio wants for one output)."""
    if not dataclasses.is_dataclass(view_value) or isinstance(view_value, WindowSearchSession):
        return view_value
    values = [getattr(view_value, f.name) for f in dataclasses.fields(view_value)]
    return values[0] if len(values) == 1 else values


def event(tab: h.TabData, handler: Callable[..., Any], *, select: bool = False,
          progress: bool = False) -> Callable[..., Any]:
    """`handler(tab, session resources, *inputs[, selected index][, progress])` as a gradio event
    function: the special arguments come first so gradio fills them, UserError becomes gr.Error."""
    if select:
        def fn(request: gr.Request, evt: gr.SelectData, *args):
            return outputs(handler(tab, SESSIONS.get(request.session_hash), *args, evt.index))
    elif progress:
        def fn(request: gr.Request, bar=gr.Progress(), *args):
            return outputs(handler(tab, SESSIONS.get(request.session_hash), *args, progress=bar))
    elif inspect.isgeneratorfunction(handler):
        def fn(request: gr.Request, *args):
            for value in handler(tab, SESSIONS.get(request.session_hash), *args):
                yield outputs(value)
    else:
        def fn(request: gr.Request, *args):
            return outputs(handler(tab, SESSIONS.get(request.session_hash), *args))
    return user_errors(fn)


def release_session(request: gr.Request) -> None:
    SESSIONS.release(request.session_hash)


def build_tab(ctx: TabContext) -> None:
    tab = h.load_tab_data(ctx.data_dir)
    c = SimpleNamespace()
    _search_panel(c, ctx, tab)
    _memory_panel(c)
    _bench_panel(c)
    _wire(c, ctx, tab)


def _search_panel(c: SimpleNamespace, ctx: TabContext, tab: h.TabData) -> None:
    movie_choices = tab.movie_choices()
    c.first_movie = movie_choices[0][1] if movie_choices else None
    gr.Markdown(INTRO + (f"\n\n⚠ {tab.error}" if tab.error else ""), elem_id="ws-intro")
    c.state = gr.State(WindowSearchSession())
    with gr.Row():
        c.movie_pick = gr.Dropdown(movie_choices, value=c.first_movie, label="Movie", elem_id="ws-movie-pick",
                                   scale=3)
        c.upload = gr.File(label="…or upload a video (+ .srt/.vtt)", file_count="multiple",
                           file_types=list(h.VIDEO_TYPES + h.SUB_TYPES), elem_id="ws-upload", scale=2, height=90)
    with gr.Row():
        c.chunk_s = gr.Number(180, label="chunk seconds", minimum=10, elem_id="ws-chunk", scale=1)
        c.k_in = gr.Number(5, label="K candidates", minimum=1, precision=0, elem_id="ws-k", scale=1)
        c.m_in = gr.Number(3, label="M expansions", minimum=0, precision=0, elem_id="ws-m", scale=1)
        c.delta_in = gr.Number(30, label="Δmax seconds", minimum=1, elem_id="ws-delta", scale=1)
        c.method = gr.Radio([("Agentic Window Search", "aws"), ("Movie RAG (top-1)", "rag"),
                             ("oracle chunk", "oracle-chunk")], value="aws", label="window selection",
                            elem_id="ws-method", scale=3)
        c.thinking_off = gr.Checkbox(True, label="thinking off (CoM2 §5)", elem_id="ws-thinking", scale=1,
                                     info="unticked: no switch is sent, the server's default applies")
    with gr.Row():
        c.query_pick = gr.Dropdown(view.query_choices(tab.queries_of(c.first_movie)), value=None,
                                   label="Query from the annotation file (qid · contrast · query)",
                                   elem_id="ws-query-pick", scale=3)
        c.query = gr.Textbox(label="…or type a query", placeholder="Lloyd and Harry walk on a snowy street at night.",
                             elem_id="ws-query", scale=3)
    c.partner_md = gr.Markdown("", elem_id="ws-partner")
    with gr.Row():
        c.run_btn = gr.Button("Run", variant="primary", elem_id="ws-run")
        c.stop_btn = gr.Button("Stop", variant="stop", elem_id="ws-stop")
        c.load_trace = gr.UploadButton("Load trace", file_types=[".json", ".jsonl"], elem_id="ws-load-trace")
        c.export_btn = gr.Button("Export trace", elem_id="ws-export")
    c.baseline_md = gr.Markdown(h.baseline_label(ctx.settings.value), elem_id="ws-baseline-label")
    c.progress_md = gr.Markdown("", elem_id="ws-progress")
    with gr.Row():
        with gr.Column(scale=3):
            c.video = gr.Video(label="Movie", elem_id="ws-movie", interactive=False, height=320)
        with gr.Column(scale=2):
            c.checklist = gr.HTML(view.checklist_html(None, None), elem_id="ws-checklist", js_on_load=None)
            c.cast = gr.Gallery(label="Cast references used", elem_id="ws-cast", columns=4, height=170,
                                allow_preview=False)
    c.timeline = gr.HTML(view.timeline_html(None, 0.0), elem_id="ws-timeline", js_on_load=view.TIMELINE_JS)
    c.window_pick = gr.Radio([], label="Window", elem_id="ws-window-pick")
    c.scrub = gr.Slider(0, 1, value=0, step=1, label="scrub (seconds)", elem_id="ws-scrub")
    c.result_md = gr.Markdown("", elem_id="ws-result")
    c.export_file = gr.File(label="trace JSON", elem_id="ws-export-file", visible=False)


def _memory_panel(c: SimpleNamespace) -> None:
    with gr.Accordion("Character memory (names, reference frames)", open=False, elem_id="ws-memory"):
        c.memory_md = gr.Markdown("", elem_id="ws-memory-names")
        c.refs = gr.Gallery(label="Reference frames (select one to remove it)", elem_id="ws-memory-refs",
                            columns=6, height=150, allow_preview=False)
        c.remove_btn = gr.Button("Remove selected reference", elem_id="ws-memory-remove", size="sm")
        c.frames_gal = gr.Gallery(label="Frames of the selected window (select one, pick a character, add)",
                                  elem_id="ws-window-frames", columns=8, height=150, allow_preview=False)
        with gr.Row():
            c.char_pick = gr.Dropdown([], label="character", elem_id="ws-memory-char")
            c.add_btn = gr.Button("Add selected frame as reference", elem_id="ws-memory-add", size="sm")
            c.names_btn = gr.Button("Find names in the subtitles", elem_id="ws-memory-build", size="sm")
            c.vlm_btn = gr.Button("Build references with the session model", elem_id="ws-memory-vlm", size="sm")


def _bench_panel(c: SimpleNamespace) -> None:
    with gr.Accordion("Benchmark (all queries of the annotation file)", open=False, elem_id="ws-bench"):
        with gr.Row():
            c.bench_run = gr.Button("Run all queries", elem_id="ws-bench-run")
            c.bench_stop = gr.Button("Stop", elem_id="ws-bench-stop", variant="stop")
        c.bench_progress = gr.Markdown("", elem_id="ws-bench-progress")
        c.bench_table = gr.Dataframe(headers=["metric", "value"], elem_id="ws-bench-metrics", interactive=False)
        c.bench_file = gr.File(label="predictions JSONL", elem_id="ws-bench-export")


def _wire(c: SimpleNamespace, ctx: TabContext, tab: h.TabData) -> None:
    """Every event; outputs in the order of each view's fields (handlers.py)."""
    movie_outs = [c.state, c.video, c.timeline, c.query_pick, c.scrub, c.checklist, c.result_md, c.window_pick,
                  c.memory_md, c.refs, c.char_pick]
    memory_outs = [c.state, c.memory_md, c.refs, c.char_pick]
    budget = [c.chunk_s, c.k_in, c.m_in, c.delta_in, c.method, c.thinking_off]
    c.movie_pick.change(event(tab, h.pick_movie), [c.movie_pick, c.chunk_s, c.state], movie_outs,
                        api_name="pick_movie")
    c.upload.upload(event(tab, h.upload_movie), [c.upload, c.chunk_s, c.state], movie_outs, api_name="upload_movie")
    c.query_pick.change(event(tab, h.pick_query), [c.query_pick, c.state], [c.state, c.query, c.partner_md],
                        api_name="pick_query")
    c.run_btn.click(event(tab, h.run), [c.state, ctx.settings, c.query, *budget],
                    [c.state, c.timeline, c.checklist, c.progress_md, c.result_md, c.window_pick, c.cast,
                     c.frames_gal], concurrency_limit=4, api_name="run")
    c.stop_btn.click(event(tab, h.stop), None, None, queue=False, api_name="stop_now")
    c.bench_stop.click(event(tab, h.stop), None, None, queue=False, api_name="stop_now_1")
    # .input: user clicks (radio or timeline block) only, so programmatic updates do not re-seek
    c.window_pick.input(event(tab, h.select_window), [c.window_pick, c.state],
                        [c.state, c.timeline, c.checklist, c.video, c.frames_gal], api_name="select_window")
    c.scrub.release(event(tab, h.scrubbed), [c.scrub, c.state],
                    [c.state, c.timeline, c.checklist, c.video, c.window_pick], api_name="scrubbed")
    c.export_btn.click(event(tab, h.export), [c.state], [c.export_file], api_name="export")
    c.load_trace.upload(event(tab, h.load), [c.load_trace, c.state],
                        [c.state, c.video, c.timeline, c.checklist, c.result_md, c.window_pick, c.cast, c.query,
                         c.scrub], api_name="load")
    c.refs.select(event(tab, h.ref_selected, select=True), [c.state], [c.state], api_name="ref_selected")
    c.remove_btn.click(event(tab, h.remove_ref), [c.state], memory_outs, api_name="remove_ref")
    c.frames_gal.select(event(tab, h.frame_selected, select=True), [c.state], [c.state], api_name="frame_selected")
    c.add_btn.click(event(tab, h.add_ref), [c.state, c.char_pick], memory_outs, api_name="add_ref")
    c.names_btn.click(event(tab, h.find_names), [c.state], memory_outs, api_name="find_names")
    c.vlm_btn.click(event(tab, h.build_refs, progress=True), [c.state, ctx.settings], memory_outs,
                    api_name="build_refs")
    c.bench_run.click(event(tab, h.bench), [c.state, ctx.settings, *budget],
                      [c.bench_progress, c.bench_table, c.bench_file], concurrency_limit=2, api_name="bench")
    ctx.settings.change(h.baseline_label, [ctx.settings], [c.baseline_md], api_name="_baseline_label")
    if ctx.demo is not None:
        ctx.demo.unload(release_session)
        if c.first_movie is not None:  # open the first example movie for every new page
            ctx.demo.load(event(tab, h.pick_movie), [c.movie_pick, c.chunk_s, c.state], movie_outs,
                          api_name="pick_movie_1")
