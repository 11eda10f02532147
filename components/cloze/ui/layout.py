"""The Cloze tab's components and event wiring (docs/ui-design.md); the handlers are in handlers.py."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import gradio as gr

from components.cloze.ui import handlers as h
from components.cloze.ui.handlers import emit
from components.cloze.ui.session import ClozeSession
from components.common.ui import TabContext

LETTERS = ("A", "B", "C", "D")
DIM_CHOICES = ["S, A, P", "S", "A", "P", "Mixed"]
# The page adds its own address to the link the server built and copies it (the clipboard needs a
# secure context: the box shows it too).
COPY_JS = """(q) => { if (!q || q.startsWith('http')) return q;
  const url = location.origin + location.pathname + '?' + q;
  if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {}); return url; }"""
CODE_NOTE = ("Follows the released TempCloze code where it differs from the paper: 16 bin-centred "
             "frames per clip (first/last frame skipped), frames <= 360 px high, JPEG 85, option order "
             "`random.Random(f\"{seed}:{stem}:{dim}\")` (Mixed: `f\"{seed}:{stem}\"`), folder `C` for the paper's Progression (P), "
             "and the released analysis for the scores (invalid answers skipped; strict variant shown too). "
             "Requests ask for up to 8192 tokens as released; a reply cut there is recorded as truncated, "
             "not scored. Choices the paper and code leave open are listed in docs/decisions.md.")


def build_tab(ctx: TabContext) -> None:
    gr.Markdown("### Cloze: which clip is the missing middle?\n" + CODE_NOTE, elem_id="cloze-intro")
    ui = SimpleNamespace(state=gr.State(ClozeSession(data_dir=str(ctx.data_dir))), settings=ctx.settings,
                         demo=ctx.demo)
    _source_controls(ui, Path(ctx.data_dir))
    _question_panel(ui)
    _model_panel(ui)
    _compare_panel(ui)
    ui.timer = gr.Timer(1.0, active=False)
    ui.imported = gr.State([])
    _wire(ui)
    if ctx.demo is not None:
        ctx.demo.unload(h.release_session)


def _source_controls(ui: SimpleNamespace, data_dir: Path) -> None:
    with gr.Row():
        ui.mode = gr.Radio(["Human study", "Model", "Compare"], value="Human study", label="Mode",
                           elem_id="cloze-mode")
        ui.root = gr.Textbox("cloze", label="Data folder (inside the app's data folder; holds choices/)",
                             elem_id="cloze-root")
        ui.upload = gr.File(label="…or upload a zip in the released layout", file_types=[".zip"],
                            elem_id="cloze-upload")
    with gr.Row():
        ui.set_name = gr.Dropdown(["all"], value="all", label="Set", allow_custom_value=True, elem_id="cloze-set")
        ui.dims = gr.Dropdown(DIM_CHOICES, value="S, A, P", label="Dimension", elem_id="cloze-dims")
        ui.seed = gr.Number(42, label="Seed", elem_id="cloze-seed")
        ui.status = gr.Markdown("", elem_id="cloze-status")
    ui.message = gr.Markdown("", elem_id="cloze-message")  # the tab's one message line (errors, link notes)
    with gr.Accordion("Build an instance from your own video (12-90 s)", open=False, elem_id="cloze-build-panel"):
        with gr.Row():
            ui.build_video = gr.File(label="Video", file_types=["video"], elem_id="cloze-build-video")
            ui.gap_start = gr.Number(None, label="Gap start (s, empty = automatic)", elem_id="cloze-gap-start")
            ui.gap_end = gr.Number(None, label="Gap end (s)", elem_id="cloze-gap-end")
            ui.build_seed = gr.Number(0, label="Distractor seed", elem_id="cloze-build-seed")
            ui.build = gr.Button("Build instance", elem_id="cloze-build")
        ui.build_out = gr.Markdown("Automatic gaps follow the released rules: 20-40% of the video inside its "
                                   "middle 50%, mean Farneback flow > 1.0, up to 3 tries.", elem_id="cloze-build-out")


def _clip(kind, label: str, elem: str, **kw):
    return kind(label=label, interactive=False, buttons=[], elem_id=f"cloze-{elem}", **kw)  # no download


def _question_panel(ui: SimpleNamespace) -> None:
    with gr.Group(visible=True, elem_id="cloze-question") as ui.question_group:
        with gr.Row():
            ui.annotator = gr.Textbox("", label="Annotator id (pseudonym)", placeholder="anon-17",
                                      elem_id="cloze-annotator")
            ui.start = gr.Button("Start / resume", variant="primary", elem_id="cloze-start")
            ui.display = gr.Radio([("16 frames", "frames"), ("Video", "video")], value="frames", label="Display",
                                  elem_id="cloze-display")
            ui.flow = gr.Radio([("Choose submits", "immediate"), ("Select then submit", "confirm")],
                               value="immediate", label="Answer flow", elem_id="cloze-flow")
            ui.blind = gr.Checkbox(False, label="Blind (no answer reveal)", elem_id="cloze-blind")
        ui.progress = gr.Markdown("Enter an annotator id and press Start / resume.", elem_id="cloze-progress")
        with gr.Row():
            ctx_img = [_clip(gr.Image, lbl, f"{lbl.lower()}-img", type="pil") for lbl in ("BEGINNING", "END")]
            ctx_vid = [_clip(gr.Video, lbl, f"{lbl.lower()}-video", visible=False) for lbl in ("BEGINNING", "END")]
        cand_img, cand_vid = [], []
        for pair in ("AB", "CD"):
            with gr.Row():
                for x in pair:
                    cand_img.append(_clip(gr.Image, f"Candidate {x}", f"cand-{x}-img", type="pil"))
                    cand_vid.append(_clip(gr.Video, f"Candidate {x}", f"cand-{x}-video", visible=False))
        ui.clips = [*ctx_img, *ctx_vid, *cand_img, *cand_vid]
        with gr.Row(elem_id="cloze-answer") as ui.answer_row:
            ui.choices = [gr.Button(letter, elem_id=f"cloze-choice-{letter}") for letter in LETTERS]
            ui.submit = gr.Button("Submit", variant="primary", elem_id="cloze-submit")
        with gr.Row():
            ui.prev = gr.Button("◀ Previous", elem_id="cloze-prev")
            ui.next = gr.Button("Next ▶", elem_id="cloze-next")
            ui.navigator = gr.Dropdown([], label="Go to question", elem_id="cloze-navigator")
            ui.copy_link = gr.Button("Copy link to this view", elem_id="cloze-copy-link")
        ui.link = gr.Textbox(label="link to this question", interactive=False, visible=False, elem_id="cloze-link",
                             buttons=["copy"])
        ui.feedback = gr.Markdown("", elem_id="cloze-feedback")
        with gr.Row() as ui.export_row:
            ui.export_json = gr.Button("Export session (JSON)", elem_id="cloze-export-json")
            ui.export_csv = gr.Button("Export session (CSV)", elem_id="cloze-export-csv")
            ui.export_file = gr.File(label="Export", interactive=False, elem_id="cloze-export-file")


def _model_panel(ui: SimpleNamespace) -> None:
    with gr.Group(visible=False, elem_id="cloze-model") as ui.model_group:
        with gr.Row():
            ui.run_one = gr.Button("Run this question", variant="primary", elem_id="cloze-run-one")
            ui.run_set = gr.Button("Run the set", elem_id="cloze-run-set")
            ui.edge = gr.Radio([("Edge-1", "edge1"), ("Edge-4", "edge4")], value="edge1",
                               label="Baseline (when the backend is 'baseline')", elem_id="cloze-edge")
            ui.strict = gr.Checkbox(False, label="Strict parsing", elem_id="cloze-strict")
            ui.prompt_style = gr.Radio([("Paper / API evaluator (G.2 prompt, frames <= 360 px)", "api"),
                                        ("Released open-model variant (unbolded last line, original size)",
                                         "open")], value="api", label="Prompt style",
                                       elem_id="cloze-prompt-style")
        with gr.Row():
            ui.raw = gr.Textbox(label="Raw answer", lines=4, elem_id="cloze-raw")
            ui.parsed = gr.Textbox(label="Parsed letter", elem_id="cloze-parsed")
            ui.reason = gr.Textbox(label="Reason / parse problem", lines=3, elem_id="cloze-reason")
            ui.option_map = gr.JSON(label="Option map", elem_id="cloze-option-map")
        ui.summary = gr.Markdown("", elem_id="cloze-model-summary")
        ui.results_file = gr.File(label="Result file (upstream format)", interactive=False,
                                  elem_id="cloze-results-file")


def _compare_panel(ui: SimpleNamespace) -> None:
    with gr.Group(visible=False, elem_id="cloze-compare") as ui.compare_group:
        with gr.Row():
            ui.imports = gr.File(label="Import result files (.json) or human-study files (.jsonl)",
                                 file_count="multiple", elem_id="cloze-import")
            ui.study_token = gr.Textbox(label="Researcher token (shows this study's answers)", type="password",
                                        elem_id="cloze-study-token")
            ui.refresh = gr.Button("Refresh leaderboard", elem_id="cloze-refresh")
        ui.leaderboard = gr.Dataframe(label="Leaderboard (paper Table 2.2 rows, imports, this app's runs, this "
                                            "study). Each row names its data set and size; rows on different "
                                            "data are not comparable.",
                                      interactive=False, elem_id="cloze-leaderboard")
        ui.hvm = gr.Dataframe(label="Human vs model, per question (chosen clip)", interactive=False,
                              elem_id="cloze-hvm")
        with gr.Row():
            ui.k_orders = gr.Number(4, label="Orders k", elem_id="cloze-order-k")
            ui.order_limit = gr.Number(6, label="Questions", elem_id="cloze-order-n")
            ui.order_run = gr.Button("Run order sensitivity", elem_id="cloze-order-run")
        ui.order_out = gr.Markdown("", elem_id="cloze-order-out")


def _wire(ui: SimpleNamespace) -> None:
    """Every event with its api_name; outputs in the order of the handler's view fields, then the
    tab's message line (handlers.emit: cleared when the action works, one readable line when not)."""
    def on(listener, handler, inputs, outs, **kw):
        return listener(emit(handler, len(outs)), inputs, [*outs, ui.message], **kw)

    question = [ui.state, *ui.clips, ui.progress, ui.navigator]
    qargs = [ui.state, ui.mode, ui.root, ui.set_name, ui.dims, ui.seed]
    model = [ui.state, ui.settings, ui.root, ui.set_name, ui.dims, ui.seed, ui.edge]
    mode_outs = [ui.question_group, ui.model_group, ui.compare_group, ui.answer_row, ui.export_row, ui.annotator,
                 ui.blind, ui.start]
    on(ui.build.click, h.build, [ui.state, ui.build_video, ui.gap_start, ui.gap_end, ui.build_seed],
       [ui.state, ui.build_out, ui.root], api_name="on_build")
    on(ui.start.click, h.start, [*qargs, ui.annotator, ui.display], [*question, ui.feedback, ui.timer],
       api_name="on_start")
    ui.timer.tick(h.tick, [ui.state], [ui.progress], show_progress="hidden", api_name="on_tick")
    for i, btn in enumerate(ui.choices):
        on(btn.click, h.choose, [ui.state, gr.State(LETTERS[i]), ui.display, ui.flow, ui.blind],
           [*question, ui.feedback], api_name="on_choice" + (f"_{i}" if i else ""))
    on(ui.submit.click, h.submit, [ui.state, ui.display, ui.flow, ui.blind], [*question, ui.feedback],
       api_name="on_submit")
    on(ui.prev.click, h.previous_question, [ui.state, ui.display], question, api_name="on_prev")
    on(ui.next.click, h.next_question, [ui.state, ui.display], question, api_name="on_next")
    on(ui.navigator.input, h.navigate, [ui.state, ui.display, ui.navigator], question, api_name="on_navigate")
    on(ui.display.input, h.redisplay, [ui.state, ui.display], question, api_name="on_display")
    on(ui.copy_link.click, h.copy_link, [ui.state], [ui.link], api_name="on_copy_link").then(
        None, [ui.link], [ui.link], js=COPY_JS)
    on(ui.export_json.click, h.export_json, [ui.state], [ui.export_file], api_name="on_export_json")
    on(ui.export_csv.click, h.export_csv, [ui.state], [ui.export_file], api_name="on_export_csv")
    on(ui.upload.upload, h.upload, [ui.state, ui.upload], [ui.state, ui.root, ui.status], api_name="on_upload")
    on(ui.root.submit, h.load_root, [ui.state, ui.root], [ui.set_name, ui.status], api_name="on_root")
    # .input: the user's choice; a link sets the radio itself, with the mode's view
    on(ui.mode.input, h.mode_view, [ui.mode], mode_outs, api_name="on_mode")
    on(ui.run_one.click, h.run_one, [ui.state, ui.settings, ui.mode, *model[2:], ui.strict, ui.prompt_style],
       [ui.raw, ui.parsed, ui.reason, ui.option_map, ui.summary], api_name="on_run_one")
    on(ui.run_set.click, h.run_whole_set, [*model, ui.strict, ui.prompt_style], [ui.summary, ui.results_file],
       api_name="on_run_set")
    for i, event in enumerate((ui.refresh.click, ui.imports.upload)):
        on(event, h.refresh, [ui.state, ui.imported, ui.imports, ui.study_token], [ui.leaderboard, ui.hvm],
           api_name="on_refresh" + (f"_{i}" if i else ""))
    on(ui.order_run.click, h.order_sensitivity, [*model, ui.k_orders, ui.order_limit, ui.prompt_style],
       [ui.order_out], api_name="on_orders")
    if ui.demo is not None:
        on(ui.demo.load, h.open_page, [ui.state, ui.display],
           [*question, ui.feedback, ui.mode, ui.root, ui.set_name, ui.dims, ui.seed, *mode_outs],
           api_name="on_open_cloze_link", show_progress="hidden")
