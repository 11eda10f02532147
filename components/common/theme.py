"""Look of the app: theme and CSS passed to `launch()` (gradio 6)."""
from __future__ import annotations

import gradio as gr

THEME = gr.themes.Soft(primary_hue="indigo", neutral_hue="slate")

CSS = """
#app-intro h1 { margin-bottom: 0.2em; }
#app-intro ul { margin-top: 0; }
.backend-badge { font-size: 0.85em; opacity: 0.85; }
"""
