"""Window search's "What the runs answered" panel: every run's interval on the picked query, under
its ground truth (HTML from components/window_search/runs_view.py). The run files are read once
per (data folder, --runs folders) on a background thread; while they load the panel says so and a
timer asks again."""
from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import gradio as gr

from components.common.runs import BackgroundRuns, ContentCache, find_run_files, load_runs, named_runs_folders
from components.window_search import runs_view
from components.window_search.runs import GROUNDING_READER, GroundingRuns, grounding_runs_folders
from components.window_search.ui.session import WindowSearchSession


class GroundingRunsLoader:
    """The run files of one data folder and named folders, read on a thread; `files`: how many
    were found (None until listed)."""

    def __init__(self, data_dir: str | Path, named: Sequence[str] = ()):
        self.files: int | None = None
        self._tables: dict[int, GroundingRuns] = {}
        self._background = BackgroundRuns(lambda: self._load(data_dir, named)).start()

    def _load(self, data_dir, named):
        files, refusals = find_run_files(GROUNDING_READER, grounding_runs_folders(data_dir),
                                         named_runs_folders(named), empty_ok=True)
        self.files = len(files)
        return load_runs(GROUNDING_READER, files, ContentCache(), refusals)

    def result(self):
        return self._background.result()

    def table(self, annotations) -> GroundingRuns | None:
        """The table on this annotation file (kept per file object), None while loading."""
        loaded = self.result()
        if loaded is None:
            return None
        key = id(annotations)
        if key not in self._tables:
            self._tables = {key: GroundingRuns(loaded.runs, annotations)}
        return self._tables[key]


_loaders: dict[tuple, GroundingRunsLoader] = {}
_lock = threading.Lock()


def loader_for(data_dir: str | Path, named: Sequence[str] = ()) -> GroundingRunsLoader:
    key = (str(data_dir), tuple(named))
    with _lock:
        if key not in _loaders:
            _loaders[key] = GroundingRunsLoader(data_dir, named)
        return _loaders[key]


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
    table = loader.table(annotations)
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
