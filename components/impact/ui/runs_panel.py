"""The Impact tab's "What the runs answered" panel: every run's moments on the clip and the regions
the runs named at the frame shown (HTML from components/impact/runs_view.py). The run files are
read once per (data folder, --runs folders) on a background thread; while they load the panel says
so and a timer asks again."""
from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import gradio as gr

from components.common.runs import BackgroundRuns, ContentCache, find_run_files, load_runs, named_runs_folders
from components.impact import runs_view
from components.impact.runs import IMPACT_READER, ImpactRuns, impact_runs_folders


class ImpactRunsLoader:
    """The run files of one data folder and named folders, read on a thread; `files`: how many
    were found (None until listed)."""

    def __init__(self, data_dir: str | Path, named: Sequence[str] = ()):
        self.files: int | None = None
        self._tables: dict[int, ImpactRuns] = {}
        self._background = BackgroundRuns(lambda: self._load(data_dir, named)).start()

    def _load(self, data_dir, named):
        files, refusals = find_run_files(IMPACT_READER, impact_runs_folders(data_dir), named_runs_folders(named),
                                         empty_ok=True)
        self.files = len(files)
        return load_runs(IMPACT_READER, files, ContentCache(), refusals)

    def result(self):
        return self._background.result()

    def table(self, annotations) -> ImpactRuns | None:
        loaded = self.result()
        if loaded is None:
            return None
        key = id(annotations)
        if key not in self._tables:
            self._tables = {key: ImpactRuns(loaded.runs, annotations)}
        return self._tables[key]


_loaders: dict[tuple, ImpactRunsLoader] = {}
_lock = threading.Lock()


def loader_for(data_dir: str | Path, named: Sequence[str] = ()) -> ImpactRunsLoader:
    key = (str(data_dir), tuple(named))
    with _lock:
        if key not in _loaders:
            _loaders[key] = ImpactRunsLoader(data_dir, named)
        return _loaders[key]


def _frame_number(value) -> int:
    try:
        return max(1, int(float(value)))
    except (TypeError, ValueError):
        return 1


def clip_panel(source, data_dir: str | Path, clip: str | None, frame, named: Sequence[str] = ()) -> str:
    """The panel's HTML for the clip shown (`clip`: the list's value, a qid) at `frame`; empty
    without a clip of the annotation file."""
    annotations = source.get().annotations
    item = annotations.by_qid().get(str(clip)) if annotations is not None and clip else None
    if item is None:
        return ""
    loader = loader_for(data_dir, named)
    table = loader.table(annotations)
    if table is None:
        what = f"{loader.files} run files" if loader.files is not None else "the run files"
        return runs_view.note_html(f"reading {what}…", "loading")
    refused = [r.line() for r in loader.result().refusals]
    return runs_view.clip_runs_html(table.clip(item.qid), item.moments_seconds(), item.num_frames / item.fps,
                                    _frame_number(frame), refused)


def show(source, data_dir: str | Path, clip: str | None, frame, named: Sequence[str] = ()) -> tuple[str, gr.Timer]:
    html = clip_panel(source, data_dir, clip, frame, named)
    return html, gr.Timer(active="data-state='loading'" in html)
