"""The Window search tab: `build_tab(ctx)` lays it out (layout.py) and wires the handlers
(handlers/, returning the views of views.py) to the per-session state (session.py). `python -m components.window_search.ui` runs
it alone."""
from components.window_search.ui.layout import build_tab, warm

__all__ = ["build_tab", "warm"]
