"""The Window search tab's views: one dataclass per event, each field named after the layout
component it fills (layout.py's namespace), so the event's outputs come from the field names
(components/common/ui.py). Every field defaults to UNCHANGED: a handler names only what it changes.
A field's type is what its component takes: text for HTML and Markdown, `Update` for a gradio
update of a component's properties (`gr.update(choices=..., value=...)`), a gallery's
(image, caption) list."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from components.common.ui import Update, View
from components.window_search.ui.session import WindowSearchSession

#: a gallery's value: (image path, caption) pairs
Gallery = list[tuple[str, str]]


@dataclass
class MovieView(View):
    session: WindowSearchSession
    video: Update   # the player: the movie, at the playhead
    timeline: str
    query_pick: Update
    query: str
    partner: str
    scrub: Update
    checklist: str
    result: str
    window_pick: Update
    memory_names: str
    refs: Gallery
    char_pick: Update
    calls: str      # the last run's reasoning and, compared, both models' windows: cleared


@dataclass
class PageView(MovieView):
    """A page opened (maybe from a deep link): the movie view plus the movie dropdown."""

    movie_pick: Update
    poll: gr.Timer   # the preparation timer (on while the data is made)


@dataclass
class QueryView(View):
    session: WindowSearchSession
    query: str
    partner: str
    timeline: str   # the picked query's ground truth drawn at once
    checklist: str  # a run of another query is cleared with its bars
    result: str
    window_pick: Update
    calls: str


@dataclass
class RunView(View):
    session: WindowSearchSession
    timeline: str
    checklist: str
    progress: str
    result: str
    window_pick: Update
    cast: Gallery
    frames: Gallery
    video: Update
    scrub: Update
    calls: str      # each role's reasoning; compared: both windows, predictions, disagreements


@dataclass
class PlayheadView(View):
    """The four views of one playhead: timeline, checklist, player, slider (and the window radio)."""

    session: WindowSearchSession
    timeline: str
    checklist: str
    video: Update
    scrub: Update
    window_pick: Update
    frames: Gallery


@dataclass
class SelectionView(View):
    """A gallery item selected (a reference to remove, a frame to add): remembered in the session."""

    session: WindowSearchSession


@dataclass
class ExportView(View):
    export_file: Update


@dataclass
class LoadView(View):
    session: WindowSearchSession
    video: Update
    timeline: str
    checklist: str
    result: str
    window_pick: Update
    cast: Gallery
    query: str
    scrub: Update
    query_pick: Update   # the trace's own query, ground truth and partner (not the one picked before)
    partner: str
    calls: str


@dataclass
class LinkView(View):
    link: Update  # the query string (the page adds its address), in the now visible link box


@dataclass
class MemoryView(View):
    session: WindowSearchSession
    memory_names: str
    refs: Gallery
    char_pick: Update
    confirm_row: Update    # the "remove this reference?" row, shown by Remove and hidden by every other edit
    confirm_text: str


@dataclass
class BenchView(View):
    bench_progress: str
    bench_table: list[list]
    bench_file: str


@dataclass
class BaselineView(View):
    """The label under the stage naming the session's backend (the Model panel's Apply)."""

    baseline_md: str
    message: str | None = None   # another event's line is left as it is


@dataclass
class RunsPanelView(View):
    """The runs panel: what every run answered on the picked query (handlers/runs_panel.py)."""

    runs_html: str
    runs_timer: gr.Timer   # on while the run files load
    message: str | None = None   # it follows the query on its own event: the tab's line stays
