"""The look of every page: one theme (one type scale, one button size, fonts served by the app
itself: an offline talk loads nothing from another host) and the CSS every tab shares; `page_css`
joins each tab's own CSS after it (the file its registry row names, e.g.
components/cloze/ui/style.css), the CSS passed to `launch()`. No tab's selector lives here
(tests/test_layers.py).

Layout rules the CSS keeps (tests/browser/test_face.py measures them):
- one header line: the app's name, the tabs, the model badge and the presentation switch;
- each tab's stage (its media) fills the first screen of a laptop;
- presentation mode (`body.present`, components/common/page.py): media at least 55 % of the
  viewport's height, 90 % of the characters on screen 20 px and more and none under 16 px,
  configuration hidden, buttons as wide as their labels (tests/browser/test_presentation.py).
"""
from __future__ import annotations

from collections.abc import Iterable

import gradio as gr

from components.base.tabs import TabSpec

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

/* ---- a phone: one column, no header tricks ----------------------------------------------- */
@media (max-width: 900px) {
  #app-header {position: static; flex-wrap: wrap;}
  #app-tabs > .tab-wrapper {padding-left: 0 !important; padding-right: 0 !important;}
  #app-tabs > .tab-wrapper::before {display: none;}
  .tab-controls {flex-wrap: wrap !important;}
  /* the pickers one under another, each the screen's width (never a row scrolled sideways) */
  .tab-controls > .form {flex-wrap: wrap !important; flex: 1 1 100% !important; min-width: 0 !important;}
  .tab-controls > .form > * {flex: 1 1 100% !important; min-width: 0 !important;}
}

/* a phone asked for presentation: the normal layout, and this line says why; a link naming no tab of
   the app: the first tab, and this line says why (common/page.py) */
#present-fallback, #link-note {margin: 0; padding: 8px 12px; font-size: 15px; line-height: 1.35; color: #5c3d00;
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
/* a tab's long pickers take the row's whole width on a phone: its own ui/style.css */

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
"""


def page_css(tabs: Iterable[TabSpec]) -> str:
    """The CSS of a page showing `tabs`: the shared rules, then each tab's own, in tab order."""
    return "\n".join([CSS, *(f"/* ---- {spec.id}: {spec.folder.name}/{spec.css} ---- */\n{spec.css_text()}"
                              for spec in tabs if spec.css)])
