"""The look of every page: one theme (one type scale, one button size, fonts served by the app
itself: an offline talk loads nothing from another host) and the CSS passed to `launch()`.

Layout rules the CSS keeps (tests/browser/test_face.py measures them):
- one header line: the app's name, the tabs, the model badge and the presentation switch;
- each tab's stage (its media) fills the first screen of a laptop;
- presentation mode (`body.present`, components/common/page.py): media at least 55 % of the
  viewport's height, 90 % of the characters on screen 20 px and more and none under 16 px,
  configuration hidden, buttons as wide as their labels (tests/browser/test_presentation.py).
"""
from __future__ import annotations

import gradio as gr

# IBM Plex ships inside gradio's own static files, so the theme never asks a font host for it
THEME = gr.themes.Base(
    primary_hue="indigo", secondary_hue="slate", neutral_hue="slate",
    font=[gr.themes.GoogleFont("IBM Plex Sans"), "ui-sans-serif", "system-ui", "sans-serif"],
    font_mono=[gr.themes.GoogleFont("IBM Plex Mono"), "ui-monospace", "monospace"],
    text_size=gr.themes.sizes.text_md, spacing_size=gr.themes.sizes.spacing_md,
    radius_size=gr.themes.sizes.radius_md,
).set(
    body_background_fill="#f6f7fb",
    block_background_fill="#ffffff",
    block_border_width="1px",
    block_border_color="#e3e6ee",
    block_shadow="none",
    block_label_background_fill="transparent",
    block_label_border_width="0px",
    block_label_text_color="#5b6478",
    block_label_text_size="13px",
    block_title_text_size="13px",
    block_title_text_weight="600",
    block_title_text_color="#5b6478",
    button_large_padding="8px 16px",
    button_large_text_size="15px",
    button_small_padding="8px 16px",
    button_small_text_size="15px",
    button_medium_padding="8px 16px",
    button_medium_text_size="15px",
    button_primary_background_fill="#4f46e5",
    button_primary_background_fill_hover="#4338ca",
    button_primary_text_color="#ffffff",
    button_secondary_background_fill="#ffffff",
    button_secondary_border_color="#d3d8e3",
)

CSS = """
/* ---- the page ------------------------------------------------------------------------------ */
.gradio-container {max-width: 100% !important; padding-top: 6px !important;}
.gradio-container > .main > .wrap, .gradio-container .contain {gap: 8px !important;}
footer {display: none !important;}
.tab-message p {color: #b42318; font-weight: 600; margin: 0;}
.tab-message p:has(.tab-note) {color: #3730a3; font-weight: 500;}   /* a note, not an error */
.tab-message:not(:has(p)), .tab-message:has(p:empty) {display: none !important;}
/* every button of one row is one height */
.gradio-container button.lg, .gradio-container button.md, .gradio-container button.sm {
  min-height: 40px; font-size: 15px; line-height: 1.2;}

/* ---- the header line: name | tabs | badge | present --------------------------------------- */
#app-header {position: absolute; top: 6px; right: 16px; left: auto; width: auto; z-index: 40;
  gap: 10px; align-items: center; flex-wrap: nowrap; background: transparent; border: 0;}
#app-header > * {flex: 0 0 auto !important; min-width: 0 !important; width: auto !important;}
#app-name {position: fixed; left: -10000px;}
.app-name {font-weight: 700;}
#app-tabs > .tab-wrapper {padding-left: 252px !important; padding-right: 400px !important; position: relative;
  min-height: 44px;}
/* the Model sidebar open narrows the page by 420 px: the name stays, smaller, while the header
   holds it beside the tabs (the tab row 910 px or wider: a 1440 px screen), and gives its room to
   the tabs below that (else gradio folds Cloze and Impact into its overflow menu). A media query
   cannot say "only then": gradio prefixes the rules inside one, and a prefixed body:has() matches
   nothing; so the padding and the name's width are a step of the row's own width (x 100, clamped:
   0 below 910 px, the full width above). The control row wraps, the pickers keeping their width
   on a row of their own */
body:has(#app-sidebar.open) #app-tabs > .tab-wrapper {
  padding-left: clamp(0px, calc((100% - 910px) * 100), 214px) !important;}
body:has(#app-sidebar.open) #app-tabs > .tab-wrapper::before {font-size: 14px; white-space: nowrap;
  overflow: hidden; max-width: clamp(0px, calc((100% - 910px) * 100), 208px);}
body:has(#app-sidebar.open) .tab-controls {flex-wrap: wrap !important;}
body:has(#app-sidebar.open) .tab-controls > .form {flex: 1 1 100% !important;}
#app-tabs > .tab-wrapper::before {content: "Video benchmark explorer"; position: absolute; left: 4px;
  top: 50%; transform: translateY(-50%); font-weight: 700; font-size: 17px; color: #1f2533;}
#app-tabs > .tab-wrapper button {font-size: 16px;}
/* the badge wraps at its words (two lines for a compared pair) rather than run onto the switch */
#backend-badge {max-width: 300px; overflow-wrap: anywhere; white-space: normal; cursor: pointer;
  border: 1px solid #d7dbf5; border-radius: 8px;
  background: #eef0fb; border-color: #d7dbf5; color: #3730a3; min-height: 32px !important;
  font-size: 13px !important; padding: 4px 10px !important;}
#backend-badge .html-container, #backend-badge .prose {padding: 0 !important; margin: 0 !important;
  font-size: 13px !important; line-height: 1.3; white-space: normal !important; overflow-wrap: anywhere;}
#app-present {background: transparent !important; border: 0 !important; padding: 0 !important;}
#app-present label {font-size: 14px;}
#app-sidebar .sidebar-content {padding-top: 12px;}

/* ---- a tab: one control row, the message line, the stage, folds below ---------------------- */
.tab-controls {align-items: center; gap: 8px; flex-wrap: nowrap;}
.tab-controls > .form {background: transparent !important; border: 0 !important; box-shadow: none !important;
  gap: 8px; flex-wrap: nowrap;}
.tab-controls > .form > .block {padding: 0 !important; border: 0 !important; background: transparent !important;}
.tab-controls button {flex: 0 0 auto !important; align-self: end; min-height: 42px; min-width: 84px !important;}
.tab-caption, .tab-caption p {font-size: 14px; color: #5b6478; margin: 0;}
.block.tab-caption {padding: 0 4px !important; border: 0 !important; background: transparent !important;}
.tab-about {font-size: 15px;}

/* window search: the player left, the checklist right, timeline and slider under the player */
#ws-stage {align-items: stretch; gap: 12px; flex-wrap: nowrap;}
#ws-intro, #ws-intro .html-container, #impact-intro, #impact-intro .html-container {padding: 0 !important;}
#ws-movie {height: calc(100vh - 480px); min-height: 260px;}
#ws-movie video {object-fit: contain; background: #000;}
#ws-side {max-height: calc(100vh - 250px); overflow-y: auto; flex-wrap: nowrap;}
#ws-side > * {flex: 0 0 auto;}
#ws-scrub {padding-top: 0; padding-bottom: 0;}
#ws-timeline .html-container, #impact-timeline .html-container {padding: 0 !important;}
#ws-timeline .ws-legend span, #impact-timeline .impact-timeline-legend span {white-space: nowrap;}
#ws-cast:not(:has(img)) {display: none !important;}

/* cloze: BEGINNING and END on the left, the four candidates A B / C D beside them */
.gradio-container:has(#cloze-message), #cloze-question, #cloze-question > .styler {overflow: clip !important;}
#cloze-message:has(p) {position: sticky; top: 0; z-index: 30; background: var(--background-fill-primary);}
#cloze-practice {gap: 8px; flex-wrap: nowrap; background: transparent; border: 0;}
#cloze-grid {display: grid !important; grid-template-columns: repeat(3, minmax(0, 1fr));
  grid-template-areas: "b a1 a2" "e a3 a4"; gap: 8px; background: transparent;}
#cloze-beginning-img, #cloze-beginning-video {grid-area: b;}
#cloze-end-img, #cloze-end-video {grid-area: e;}
#cloze-cand-A-img, #cloze-cand-A-video {grid-area: a1;}
#cloze-cand-B-img, #cloze-cand-B-video {grid-area: a2;}
#cloze-cand-C-img, #cloze-cand-C-video {grid-area: a3;}
#cloze-cand-D-img, #cloze-cand-D-video {grid-area: a4;}
.cloze-clip {min-width: 0 !important; padding: 26px 0 0 0 !important; background: #ffffff !important;
  height: calc((100vh - 320px) / 2); min-height: 150px;}
.cloze-clip > label {position: absolute; top: 2px; left: 4px; background: transparent !important;
  border: 0 !important; box-shadow: none !important; font-size: 15px !important; font-weight: 700;
  color: #1f2533 !important; padding: 0 !important;}
.cloze-clip > label svg {display: none;}
.cloze-clip img, .cloze-clip video {width: 100%; height: 100%; object-fit: contain; background: #0d1117;}
.cloze-clip .image-container, .cloze-clip .image-frame, .cloze-clip > div:not(.block-label) {height: 100%;}
#cloze-keys, #cloze-runs-css {display: none !important;}   /* a script's and a <style>'s holders: no strip */
/* the mode's note is the practice playthrough's: not under Model or Compare */
#cloze-mode:has(input[value="practice"]:not(:checked)) .info-text {display: none !important;}
#cloze-key-note {font-size: 14px; color: #3f4757; min-height: 0; padding: 0 4px;}
#cloze-key-note:empty {display: none;}
#cloze-answer, #cloze-letters {gap: 6px; flex-wrap: nowrap; background: transparent; border: 0;}
#cloze-letters {flex: 1 1 auto !important; min-width: 0 !important;}
#cloze-letters > button {flex: 1 1 0 !important; min-width: 56px !important;}
#cloze-letters > #cloze-submit {min-width: 96px !important;}
#cloze-answer > #cloze-navigator {flex: 0 0 150px !important; width: 150px !important;}
#cloze-answer button {min-height: 48px;}
#cloze-answer .cloze-letter {font-size: 22px !important; font-weight: 700;}
#cloze-answer > .block, #cloze-answer .cloze-nav {flex: 0 0 auto !important;}
#cloze-leaderboard .cell-wrap, #cloze-leaderboard .cell-wrap span {font-family: var(--font) !important;
  font-variant-numeric: tabular-nums;}
/* a phone: each clip the screen's width, one under another (a 16-frame grid's frames ~85 px
   wide), the letters after D in the page's flow: a bar held over the clips would cover C and D */
@media (max-width: 640px) {
  #cloze-grid {grid-template-columns: minmax(0, 1fr); grid-template-areas: "b" "e" "a1" "a2" "a3" "a4";}
  .cloze-clip {height: auto; min-height: 0;}
  .cloze-clip:has(video) {aspect-ratio: 4 / 3;}
  .cloze-clip:has(img) .image-container, .cloze-clip:has(img) .image-frame,
  .cloze-clip:has(img) > div:not(.block-label) {height: auto;}
  .cloze-clip img {height: auto; display: block;}
  #cloze-answer {padding: 4px 0; gap: 4px;}
  /* window search: the movie on the first screen under the pickers (the About fold explains the tab) */
  #ws-intro {display: none !important;}
  #cloze-answer button {min-height: 44px; min-width: 0 !important; padding: 4px 6px;}
  #cloze-answer .cloze-nav {display: none !important;}
  /* Model mode's run row: the three buttons on one line, the question order under them */
  #cloze-run-buttons {flex-wrap: wrap !important;}
  #cloze-run-buttons > button {flex: 1 1 30% !important; min-width: 0 !important; white-space: normal; line-height: 1.2;
    padding: 4px 6px;}
  #cloze-run-buttons > .form, #cloze-run-buttons > .block {flex: 1 1 100% !important; min-width: 0 !important;}
}

/* impact: clip | body, then the moment timeline and the frame slider */
#impact-main {align-items: stretch; gap: 12px; flex-wrap: nowrap;}
/* 520: room for the timeline's lanes after a run (predicted, #1 IoU) with the frame row still on
   the first screen of a laptop (tests/browser/test_phone.py) */
#impact-video, #impact-body3d, #impact-turntable {height: calc(100vh - 520px); min-height: 240px;}
#impact-turntable-col:not(:has(video)) {display: none !important;}
#impact-body3d > .html-container, #impact-body3d > .html-container > div {height: 100%; padding: 0 !important;}
#impact-steps button {white-space: nowrap;}
#impact-readout {align-items: center; gap: 12px;}

/* ---- a phone: one column, no header tricks ----------------------------------------------- */
@media (max-width: 900px) {
  #app-header {position: static; flex-wrap: wrap;}
  #app-tabs > .tab-wrapper {padding-left: 0 !important; padding-right: 0 !important;}
  #app-tabs > .tab-wrapper::before {display: none;}
  #ws-stage, #impact-main, .tab-controls, #cloze-practice, #impact-steps, #impact-readout {flex-wrap: wrap !important;}
  /* the pickers one under another, each the screen's width (never a row scrolled sideways) */
  .tab-controls > .form {flex-wrap: wrap !important; flex: 1 1 100% !important; min-width: 0 !important;}
  .tab-controls > .form > * {flex: 1 1 100% !important; min-width: 0 !important;}
  #impact-steps > .block, #impact-steps > .form {flex: 1 1 100% !important; min-width: 0 !important;}
  /* the frame box's reset icon is not one of the row's tall buttons (impact/ui/page.py) */
  #impact-steps #impact-frame .reset-button {min-height: 0 !important; min-width: 0 !important; height: auto;
    padding: 0 6px; font-size: 16px; line-height: 1.2;}
  #cloze-practice > * {flex: 1 1 100% !important;}
  /* the question's number above the verdict or the link's note, each the screen's width */
  #cloze-status-line {flex-wrap: wrap !important;}
  #cloze-status-line > * {flex: 1 1 100% !important; min-width: 0 !important;}
  #ws-movie, #impact-video, #impact-body3d {height: 40vh;}
}

/* a phone asked for presentation: the normal layout, and this line says why (common/page.py) */
#present-fallback {margin: 0; padding: 8px 12px; font-size: 15px; line-height: 1.35; color: #5c3d00;
  background: #fff4d6; border-bottom: 1px solid #f0d48a;}
#present-fallback[hidden] {display: none;}

/* a fold's title wraps before its arrow; the arrow (turned a quarter when shut) is a square box, so
   its turn stays inside the title's button */
.gradio-container button.label-wrap > .icon {flex: none; width: 1.25em; height: 1.25em; line-height: 1;
  display: inline-flex; align-items: center; justify-content: center;}

/* ---- dropdowns: a value longer than its box ends in "…" before the arrow ---------------------
   A picker's value is "id · more words" (the window-search query: qid · contrast · query; the
   Impact clip: qid · query): the id and the start of the words show, then "…"; the whole value is
   the option list's (its entries wrap) and the box's tooltip (page.py HEAD sets `title` on hover).
   gradio draws the arrow over the input's right end: the padding keeps the text out from under it.
   tests/browser/test_text_fits.py measures it at 390, 1440 and 1920 px. */
.gradio-container .wrap-inner input[role="combobox"] {text-overflow: ellipsis; padding-right: 24px;}
/* window search (the movie and query pickers) and Impact (the clip picker): on a phone each picker
   takes the row's whole width (.tab-controls wrap under 900 px), so the ellipsis cuts least */
@media (max-width: 640px) {
  #ws-movie-pick, #ws-query-pick, #impact-clip {flex: 1 1 100% !important; min-width: 0 !important;}
}

/* text that names a control only where it shows: Start in the configuration, keys in presentation */
.present-only {display: none;}
body.present .present-only, body.present .gradio-container .contain .present-only {display: inline;}
body.present .config-only {display: none !important;}

/* ---- presentation mode (components/common/page.py): media large, type large, config hidden --
   Read from the back of a room: every visible text 20 px or more (tests/browser/test_presentation.py
   counts the characters), what a presenter does not need hidden rather than shrunk.
   gradio's own parts take their sizes from the theme's variables (declared on :root): the body
   gives them new values. gradio repeats every rule under ".gradio-container.gradio-container-<v>
   .contain"; the present rules name ".gradio-container .contain" too, so they win over those
   copies of the normal ones */
body.present {--text-xxs: 20px; --text-xs: 20px; --text-sm: 20px; --text-md: 20px; --text-lg: 20px;
  --block-title-text-size: 20px; --block-label-text-size: 20px; --block-info-text-size: 20px;
  --checkbox-label-text-size: 20px; --input-text-size: 20px; --prose-text-size: 20px;
  --section-header-text-size: 20px; --body-text-size: 20px; --button-large-text-size: 20px;
  --button-medium-text-size: 20px; --button-small-text-size: 20px;}
body.present .gradio-container {font-size: 20px;}
body.present .gradio-container .prose, body.present .gradio-container .prose p,
body.present .gradio-container .prose li {font-size: 20px !important;}
body.present .gradio-container label, body.present .gradio-container label span,
body.present .gradio-container button, body.present .gradio-container .contain button,
body.present .gradio-container [data-testid="block-info"], body.present .gradio-container span.time,
body.present .gradio-container .min_value, body.present .gradio-container .max_value {font-size: 20px !important;}
body.present #app-tabs > .tab-wrapper button {font-size: 20px;}
body.present .gradio-container .contain #app-tabs > .tab-wrapper {padding-left: 304px !important;}
body.present .gradio-container .contain #app-tabs > .tab-wrapper::before {font-size: 20px;}
body.present #app-present label {font-size: 20px;}
body.present .gradio-container .contain .tab-caption, body.present .gradio-container .contain .tab-caption p,
body.present .gradio-container .contain .prose, body.present .gradio-container .contain .prose * {font-size: 20px !important;}
body.present .gradio-container .info-text {display: none !important;}
/* the control row's choices say what they are: their titles go */
body.present .gradio-container .contain .tab-controls [data-testid="block-info"] {display: none !important;}
/* a button is as wide as its label */
body.present .gradio-container .contain button {white-space: nowrap; min-width: max-content !important;
  flex-shrink: 0 !important;}
body.present #app-sidebar, body.present #backend-badge, body.present .tab-config,
body.present .gradio-container .contain .tab-config {display: none !important;}
body.present .gradio-container input, body.present .gradio-container textarea {font-size: 20px !important;}
/* window search: the movie, the timeline, the checklist; the slider's seconds are the timeline's */
body.present .gradio-container .contain #ws-movie {height: 58vh; min-height: 58vh;}
body.present .gradio-container .contain #ws-scrub {display: none !important;}
body.present .gradio-container .contain #ws-intro, body.present .gradio-container .contain #ws-baseline-label {display: none !important;}
body.present .gradio-container .contain #ws-side {max-height: 80vh;}
body.present .gradio-container .contain #ws-checklist, body.present .gradio-container .contain #ws-checklist * {font-size: 20px !important;}
body.present .gradio-container .contain #ws-checklist th {white-space: nowrap; overflow-wrap: normal;}
body.present .gradio-container .contain #ws-checklist col:nth-child(2) {width: 130px !important;}
body.present .gradio-container .contain #ws-timeline .ws-legend {line-height: 1.5 !important; margin-top: 4px;}
body.present .gradio-container .contain #ws-timeline {--ws-k: 1.45; --ws-font: 20px; --ws-chunk-font: 20px; --ws-gutter: 92px;}
/* impact: the clip and the body; the timeline's names column widens with its type */
body.present .gradio-container .contain #impact-video, body.present .gradio-container .contain #impact-body3d, body.present .gradio-container .contain #impact-turntable {height: 58vh; min-height: 58vh;}
body.present .gradio-container .contain #impact-timeline, body.present .gradio-container .contain #impact-timeline * {font-size: 20px !important;}
body.present .gradio-container .contain #impact-timeline .impact-row-name {width: 112px !important;}
body.present .gradio-container .contain #impact-timeline .impact-label {line-height: 22px !important;}
body.present .gradio-container .contain #impact-timeline .impact-labels {min-height: 22px;}
body.present .gradio-container .contain #impact-body3d .body3d-label {font-size: 20px !important;}
body.present .gradio-container .contain #impact-steps {flex-wrap: nowrap;}
body.present .gradio-container .contain #impact-intro {display: none !important;}
/* cloze: the question's clips, the letters and the navigator; the keys step the questions */
body.present .gradio-container .contain .cloze-clip {height: calc((100vh - 300px) / 2); padding-top: 32px !important;}
body.present .gradio-container .contain .cloze-clip > label {font-size: 20px !important;}
body.present .gradio-container .contain #cloze-key-note {font-size: 20px !important;}
body.present .gradio-container .contain #cloze-answer > #cloze-navigator {flex: 0 0 170px !important; width: 170px !important;}
"""
