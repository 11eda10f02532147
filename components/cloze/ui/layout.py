"""The Cloze tab's components and event wiring (docs/ui-design.md); the handlers are in the
handlers/ package (one module per panel), wired through components/common/ui.py's TabEvents."""
from __future__ import annotations

import functools
from pathlib import Path
from types import SimpleNamespace

import gradio as gr

from components.cloze.spec import SPEC
from components.cloze import leaderboard, runs_view
from components.cloze.human import PRACTICE_NOTE
from components.cloze.ui import handlers as h
from components.cloze.ui import views as v
from components.cloze.ui.handlers import runs_panel
from components.cloze.ui.page import KEYS_JS
from components.cloze.ui.session import MODE_CHOICES, PRACTICE, RESOURCES, ClozeSession, ClozeTab
from components.common.stopping import wire_stop
from components.common.ui import TabContext, TabEvents, message_line

LETTERS = ("A", "B", "C", "D")
DIM_CHOICES = ["S, A, P", "S", "A", "P", "Mixed"]
TAGLINE = ("Which clip is the missing middle? Pick the candidate that joins the **BEGINNING** to the "
           "**END**, as a person or as a Video-LLM, scored like TempCloze.")
# presentation mode hides Start: the line names the keys there instead (theme.py: config-only)
PLAY_NOTE = (' <span class="config-only">Press **Start / resume** to play.</span>'
             '<span class="present-only">Press a letter key (A-D) to answer.</span>')
# The page adds its own address to the link the server built and copies it (the clipboard needs a
# secure context: the box shows it too).
COPY_JS = """(q) => { if (!q || q.startsWith('http')) return q;
  const url = location.origin + location.pathname + '?' + q;
  if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {}); return url; }"""
ABOUT = """
**Cloze** reproduces *TempCloze: Can Video-LLMs Identify the Missing Middle?* A video's middle is
cut out; the BEGINNING and END stay, and four candidates compete for the gap: the true middle and
three distractors along one dimension: **S** (spatial: a mirrored or shifted copy), **A**
(attribute: another look), **P** (progression: the wrong speed or direction; folder `C` in the
released data). *Mixed* questions mix distractor types.

The tab follows the released TempCloze code where it differs from the paper: 16 bin-centred frames
per clip (first and last frame skipped), frames at most 360 px high, option order seeded per stem
and dimension, and the released analysis for the scores (invalid answers skipped; a strict variant
is shown too). Requests allow 8192 tokens as released; a reply cut there is recorded as truncated,
not scored. The choices the paper and code leave open are listed in docs/decisions.md.

**Practice playthrough** records your answers under the id you give (type it again to resume) and
names the true middle after each answer, with what the runs chose on it and where your score stands
among them, unless *Blind* is on (then no runs view opens). A real human-baseline study runs on
the study page (`python -m components.cloze.study`): invitation links, nothing that names an
answer. **Model** runs the chosen backend (the Model panel, top right) on the question or the set;
**Compare** puts runs, imported result files, the study's humans and the paper's rows side by side.

Keys (when no text box has the focus): **→** or **n** next question, **←** or **p** previous
question, **a**-**d** or **1**-**4** the letter (the line under the letters says what the key did).
A link to a question (`?tab=cloze&stem=bar_fill&q=P`) opens it; add `&present=1` for a projector: the configuration row is hidden, a letter answers at once (a practice playthrough under
a made-up id starts with the first answer) and the keys step the questions.
"""
ORDER_CHOICES = [("Questions in the set's order", ""),
                 *[(f"Questions: {label[0].lower()}{label[1:]}", key) for key, (label, _) in runs_view.SORTS.items()]]
SLOTS = (("BEGINNING", "beginning"), ("END", "end"), *[(f"Candidate {x}", f"cand-{x}") for x in LETTERS])
#: the players the question grid is built showing (its images; the videos hidden): a visitor's
#: first question in this display sends its clips as plain values, not as updates that also set
#: `visible` (each costs gradio a new component)
BUILT_PLAYERS = "frames"


def build_tab(ctx: TabContext) -> None:
    first = ClozeSession(data_dir=str(ctx.data_dir), runs=tuple(ctx.runs or ()), players=BUILT_PLAYERS)
    ui = SimpleNamespace(session=gr.State(first), settings=ctx.settings, demo=ctx.demo, ctx=ctx,
                         data_dir=Path(ctx.data_dir))
    ui.kept = gr.BrowserState({"annotator": "", "blind": False}, storage_key="vbe-cloze-practice")
    _controls(ui)
    _question_panel(ui)
    _runs_panels(ui)
    _model_panel(ui)
    _compare_panel(ui)
    _setup(ui)
    with gr.Accordion("About this tab", open=False, elem_id="cloze-about", elem_classes=["tab-config", "tab-about"]):
        gr.Markdown(ABOUT)
    ui.timer = gr.Timer(1.0, active=False)
    ui.poll = gr.Timer(1.0, active=False)
    ui.imported = gr.State([])
    _wire(ui)
    _wire_runs(ui)


def _controls(ui: SimpleNamespace) -> None:
    """One row: the mode, who plays, Start, how clips are shown; then the progress and message lines."""
    # the configuration: presentation mode hides the row (the presenter steps with the keys)
    with gr.Row(elem_classes=["tab-controls", "tab-config"], equal_height=True):
        ui.mode = gr.Radio(MODE_CHOICES, value=PRACTICE, label="Mode", show_label=False, container=False,
                           elem_id="cloze-mode", scale=3, min_width=300, info=PRACTICE_NOTE)
        with gr.Row(elem_id="cloze-practice", equal_height=True, scale=3) as ui.practice_row:
            ui.annotator = gr.Textbox("", label="Your id (a pseudonym)", show_label=False, container=False,
                                      placeholder="your id (optional)", elem_id="cloze-annotator",
                                      min_width=150, max_lines=1)
            ui.blind = gr.Checkbox(False, label="Blind (never name the answer)", container=False,
                                   elem_id="cloze-blind", min_width=120)
        ui.start = gr.Button("Start / resume", variant="primary", elem_id="cloze-start", scale=0, min_width=150)
        ui.display = gr.Radio([("16 frames", "frames"), ("Video", "video")], value="frames", label="Display",
                              show_label=False, container=False, elem_id="cloze-display", scale=2, min_width=170)
        ui.copy_link = gr.Button("Copy link", elem_id="cloze-copy-link", scale=0, min_width=110)
    ui.link = gr.Textbox(label="link to this question", interactive=False, visible=False, elem_id="cloze-link",
                         buttons=["copy"])
    # the tab's one-sentence explanation, until a question is shown (then its number and clock);
    # beside it the verdict on the last answer: on the first screen, where the next question starts
    with gr.Row(elem_id="cloze-status-line", equal_height=True) as ui.status_line:
        with gr.Column(scale=2, min_width=280, elem_id="cloze-progress-box") as ui.progress_box:
            ui.progress = gr.Markdown(TAGLINE + PLAY_NOTE, elem_id="cloze-progress",
                                      elem_classes=["tab-caption"])
        with gr.Column(scale=3, min_width=280, elem_id="cloze-verdicts"):
            ui.feedback = gr.Markdown("", elem_id="cloze-feedback")
            # Model mode: Run this question's answer in one line, on the first screen (the Model
            # panel's boxes are below the runs panel)
            ui.headline = gr.HTML("", elem_id="cloze-model-headline", container=False)
            gr.HTML(f"<style>{HEADLINE_CSS}</style>", container=False, elem_id="cloze-headline-css")
    ui.message = message_line("cloze-message")  # the tab's one message line (errors, link notes)


def _clip(kind, label: str, elem: str, **kw):
    return kind(label=label, interactive=False, buttons=[], elem_id=f"cloze-{elem}",
                elem_classes=["cloze-clip", f"cloze-slot-{elem.split('-')[0] if elem.startswith('cand') else elem}"],
                **kw)


def _question_panel(ui: SimpleNamespace) -> None:
    with gr.Column(visible=True, elem_id="cloze-question") as ui.question_group:
        with gr.Row(elem_id="cloze-grid"):
            # JPEG, not gradio's default WebP: six grids encode in ~10 ms instead of ~200 ms a question
            images = [_clip(gr.Image, label, f"{slug}-img", type="pil", format="jpeg",
                            visible=BUILT_PLAYERS != "video") for label, slug in SLOTS]
            videos = [_clip(gr.Video, label, f"{slug}-video", visible=BUILT_PLAYERS == "video") for label, slug in SLOTS]
        # the handlers' order: BEGINNING/END images, their videos, A-D images, A-D videos
        ui.clips = [*images[:2], *videos[:2], *images[2:], *videos[2:]]
        with gr.Row(elem_id="cloze-answer", equal_height=True):
            with gr.Row(elem_id="cloze-letters", equal_height=True) as ui.answer_row:   # the player's only
                ui.choices = [gr.Button(letter, elem_id=f"cloze-choice-{letter}", elem_classes=["cloze-letter"],
                                        min_width=48) for letter in LETTERS]
                ui.submit = gr.Button("Submit", variant="primary", elem_id="cloze-submit", min_width=90)
            # Model mode's actions, where the letters are in the practice playthrough (first screen)
            with gr.Row(elem_id="cloze-run-buttons", visible=False, equal_height=True) as ui.run_row:
                ui.run_one = gr.Button("Run this question", variant="primary", elem_id="cloze-run-one")
                ui.run_set = gr.Button("Run the set", elem_id="cloze-run-set")
                ui.stop = gr.Button("Stop", variant="stop", elem_id="cloze-stop")
                # the navigator's order: the set's own, or the runs' (hardest first, ...); never a
                # practice playthrough's (this row is Model mode's)
                ui.order = gr.Dropdown(ORDER_CHOICES, value="", show_label=False, container=False,
                                       elem_id="cloze-question-order", min_width=340, scale=2)
            ui.prev = gr.Button("◀", elem_id="cloze-prev", min_width=48, elem_classes=["cloze-nav"])
            ui.next = gr.Button("▶", elem_id="cloze-next", min_width=48, elem_classes=["cloze-nav"])
            # a large set lists the questions near the one shown; any number may be typed
            ui.navigator = gr.Dropdown([], show_label=False, container=False, elem_id="cloze-navigator",
                                       min_width=120, elem_classes=["cloze-nav"], allow_custom_value=True)
        gr.HTML("", elem_id="cloze-keys", js_on_load=KEYS_JS, container=False)
        with gr.Row(elem_classes=["tab-config"], equal_height=True) as ui.export_row:
            ui.flow = gr.Radio([("Choose submits", "immediate"), ("Select, then Submit", "confirm")],
                               value="immediate", label="Answer flow", elem_id="cloze-flow", scale=2)
            ui.export_json = gr.Button("Export answers (JSON)", elem_id="cloze-export-json")
            ui.export_csv = gr.Button("Export answers (CSV)", elem_id="cloze-export-csv")
        ui.export_file = gr.File(label="Export", interactive=False, visible=False, elem_id="cloze-export-file")


def _runs_panels(ui: SimpleNamespace) -> None:
    """What every run answered: on the question on screen, and across questions (handlers/runs_panel.py)."""
    gr.HTML(f"<style>{runs_view.CSS}</style>", container=False, elem_id="cloze-runs-css")
    with gr.Accordion(runs_view.PANEL_TITLE, open=True, elem_id="cloze-runs") as ui.runs_fold:
        ui.runs_html = gr.HTML("", elem_id="cloze-runs-panel")
    with gr.Accordion("Runs across questions: hardest first, disagreement, overview", open=False,
                      elem_id="cloze-runs-across") as ui.runs_across:
        with gr.Row(equal_height=True):
            ui.runs_sort = gr.Dropdown([(label, key) for key, (label, _) in runs_view.SORTS.items()],
                                       value=runs_view.DEFAULT_SORT, label="Questions", elem_id="cloze-runs-sort")
            ui.runs_overview = gr.Checkbox(False, label="Runs-by-questions overview", elem_id="cloze-runs-overview")
        # browsing every question: stems by name, one dimension, how many runs were right, pages
        with gr.Row(equal_height=True):
            ui.runs_find = gr.Textbox("", label="Find stems (words of their names)", elem_id="cloze-runs-find",
                                      max_lines=1, scale=3, placeholder="e.g. bar_fill clock, then Enter")
            ui.runs_dim = gr.Dropdown([("All", ""), *[(d, d) for d in runs_view.DIMENSIONS]], value="",
                                      label="Dimension", elem_id="cloze-runs-dim", scale=1, min_width=100)
            # a text box: a Number shows its empty value as 0, which would filter to "no run right"
            ui.runs_right = gr.Textbox("", label="Runs right (k, then Enter)", placeholder="any",
                                       elem_id="cloze-runs-right", max_lines=1, scale=1, min_width=120)
            ui.runs_page = gr.Number(1, label="Page", precision=0, minimum=1, elem_id="cloze-runs-page",
                                     scale=1, min_width=90)
        ui.runs_grid = gr.HTML("", elem_id="cloze-runs-grid")
        ui.runs_list = gr.HTML("", elem_id="cloze-runs-list")
    ui.runs_timer = gr.Timer(1.0, active=False)
    ui.runs_across_timer = gr.Timer(1.0, active=False)


def _model_panel(ui: SimpleNamespace) -> None:
    with gr.Column(visible=False, elem_id="cloze-model-panel") as ui.model_group:
        with gr.Row():
            ui.raw = gr.Textbox(label="Raw answer", lines=4, elem_id="cloze-raw", scale=3)
            ui.parsed = gr.Textbox(label="Parsed letter", elem_id="cloze-parsed", scale=1)
            ui.reason = gr.Textbox(label="Reason / parse problem", lines=3, elem_id="cloze-reason", scale=2)
            ui.option_map = gr.JSON(label="Option map", elem_id="cloze-option-map", scale=2)
        # the model's reasoning (collapsed) and, with "compare with", both models side by side
        ui.beside = gr.HTML("", elem_id="cloze-pair", container=False)
        ui.summary = gr.Markdown("", elem_id="cloze-model-summary")
        ui.results_file = gr.File(label="Result file (upstream format)", interactive=False, visible=False,
                                  elem_id="cloze-results-file")
        with gr.Accordion("Model settings: baseline, parsing, prompt style", open=False, elem_id="cloze-model-settings",
                          elem_classes=["tab-config"]):
            with gr.Row():
                ui.edge = gr.Radio([("Edge-1 (pixel approximation)", "edge1"),
                                    ("Edge-4 (pixel approximation)", "edge4"),
                                    ("Edge-4 DINOv2 (released)", "dinov2")], value="edge1",
                                   label="Baseline (when the backend is plain 'baseline'; baseline:edge4 etc. name their own)",
                                   elem_id="cloze-edge",
                                   info="the released baseline needs DINOv2 weights (APP_EDGE_MODEL or "
                                        "facebook/dinov2-base); the pixel ones run offline")
                ui.strict = gr.Checkbox(False, label="Strict parsing", elem_id="cloze-strict")
                ui.prompt_style = gr.Radio([("Paper / API evaluator (G.2 prompt, frames <= 360 px)", "api"),
                                            ("Released open-model variant (unbolded last line, original size)",
                                             "open")], value="api", label="Prompt style",
                                           elem_id="cloze-prompt-style")


def _compare_panel(ui: SimpleNamespace) -> None:
    with gr.Column(visible=False, elem_id="cloze-compare") as ui.compare_group:
        ui.leaderboard = gr.Dataframe(label="Leaderboard", interactive=False, elem_id="cloze-leaderboard", wrap=True,
                                      column_widths=leaderboard.column_widths(), max_height=640)
        # a run's row opens it: every question, its answers, the wrong ones alone (handlers/compare_panel.py)
        with gr.Row(equal_height=True):
            ui.run_name = gr.Textbox("", label="Run opened (click its leaderboard row)", interactive=False,
                                     elem_id="cloze-run-name", scale=3)
            ui.run_wrong = gr.Checkbox(False, label="Wrong only", elem_id="cloze-run-wrong", scale=1)
            ui.run_page = gr.Number(1, label="Page", precision=0, minimum=1, elem_id="cloze-run-page", scale=1,
                                    min_width=90)
        ui.run_view = gr.HTML("", elem_id="cloze-run-view")
        ui.human_vs_model = gr.Dataframe(label="Human vs model, per question (chosen clip)", interactive=False,
                              elem_id="cloze-hvm")
        with gr.Row(equal_height=True, elem_classes=["tab-config"]):
            ui.imports = gr.File(label="Import result files (.json) or human-study files (.jsonl)",
                                 file_count="multiple", elem_id="cloze-import", height=90)
            ui.study_token = gr.Textbox(label="Researcher token (shows this study's answers)", type="password",
                                        elem_id="cloze-study-token")
            ui.refresh = gr.Button("Refresh leaderboard", elem_id="cloze-refresh")
        with gr.Row(equal_height=True, elem_classes=["tab-config"]):
            ui.k_orders = gr.Number(4, label="Orders k", elem_id="cloze-order-k")
            ui.order_limit = gr.Number(6, label="Questions", elem_id="cloze-order-n")
            ui.order_run = gr.Button("Run order sensitivity", elem_id="cloze-order-run")
        ui.order_out = gr.Markdown("", elem_id="cloze-order-out")


def _setup(ui: SimpleNamespace) -> None:
    with gr.Accordion("Set-up: data folder, set, dimension, seed, your own video", open=False,
                      elem_id="cloze-setup", elem_classes=["tab-config"]):
        with gr.Row():
            ui.root = gr.Textbox(SPEC.data, label="Data folder (inside the app's data folder; holds choices/)",
                                 elem_id="cloze-root", scale=2)
            ui.set_name = gr.Dropdown(["all"], value="all", label="Set", allow_custom_value=True, elem_id="cloze-set")
            ui.dims = gr.Dropdown(DIM_CHOICES, value="S, A, P", label="Dimension", elem_id="cloze-dims")
            ui.seed = gr.Number(42, label="Seed", elem_id="cloze-seed")
        ui.status = gr.Markdown("", elem_id="cloze-status")
        ui.upload = gr.File(label="…or upload a zip in the released layout", file_types=[".zip"],
                            elem_id="cloze-upload", height=90)
        with gr.Accordion("Build an instance from your own video (12-90 s)", open=False, elem_id="cloze-build-panel"):
            with gr.Row():
                ui.build_video = gr.File(label="Video", file_types=["video"], elem_id="cloze-build-video", height=90)
                ui.gap_start = gr.Number(None, label="Gap start (s, empty = automatic)", elem_id="cloze-gap-start")
                ui.gap_end = gr.Number(None, label="Gap end (s)", elem_id="cloze-gap-end")
                ui.build_seed = gr.Number(0, label="Distractor seed", elem_id="cloze-build-seed")
                ui.build = gr.Button("Build instance", elem_id="cloze-build")
            ui.build_out = gr.Markdown("Automatic gaps follow the released rules: 20-40% of the video inside its "
                                       "middle 50%, mean Farneback flow > 1.0, up to 3 tries.", elem_id="cloze-build-out")


#: the verdict column takes no more height than it must: at 1440x900 a practice answer's reveal (two
#: lines of smaller type; presentation mode keeps its own large type) and Run this question's answer
#: (one line, the reason cut) sit above the clips with the letters and the buttons still on screen
HEADLINE_CSS = """#cloze-verdicts { gap: 0 !important; }
body:not(.present) #cloze-feedback :is(.md, p) { font-size: 13px !important; line-height: 1.35 !important; }
#cloze-model-headline .html-container { padding: 0 !important; }
#cloze-headline-css { display: none; }
.cloze-model-answer { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; line-height: 1.5; }"""
KEEP_JS = """(kept, annotator, blind) => [{annotator: annotator || '', blind: !!blind}]"""


def _wire(ui: SimpleNamespace) -> None:
    """Every event with its api_name; its outputs are the components its view class names (the
    field names are `ui`'s attribute names, views.py), then the tab's message line (TabEvents:
    cleared when the action works, one readable line when not) and the address box."""
    ev = TabEvents(ClozeTab(str(ui.data_dir)), RESOURCES, ui.message, data_dir=ui.data_dir,
                   address=(ui.ctx.address, h.view_address), components=ui)
    ui.events = ev
    on = ev.on
    qargs = [ui.session, ui.mode, ui.root, ui.set_name, ui.dims, ui.seed]
    model = [ui.session, ui.settings, ui.root, ui.set_name, ui.dims, ui.seed, ui.edge]
    on(ui.build.click, h.build, [ui.session, ui.build_video, ui.gap_start, ui.gap_end, ui.build_seed], v.BuildView,
       kind="progress", api_name="on_build")
    started = on(ui.start.click, h.start, [*qargs, ui.annotator, ui.display], v.StartView, api_name="on_start")
    started.then(None, [ui.kept, ui.annotator, ui.blind], [ui.kept], js=KEEP_JS)
    on(started.then, h.clock_timer, [ui.session], v.TimerView, addressed=False, api_name=False,
       show_progress="hidden")
    ui.blind.input(None, [ui.kept, ui.annotator, ui.blind], [ui.kept], js=KEEP_JS)
    on(ui.timer.tick, h.tick, [ui.session], v.ClockView, addressed=False, show_progress="hidden", api_name="on_tick")
    for i, btn in enumerate(ui.choices):
        on(btn.click, h.choose, [ui.session, gr.State(LETTERS[i]), ui.display, ui.flow, ui.blind], v.AnswerView,
           api_name="on_choice" + (f"_{i}" if i else ""))
    on(ui.submit.click, h.submit, [ui.session, ui.display, ui.flow, ui.blind], v.AnswerView, api_name="on_submit")
    on(ui.prev.click, h.previous_question, [ui.session, ui.display], v.NavView, api_name="on_prev")
    on(ui.next.click, h.next_question, [ui.session, ui.display], v.NavView, api_name="on_next")
    on(ui.navigator.input, h.navigate, [ui.session, ui.display, ui.navigator], v.NavView, api_name="on_navigate",
       drop_repeat=True)
    on(ui.order.input, h.order_questions, [ui.session, ui.display, ui.order], v.NavView, api_name="on_order",
       drop_repeat=True)
    on(ui.display.input, h.redisplay, [ui.session, ui.display], v.NavView, api_name="on_display")
    on(ui.copy_link.click, h.copy_link, [ui.session], v.LinkBoxView, api_name="on_copy_link").then(
        None, [ui.link], [ui.link], js=COPY_JS)
    on(ui.export_json.click, h.export_json, [ui.session], v.ExportView, api_name="on_export_json")
    on(ui.export_csv.click, h.export_csv, [ui.session], v.ExportView, api_name="on_export_csv")
    on(ui.upload.upload, h.upload, [ui.session, ui.upload], v.SourceView, api_name="on_upload")
    on(ui.root.submit, h.load_root, [ui.session, ui.root], v.RootView, api_name="on_root")
    # .input: the user's choice; a link sets the radio itself, with the mode's view
    on(ui.mode.input, h.pick_mode, [ui.session, ui.mode, ui.imported, ui.study_token, ui.display], v.ModePick,
       api_name="on_mode")
    on(ui.run_one.click, h.run_one, [ui.session, ui.settings, *model[2:], ui.strict, ui.prompt_style, ui.display],
       v.RunOneView, api_name="on_run_one")
    on(ui.run_set.click, h.run_whole_set, [*model, ui.strict, ui.prompt_style], v.RunSetView,
       kind="progress", api_name="on_run_set")
    wire_stop(ev, ui.stop, ui.session, api_name="on_stop")   # "Stopping…" until the run has
    for i, event in enumerate((ui.refresh.click, ui.imports.upload)):
        on(event, h.refresh, [ui.session, ui.imported, ui.imports, ui.study_token], v.LeaderboardView,
           api_name="on_refresh" + (f"_{i}" if i else ""))
    on(ui.order_run.click, h.order_sensitivity, [*model, ui.k_orders, ui.order_limit, ui.prompt_style],
       v.OrderView, kind="progress", api_name="on_orders")
    if ui.demo is not None:
        ev.release_on(ui.demo)
        loaded = ev.on_open(ui.ctx, h.open_page, [ui.session, ui.display], v.LinkView,
                            api_name="on_open_cloze_link", show_progress="hidden")
        on(ui.poll.tick, h.open_page, [ui.session, ui.display], v.LinkView, kind="params",
           api_name="on_open_cloze_prepared", show_progress="hidden")
        restore = "(kept) => [(kept && kept.annotator) || '', !!(kept && kept.blind)]"
        loaded.then(None, [ui.kept], [ui.annotator, ui.blind], js=restore)
        # the browser's copy is read when the tab's components mount, which may come after the
        # page's load event (the tab not shown yet): its change then restores id and Blind
        ui.kept.change(None, [ui.kept], [ui.annotator, ui.blind], js=restore)


def _wire_runs(ui: SimpleNamespace) -> None:
    """The run panels follow the session (a new question, an answer, a mode) and poll while the
    runs load, counting the files read; a link's `sort=` / `overview=1` opens the across-questions
    view. Wired through the tab's adapter (handlers/runs_panel.py)."""
    on = ui.events.on
    named = tuple(getattr(ui.ctx, "runs", ()) or ())
    hidden = {"addressed": False, "show_progress": "hidden"}
    # each panel one event, one request at a time: answers arrive in the order asked
    on([ui.session.change, ui.runs_timer.tick], functools.partial(runs_panel.show_question, named=named),
       [ui.session], v.RunsPanelView, api_name="_cloze_runs_panel", trigger_mode="always_last",
       concurrency_limit=1, concurrency_id="cloze-runs-panel", **hidden)
    browse = [ui.runs_sort, ui.runs_overview, ui.runs_find, ui.runs_dim, ui.runs_right, ui.runs_page]
    # a new filter starts at page 1 (its change then draws the list)
    on([ui.runs_sort.change, ui.runs_find.submit, ui.runs_dim.change, ui.runs_right.submit], runs_panel.first_page,
       [], v.FirstPageView, api_name="_cloze_runs_first_page", **hidden)
    # a blind playthrough keeps this view shut too (runs_panel.across)
    on([ui.runs_sort.change, ui.runs_overview.change, ui.runs_across.expand, ui.runs_across_timer.tick,
        ui.runs_find.submit, ui.runs_dim.change, ui.runs_right.submit, ui.runs_page.change],
       functools.partial(runs_panel.across, named=named), [ui.session, ui.blind, *browse], v.AcrossView,
       api_name="_cloze_runs_across", trigger_mode="always_last", concurrency_limit=1,
       concurrency_id="cloze-runs-across", **hidden)
    on([ui.blind.change, ui.session.change], runs_panel.close_when_blind, [ui.session, ui.blind], v.BlindView,
       api_name="_cloze_runs_blind", **hidden)

    # a leaderboard row names its run (page 1); the name, Wrong only and the page redraw it, from
    # the collection, this page's own runs or the imported files (handlers/compare_panel.py)
    on(ui.leaderboard.select, h.pick_run, [], v.RunPicked, kind="row", api_name="_cloze_open_run", **hidden)
    on([ui.run_name.change, ui.run_wrong.change, ui.run_page.change], h.show_run,
       [ui.session, ui.run_name, ui.run_wrong, ui.run_page, ui.imports], v.RunOpened,
       api_name="on_open_run", show_progress="hidden", trigger_mode="always_last")
    if ui.demo is not None:
        # beside the tab's page view, on the same select, the list drawn in the same answer
        # (chained after the page view, the find box, mounted by the update that opened its fold,
        # lost the value it was given)
        ui.events.on_open(ui.ctx, functools.partial(runs_panel.open_view, named=named), [ui.session, ui.blind],
                          v.RunsLinkView, view="runs-link", api_name="_cloze_runs_link", **hidden)
