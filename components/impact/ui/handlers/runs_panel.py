"""The Impact tab's "What the runs answered" panel: every run's moments on the clip and the regions
the runs named at the frame shown (HTML from components/impact/runs_view.py). The run files are
read once per (data folder, --runs folders) on a background thread; while they load the panel counts
them ("Reading run files… 12 of 30") and a timer asks again."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import gradio as gr

from components.impact.spec import SPEC
from components.common.runs import RunsLoader, reading_line, runs_loader
from components.impact import runs_view
from components.impact.data import ImpactAnnotations
from components.impact.runs import FrameRuns, ImpactRuns, impact_runs_loader
from components.impact.ui.session import ImpactResources, ImpactSession, ImpactTab
from components.impact.ui.views import RunsPanelView


def loader_for(data_dir: str | Path, named: Sequence[str] = ()) -> RunsLoader:
    return runs_loader(SPEC.data, data_dir, named, lambda: impact_runs_loader(data_dir, named))


def _frame_number(value) -> int:
    try:
        return max(1, int(float(value)))
    except (TypeError, ValueError):
        return 1


def runs_table(annotations: ImpactAnnotations, data_dir: str | Path, named: Sequence[str] = ()) -> ImpactRuns | None:
    """Every run's answers on these annotations (None while the run files are read)."""
    return loader_for(data_dir, named).derived(annotations, lambda loaded: ImpactRuns(loaded.runs, annotations))


def frame_runs(tab: ImpactTab, qid: str, frame: int) -> FrameRuns | None | Literal["loading"]:
    """What every run named at one frame of a clip: None where no run answered it (not an
    annotated frame, no spatial run), "loading" while the run files are read."""
    if tab.annotations is None or tab.data_dir is None:
        return None
    table = runs_table(tab.annotations, tab.data_dir, tab.runs)
    if table is None:
        return "loading"
    found = table.clip(qid).frames.get(int(frame))
    return found if found is not None and found.answers else None


def clip_panel(tab: ImpactTab, clip: str | None, frame) -> str:
    """The panel's HTML for the clip shown (`clip`: the list's value, a qid) at `frame`; empty
    without a clip of the annotation file; while the run files are read, how many are read so far."""
    annotations = tab.annotations
    item = annotations.by_qid().get(str(clip)) if annotations is not None and clip else None
    if item is None or tab.data_dir is None:
        return ""
    loader = loader_for(tab.data_dir, tab.runs)
    table = runs_table(annotations, tab.data_dir, tab.runs)
    if table is None:
        return runs_view.note_html(reading_line(loader), "loading")
    refused = [r.line() for r in loader.result().refusals]
    return runs_view.clip_runs_html(table.clip(item.qid), item.moments_seconds(), item.num_frames / item.fps,
                                    _frame_number(frame), refused)


def show(tab: ImpactTab, res: ImpactResources, session: ImpactSession, clip: str | None, frame) -> RunsPanelView:
    """The panel for the clip and frame shown, and the timer that asks again while the runs load."""
    html = clip_panel(tab, clip, frame)
    return RunsPanelView(runs_panel=html, runs_timer=gr.Timer(active="data-state='loading'" in html))
