"""The Window search tab's components and event wiring (docs/ui-design.md). Handlers are in
handlers/ (search.py, memory.py, bench.py, runs_panel.py); components/common/ui.py's TabEvents wires them."""
from __future__ import annotations

import functools
from types import SimpleNamespace

import gradio as gr

from components.common.stopping import wire_stop
from components.common.ui import TabContext, TabEvents, message_line
from components.window_search import runs_view, view
from components.window_search.ui.handlers import bench as b, memory as mh, runs_panel, search as h
from components.window_search.ui.playback import PLAYBACK_JS
from components.window_search.ui.session import RESOURCES, WindowSearchSession, tab_source
from components.window_search.ui.views import BaselineView, BenchView, ExportView, LinkView, LoadView, MemoryView, \
    MovieView, PageView, PlayheadView, QueryView, RunsPanelView, RunView, SelectionView

TAGLINE = ("Find one moment in a full movie when a near-identical moment exists elsewhere: "
           "<b>Run</b> checks each candidate window statement by statement.")
ABOUT = """
**Window search** reproduces *Agentic Window Search* from CoM2-Bench (*Grounding Confusable Movie
Moments*). A query is split into atomic statements (Decompose); the movie's 180 s chunks are ranked
by similarity to the query (Movie RAG); each of the top-K windows is inspected, every statement
judged **✓ true**, **✗ false** or **△ cutoff** (seen only at the window's edge, so the window is
expanded by up to Δmax, at most M times); the first window whose statements all hold is accepted
and a localizer grounds the moment inside it. On the timeline the green bar is the ground truth, the
blue bar the accepted window and the pink bar the prediction; each query has a *confusable partner*
that differs in one attribute.

Keys (outside text fields): <kbd>n</kbd> / <kbd>p</kbd> next / previous inspected window,
<kbd>space</kbd> play / pause. A link to this view (`?tab=window-search&movie=m01&qid=p0005_t&t=400`)
opens the same moment; add `&present=1` for a projector.
"""
# The page adds its own address to the link the server built, takes the player's time when the
# video has moved, and copies it (the clipboard needs a secure context: the box shows it too).
COPY_JS = """(q) => { if (!q) return q; const p = new URLSearchParams(q);
  const v = document.querySelector('#ws-movie video');
  if (v && v.currentTime > 0 && Math.abs(v.currentTime - +(p.get('t') || 0)) >= 1) p.set('t', Math.round(v.currentTime));
  p.sort(); const url = location.origin + location.pathname + '?' + p.toString();
  if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {}); return url; }"""

# a line that says something is scrolled into view (a button at the screen's bottom edge would
# otherwise answer just below it)
SHOW_LINE_JS = """(text) => { if (!text) return;
  const show = () => { const el = document.getElementById('LINE'); if (!el) return;
    const r = el.getBoundingClientRect();
    if (r.height && (r.top < 0 || r.bottom > window.innerHeight)) el.scrollIntoView({block: 'nearest'}); };
  for (const ms of [50, 200, 500, 1000]) setTimeout(show, ms); }"""


def build_tab(ctx: TabContext) -> None:
    """The tab's components; its data (the annotation file) is read when a page opens."""
    source = tab_source(ctx.data_dir)
    c = SimpleNamespace(session=gr.State(WindowSearchSession()), poll=gr.Timer(1.0, active=False))
    _controls(c)
    _stage(c, ctx)
    _tools(c)
    _settings(c)
    _memory_panel(c)
    _bench_panel(c)
    with gr.Accordion("About this tab", open=False, elem_id="ws-about", elem_classes=["tab-config", "tab-about"]):
        gr.Markdown(ABOUT)
    _wire_runs(c, ctx, _wire(c, ctx, source))


def warm(data_dir) -> None:
    """After start-up (components/common/warm.py): read the annotation file before a page asks."""
    tab_source(data_dir).get()


def _controls(c: SimpleNamespace) -> None:
    """One row choosing what to show, then the partner line and the tab's message line."""
    gr.HTML(f"<p class='tab-caption'>{TAGLINE}</p>", elem_id="ws-intro", container=False)
    with gr.Row(elem_classes=["tab-controls"], equal_height=True):
        # wide enough for a movie's id and title at a laptop's width (1440: ~330 px)
        c.movie_pick = gr.Dropdown([], value=None, label="Movie", allow_custom_value=True,
                                   elem_id="ws-movie-pick", scale=3, min_width=300)
        c.query_pick = gr.Dropdown([], label="Query (qid · contrast · query)", elem_id="ws-query-pick",
                                   scale=5, min_width=220)
        c.query = gr.Textbox(label="…or type one", placeholder="Lloyd and Harry walk on a snowy street at night.",
                             elem_id="ws-query", scale=3, min_width=160)
        c.run_btn = gr.Button("Run", variant="primary", elem_id="ws-run", scale=0, min_width=90)
        c.stop_btn = gr.Button("Stop", variant="stop", elem_id="ws-stop", scale=0, min_width=80)
    c.partner = gr.Markdown("", elem_id="ws-partner", elem_classes=["tab-caption"])
    c.message = message_line("ws-message")


def _stage(c: SimpleNamespace, ctx: TabContext) -> None:
    """Player, timeline, slider and checklist: one playhead, on the first screen together."""
    with gr.Row(elem_id="ws-stage"):
        with gr.Column(scale=3, min_width=320):
            c.video = gr.Video(show_label=False, elem_id="ws-movie", interactive=False, buttons=[])
            c.timeline = gr.HTML(view.timeline_html(None, 0.0), elem_id="ws-timeline",
                                 js_on_load=view.TIMELINE_JS + PLAYBACK_JS, container=False)
            c.scrub = gr.Slider(0, 1, value=0, step=1, label="playhead (seconds)", elem_id="ws-scrub",
                                container=False)
            gr.HTML(f"<style>{runs_view.CSS}</style>", container=False, elem_id="ws-runs-css")
            # no fold around it: its rows share the timeline's x range (the same container and gutter)
            c.runs_html = gr.HTML("", elem_id="ws-runs-panel", container=False)
            c.runs_timer = gr.Timer(1.0, active=False)
        with gr.Column(scale=2, min_width=320, elem_id="ws-side"):
            c.progress = gr.Markdown("", elem_id="ws-progress", elem_classes=["tab-caption"])
            c.window_pick = gr.Radio([], label="Window (retrieval rank)", elem_id="ws-window-pick", visible=False)
            c.checklist = gr.HTML(view.checklist_html(None, None), elem_id="ws-checklist", container=False)
            c.result = gr.Markdown("", elem_id="ws-result")
            c.calls = gr.HTML("", elem_id="ws-calls", container=False)
            c.baseline_md = gr.Markdown(h.baseline_label(ctx.settings.value), elem_id="ws-baseline-label",
                                        elem_classes=["tab-caption"])


def _tools(c: SimpleNamespace) -> None:
    """Links, traces and uploads: one row of same-size buttons under the stage."""
    with gr.Row(elem_classes=["tab-config"], equal_height=True):
        c.copy_btn = gr.Button("Copy link to this view", elem_id="ws-copy-link")
        c.load_trace = gr.UploadButton("Load trace", file_types=[".json", ".jsonl"], elem_id="ws-load-trace")
        c.export_btn = gr.Button("Export trace", elem_id="ws-export")
        c.upload = gr.UploadButton("Upload a movie (+ .srt/.vtt)", file_count="multiple",
                                   file_types=list(h.VIDEO_TYPES + h.SUB_TYPES), elem_id="ws-upload")
    # what these buttons say (nothing to export, a file that is not a trace), right under them:
    # the tab's line above the player is off screen when they are in view
    c.tools_message = message_line("ws-tools-message")
    c.tools_message.change(None, [c.tools_message], None, js=SHOW_LINE_JS.replace("LINE", "ws-tools-message"),
                           queue=False)
    c.link = gr.Textbox(label="link to this view", interactive=False, visible=False, elem_id="ws-link",
                        buttons=["copy"])
    c.export_file = gr.File(label="trace JSON", elem_id="ws-export-file", visible=False)
    c.cast = gr.Gallery(format="jpeg", label="Cast references used", elem_id="ws-cast", columns=8, height=120,
                        object_fit="contain", allow_preview=False)


def _settings(c: SimpleNamespace) -> None:
    with gr.Accordion("Search settings: chunk 180 s · K 5 · M 3 · Δmax 30 s · Agentic Window Search",
                      open=False, elem_id="ws-settings", elem_classes=["tab-config"]):
        with gr.Row():
            c.chunk_s = gr.Number(180, label="chunk seconds", elem_id="ws-chunk", scale=1)
            c.k_in = gr.Number(5, label="K candidates", elem_id="ws-k", scale=1)
            c.m_in = gr.Number(3, label="M expansions", elem_id="ws-m", scale=1)
            c.delta_in = gr.Number(30, label="Δmax seconds", elem_id="ws-delta", scale=1)
            c.method = gr.Radio([(v, k) for k, v in b.METHOD_NAMES.items()], value="aws",
                                label="window selection", elem_id="ws-method", scale=3)
            c.thinking_off = gr.Checkbox(True, label="thinking off (CoM2 §5)", elem_id="ws-thinking", scale=1,
                                         info="unticked: no switch is sent, the server's default applies")


def _memory_panel(c: SimpleNamespace) -> None:
    with gr.Accordion("Character memory (names, reference frames)", open=False, elem_id="ws-memory",
                      elem_classes=["tab-config"]):
        c.memory_names = gr.Markdown("", elem_id="ws-memory-names")
        c.refs = gr.Gallery(format="jpeg", label="Reference frames (select one to remove it)", elem_id="ws-memory-refs",
                            columns=6, height=150, allow_preview=False)
        c.remove_btn = gr.Button("Remove selected reference", elem_id="ws-memory-remove", size="sm")
        with gr.Row(visible=False, elem_id="ws-memory-confirm") as c.confirm_row:
            c.confirm_text = gr.Markdown("", elem_id="ws-memory-confirm-text")
            c.confirm_btn = gr.Button("Yes, remove it", variant="stop", size="sm", elem_id="ws-memory-confirm-yes")
            c.cancel_btn = gr.Button("Cancel", size="sm", elem_id="ws-memory-confirm-no")
        c.frames = gr.Gallery(format="jpeg", label="Frames of the selected window (select one, pick a character, add)",
                              elem_id="ws-window-frames", columns=8, height=150, allow_preview=False)
        with gr.Row():
            c.char_pick = gr.Dropdown([], label="character", elem_id="ws-memory-char")
            c.add_btn = gr.Button("Add selected frame as reference", elem_id="ws-memory-add", size="sm")
            c.names_btn = gr.Button("Find names in the subtitles", elem_id="ws-memory-build", size="sm")
            c.vlm_btn = gr.Button("Build references with the session model", elem_id="ws-memory-vlm", size="sm")


def _bench_panel(c: SimpleNamespace) -> None:
    with gr.Accordion("Benchmark (all queries of the annotation file, beside the paper's Table 3)", open=False,
                      elem_id="ws-bench", elem_classes=["tab-config"]):
        with gr.Row():
            c.bench_run = gr.Button("Run all queries", elem_id="ws-bench-run")
            c.bench_stop = gr.Button("Stop", elem_id="ws-bench-stop", variant="stop")
        c.bench_progress = gr.Markdown("", elem_id="ws-bench-progress")
        c.bench_table = gr.Dataframe(b.initial_table(), headers=view.BENCH_HEADERS, elem_id="ws-bench-metrics",
                                     interactive=False, wrap=True)
        c.bench_file = gr.File(label="predictions JSONL", elem_id="ws-bench-export")


def _wire(c: SimpleNamespace, ctx: TabContext, source) -> TabEvents:
    """Every event, wired with the view its handler returns: the outputs are the components `c`
    names like the view's fields (in their order), then the message line and the address box."""
    ev = TabEvents(source.get, RESOURCES, c.message, data_dir=ctx.data_dir, address=(ctx.address, h.view_address),
                   components=c)
    on = ev.on
    budget = [c.chunk_s, c.k_in, c.m_in, c.delta_in, c.method, c.thinking_off]
    on(c.movie_pick.input, h.pick_movie, [c.session, c.movie_pick, c.chunk_s], MovieView, api_name="pick_movie",
       drop_repeat=True)
    on(c.upload.upload, h.upload_movie, [c.session, c.upload, c.chunk_s], MovieView, api_name="upload_movie",
       message=c.tools_message)
    on(c.query_pick.input, h.pick_query, [c.session, c.query_pick], QueryView, api_name="pick_query", drop_repeat=True)
    on(c.run_btn.click, h.run, [c.session, ctx.settings, c.query, *budget], RunView, concurrency_limit=4,
       api_name="run")
    wire_stop(ev, c.stop_btn, c.session, api_name="stop_now")   # "Stopping…" until the run has
    wire_stop(ev, c.bench_stop, c.session, api_name="stop_now_1")
    on(c.timeline.click, h.timeline_click, [c.session], PlayheadView, kind="data", api_name="timeline_click",
       trigger_mode="multiple")  # the page sends one at a time (TIMELINE_JS)
    on(c.window_pick.input, h.select_window, [c.session, c.window_pick], PlayheadView, api_name="select_window")
    on(c.scrub.release, h.scrubbed, [c.session, c.scrub], PlayheadView, api_name="scrubbed",
       trigger_mode="always_last")
    on(c.export_btn.click, h.export, [c.session], ExportView, api_name="export", message=c.tools_message)
    on(c.load_trace.upload, h.load, [c.session, c.load_trace], LoadView, api_name="load", message=c.tools_message)
    on(c.copy_btn.click, h.copy_link, [c.session], LinkView, api_name="copy_link", message=c.tools_message).then(
        None, [c.link], [c.link], js=COPY_JS)
    on(c.refs.select, mh.ref_selected, [c.session], SelectionView, kind="select", api_name="ref_selected")
    on(c.remove_btn.click, mh.remove_ref, [c.session], MemoryView, api_name="remove_ref")
    on(c.confirm_btn.click, mh.confirm_remove, [c.session], MemoryView, api_name="confirm_remove")
    on(c.cancel_btn.click, mh.cancel_remove, [c.session], MemoryView, api_name="cancel_remove")
    on(c.frames.select, mh.frame_selected, [c.session], SelectionView, kind="select", api_name="frame_selected")
    on(c.add_btn.click, mh.add_ref, [c.session, c.char_pick], MemoryView, api_name="add_ref")
    on(c.names_btn.click, mh.find_names, [c.session], MemoryView, api_name="find_names")
    on(c.vlm_btn.click, mh.build_refs, [c.session, ctx.settings], MemoryView, kind="progress", api_name="build_refs")
    on(c.bench_run.click, b.bench, [c.session, ctx.settings, *budget], BenchView, concurrency_limit=2,
       api_name="bench")
    on(ctx.settings.change, h.settings_applied, [ctx.settings], BaselineView, api_name="_baseline_label",
       addressed=False)
    if ctx.demo is not None:
        ev.release_on(ctx.demo)
        ev.on_open(ctx, h.open_page, [c.session, c.chunk_s], PageView, api_name="open_page")
        on(c.poll.tick, h.open_page, [c.session, c.chunk_s], PageView, kind="params",
           api_name="open_page_prepared", show_progress="hidden")
    return ev


def _wire_runs(c: SimpleNamespace, ctx: TabContext, ev: TabEvents) -> None:
    """The runs panel follows the picked query (and polls while the run files load, counting them)."""
    show = functools.partial(runs_panel.show, data_dir=str(ctx.data_dir), named=tuple(getattr(ctx, "runs", ()) or ()))
    # one event, one request at a time: answers arrive in the order asked (never an older query's last)
    ev.on([c.query_pick.change, c.runs_timer.tick], show, [c.session, c.query_pick], RunsPanelView,
          addressed=False, api_name="_ws_runs_panel", show_progress="hidden", trigger_mode="always_last",
          concurrency_limit=1, concurrency_id="ws-runs-panel")
