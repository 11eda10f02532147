"""The Window search tab's handlers, one module per panel; each handler takes the tab, this
visitor's resources, the typed session and the event's inputs, and returns a view (../views.py):

- search.py      the movie, the query, a run and its checklist, the playhead, traces and links
- memory.py      the character memory: references added, removed, named, built by a model
- bench.py       the benchmark panel: every query of the annotation file, metrics after each
- runs_panel.py  what every run file answered on the query in front of you
"""
from components.window_search.ui.handlers.search import (copy_link, export, load, open_page, pick_movie, pick_query,
                                                         played, run, scrubbed, select_window, stop, timeline_click,
                                                         upload_movie, view_address)

__all__ = ["copy_link", "export", "load", "open_page", "pick_movie", "pick_query", "played", "run", "scrubbed",
           "select_window", "stop", "timeline_click", "upload_movie", "view_address"]
