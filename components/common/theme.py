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
"""
