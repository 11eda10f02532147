"""The Cloze tab's UI: `build_tab(ctx)` (app.py) lays out layout.py; handlers/ holds the handlers
(one module per panel), views.py their views, session.py the per-session state; `warm(data_dir)` is its start-up head start. `python -m
components.cloze.ui` runs the tab alone."""
from components.cloze.ui.handlers.page import warm
from components.cloze.ui.layout import build_tab

__all__ = ["build_tab", "warm"]
