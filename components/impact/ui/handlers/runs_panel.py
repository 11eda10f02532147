"""The Impact tab's "What the runs answered" panel: every run's moments on the clip and the regions
the runs named at the frame shown (HTML from components/impact/runs_view.py). The run files are
read once per (data folder, --runs folders) on a background thread; while they load the panel says
so and a timer asks again."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import gradio as gr

from components.common.runs import RunsLoader, runs_loader
from components.impact import runs_view
from components.impact.runs import ImpactRuns, impact_runs_loader
from components.impact.ui.views import RunsPanelView


def loader_for(data_dir: str | Path, named: Sequence[str] = ()) -> RunsLoader:
    return runs_loader("impact", data_dir, named, lambda: impact_runs_loader(data_dir, named))


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
    table = loader.derived(annotations, lambda loaded: ImpactRuns(loaded.runs, annotations))
    if table is None:
        what = f"{loader.files} run files" if loader.files is not None else "the run files"
        return runs_view.note_html(f"reading {what}…", "loading")
    refused = [r.line() for r in loader.result().refusals]
    return runs_view.clip_runs_html(table.clip(item.qid), item.moments_seconds(), item.num_frames / item.fps,
                                    _frame_number(frame), refused)


def show(source, data_dir: str | Path, clip: str | None, frame, named: Sequence[str] = ()) -> RunsPanelView:
    html = clip_panel(source, data_dir, clip, frame, named)
    return RunsPanelView(runs_panel=html, runs_timer=gr.Timer(active="data-state='loading'" in html), message=None)
