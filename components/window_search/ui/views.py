"""The Window search tab's views: one dataclass per event, each field named after the layout
component it fills (layout.py's namespace), so the event's outputs come from the field names
(components/common/ui.py). Every field defaults to UNCHANGED: a handler names only what it changes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.common.ui import View
from components.window_search.ui.session import WindowSearchSession


@dataclass
class MovieView(View):
    session: WindowSearchSession
    video: Any
    timeline: str
    query_pick: Any
    query: Any
    partner: str
    scrub: Any
    checklist: str
    result: str
    window_pick: Any
    memory_names: str
    refs: list
    char_pick: Any
    calls: str      # the last run's reasoning and, compared, both models' windows: cleared


@dataclass
class PageView(MovieView):
    """A page opened (maybe from a deep link): the movie view plus the movie dropdown."""

    movie_pick: Any
    poll: Any       # the preparation timer (on while the data is made)


@dataclass
class QueryView(View):
    session: WindowSearchSession
    query: Any
    partner: str
    timeline: str   # the picked query's ground truth drawn at once
    checklist: Any  # a run of another query is cleared with its bars
    result: Any
    window_pick: Any
    calls: Any


@dataclass
class RunView(View):
    session: WindowSearchSession
    timeline: str
    checklist: str
    progress: str
    result: str
    window_pick: Any
    cast: list
    frames: Any
    video: Any
    scrub: Any
    calls: str      # each role's reasoning; compared: both windows, predictions, disagreements


@dataclass
class PlayheadView(View):
    """The four views of one playhead: timeline, checklist, player, slider (and the window radio)."""

    session: WindowSearchSession
    timeline: str
    checklist: str
    video: Any
    scrub: Any
    window_pick: Any
    frames: Any


@dataclass
class ExportView(View):
    export_file: Any


@dataclass
class LoadView(View):
    session: WindowSearchSession
    video: Any
    timeline: str
    checklist: str
    result: str
    window_pick: Any
    cast: list
    query: str
    scrub: Any
    query_pick: Any   # the trace's own query, ground truth and partner (not the one picked before)
    partner: Any
    calls: str


@dataclass
class LinkView(View):
    link: Any  # the query string (the page adds its address), in the now visible link box


@dataclass
class MemoryView(View):
    session: WindowSearchSession
    memory_names: str
    refs: list
    char_pick: Any
    confirm_row: Any    # the "remove this reference?" row, shown by Remove and hidden by every other edit
    confirm_text: str


@dataclass
class BenchView(View):
    bench_progress: str
    bench_table: Any
    bench_file: Any
