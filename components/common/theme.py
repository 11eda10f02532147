"""Look of the app: theme and CSS passed to `launch()` (gradio 6)."""
from __future__ import annotations

import gradio as gr

THEME = gr.themes.Soft(primary_hue="indigo", neutral_hue="slate")

CSS = """
#app-intro h1 { margin-bottom: 0.2em; }
#app-intro ul { margin-top: 0; }
.backend-badge { font-size: 0.85em; opacity: 0.85; }
/* presentation mode (components/common/page.py): large type and media, configuration folded away */
body.present .gradio-container {max-width: 100% !important; font-size: 1.3rem;}
body.present .gradio-container button, body.present .gradio-container input,
body.present .gradio-container label {font-size: 1.1rem;}
body.present #app-intro, body.present #settings-panel {display: none !important;}
body.present video {max-height: 62vh;}
#app-present {max-width: 22em;}
/* Cloze tab: its one message line stays in view while it says something; on a phone the answer
   letters stay at the bottom of the screen while the clips scroll under them */
#cloze-message p {color: #cf222e; font-weight: 600; margin: 0;}
/* clip, not hidden: an ancestor that hides overflow would keep position: sticky from sticking */
.gradio-container:has(#cloze-message), #cloze-question, #cloze-question > .styler {overflow: clip !important;}
#cloze-message:has(p) {position: sticky; top: 0; z-index: 30; background: var(--background-fill-primary);}
@media (min-width: 641px) {  /* a question's six clips and its letters fit a laptop screen */
  #cloze-question img {max-height: 25vh; object-fit: contain;}
}
@media (max-width: 640px) {
  #cloze-answer {position: sticky; bottom: 0; z-index: 20; background: var(--background-fill-primary);}
  #cloze-answer button {min-height: 48px; font-size: 18px;}
}
"""
