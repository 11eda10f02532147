"""The Impact tab (HAPACT): when a person is hit in a clip, and where on the body.

layout.py lays out and wires the components, handlers/ answers the events with the typed views
of views.py, session.py holds the tab's data and what one browser session owns; `python -m components.impact.ui` runs the tab
alone.
"""
from components.impact.ui.layout import build_tab, warm

__all__ = ["build_tab", "warm"]
