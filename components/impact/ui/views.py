"""The Impact tab's views: one dataclass per event. Each field is named after the layout
component it fills (ui/layout.py `ImpactComponents`), defaults to UNCHANGED and is set by name,
so a handler names only what it changes; an event's outputs come from the field names
(components/common/ui.py `View.components`). A field's type is what its component takes: text for
HTML and Markdown, a component for a gradio update of its properties (`gr.Slider(value=...)`),
`Update` for `gr.update(...)`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from components.common.ui import Update, View
from components.impact.ui.session import ImpactSession


@dataclass
class FrameView(View):
    """Everything that depends on (clip, frame, predictions)."""

    body3d: dict[str, Any]  # the 3D view's value (ui/body_view.py: painting, camera facing the hit), or UNCHANGED
    legend: str
    regions: str
    turntable: str | None
    turntable_msg: str
    body_note: str
    beside: str  # this frame's region reasoning and, compared, whether the two models agree


@dataclass
class ClipView(View):
    clip: gr.Dropdown   # the clip list: the clip chosen (a typed qid or query resolved) and its neighbours
    video: gr.Video
    frame: gr.Slider
    timeline: str
    body: FrameView
    status: str  # "" clears it: the last run's line was about the previous clip


@dataclass
class LoadView(View):
    """The page's first view (a deep link's clip and frame), the painted body with it."""

    clip: gr.Dropdown
    video: gr.Video
    frame: gr.Slider
    timeline: str
    body: FrameView
    status: str
    split: gr.Dropdown
    poll: gr.Timer   # the preparation timer (on while the data is made)


@dataclass
class FrameMoveView(View):
    video: gr.Video
    timeline: str
    body: FrameView


@dataclass
class CameraView(View):
    body3d: dict[str, Any]   # the 3D view's value with the camera facing the hit


@dataclass
class SeekView(View):
    video: gr.Video
    frame: gr.Slider


@dataclass
class TemporalView(View):
    session: ImpactSession
    timeline: str
    status: str


@dataclass
class SpatialView(View):
    session: ImpactSession
    body: FrameView
    status: str
    paint: Update  # the painting choice, shown once two models answered


@dataclass
class PaintView(View):
    session: ImpactSession
    body: FrameView


@dataclass
class LinkView(View):
    link: Update  # the query string (the page adds its address), in the now visible link box


@dataclass
class TurntableView(View):
    turntable: str | None
    turntable_msg: str
    render_button: Update    # its label counts the frames drawn while the view renders


@dataclass
class MetricsView(View):
    metrics: str


@dataclass
class AddressView(View):
    """The tab's hidden address box (the page puts it in the address bar): the clip and frame shown."""

    address: str
    message: str | None = None


@dataclass
class RunsPanelView(View):
    """The runs panel (it follows the clip and frame on its own event: the tab's line stays)."""

    runs_panel: str
    runs_timer: gr.Timer   # on while the run files load
    message: str | None = None
