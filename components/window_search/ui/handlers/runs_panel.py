"""Window search's "What the runs answered" panel: every run's interval on the picked query, under
its ground truth (HTML from components/window_search/runs_view.py). The run files are read once
per (data folder, --runs folders) on a background thread; while they load the panel says so and a
timer asks again (the panel counts the files read: "Reading run files… 12 of 30")."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import gradio as gr

from components.window_search.spec import SPEC
from components.common.runs import RunsLoader, reading_line, runs_loader
from components.window_search import runs_view
from components.window_search.runs import GroundingRuns, grounding_runs_loader
from components.window_search.ui.session import WindowSearchResources, WindowSearchSession, WindowSearchTab
from components.window_search.ui.views import RunsPanelView


def loader_for(data_dir: str | Path, named: Sequence[str] = ()) -> RunsLoader:
    return runs_loader(SPEC.data, data_dir, named, lambda: grounding_runs_loader(data_dir, named))


def query_panel(tab: WindowSearchTab, data_dir: str | Path, session: WindowSearchSession | None, qid: str | None,
                named: Sequence[str] = ()) -> str:
    """The panel's HTML for `qid` (the picked query of the tab's annotation file); empty without
    one; while the run files are read, how many of them are read so far."""
    if not qid:
        return ""
    annotations = tab.annotations
    if annotations is None or qid not in {q.qid for q in annotations.queries}:
        return ""
    loader = loader_for(data_dir, named)
    table = loader.derived(annotations, lambda loaded: GroundingRuns(loaded.runs, annotations))
    if table is None:
        return runs_view.note_html(reading_line(loader), "loading")
    duration = session.movie.duration if session is not None and session.movie is not None else 0.0
    refused = [r.line() for r in loader.result().refusals]
    return runs_view.query_runs_html(table.query(qid), duration, refused)


def show(tab: WindowSearchTab, res: WindowSearchResources, session: WindowSearchSession | None, qid: str | None,
         *, data_dir: str | Path, named: Sequence[str] = ()) -> RunsPanelView:
    """The panel for the picked query, and the timer that asks again while the runs load."""
    html = query_panel(tab, data_dir, session, qid, named)
    return RunsPanelView(runs_html=html, runs_timer=gr.Timer(active="data-state='loading'" in html))
