"""Window search's "What the runs answered" panel: every run's interval on the picked query, under
its ground truth (HTML from components/window_search/runs_view.py). The run files are read once
per (data folder, --runs folders) on a background thread; while they load the panel says so and a
timer asks again."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import gradio as gr

from components.common.runs import RunsLoader, runs_loader
from components.window_search import runs_view
from components.window_search.runs import GroundingRuns, grounding_runs_loader
from components.window_search.ui.session import WindowSearchSession


def loader_for(data_dir: str | Path, named: Sequence[str] = ()) -> RunsLoader:
    return runs_loader("grounding", data_dir, named, lambda: grounding_runs_loader(data_dir, named))


def query_panel(source, data_dir: str | Path, session: WindowSearchSession | None, qid: str | None,
                named: Sequence[str] = ()) -> str:
    """The panel's HTML for `qid` (the picked query; `source`: the tab's annotation file, as
    handlers.tab_source watches it); empty without one."""
    if not qid:
        return ""
    annotations = source.get().annotations
    if annotations is None or qid not in {q.qid for q in annotations.queries}:
        return ""
    loader = loader_for(data_dir, named)
    table = loader.derived(annotations, lambda loaded: GroundingRuns(loaded.runs, annotations))
    if table is None:
        what = f"{loader.files} run files" if loader.files is not None else "the run files"
        return runs_view.note_html(f"reading {what}…", "loading")
    duration = session.movie.duration if session is not None and session.movie is not None else 0.0
    refused = [r.line() for r in loader.result().refusals]
    return runs_view.query_runs_html(table.query(qid), duration, refused)


def show(source, data_dir: str | Path, session: WindowSearchSession | None, qid: str | None,
         named: Sequence[str] = ()) -> tuple[str, gr.Timer]:
    html = query_panel(source, data_dir, session, qid, named)
    return html, gr.Timer(active="data-state='loading'" in html)
