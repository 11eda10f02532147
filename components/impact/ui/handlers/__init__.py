"""The Impact tab's handlers, one module per panel; each handler takes the tab, this visitor's
resources, the typed session and the event's inputs, and returns a view (../views.py):

- clip.py        the clip picked or typed, and the page's first view (a deep link's clip and frame)
- frame.py       the frame slider and box, the timeline under the player, Copy link
- body.py        the painted body: 3D view, legend, regions line, Face the hit, the two models'
                 painting, the runs' heat, the rotating view (Render turntable)
- model_runs.py  Run temporal, Run spatial (one model or two compared), Stop
- metrics.py     the metrics for a split, beside the paper's rows
- runs_panel.py  what every run file answered on the clip and frame in front of you
"""
from components.impact.ui.handlers.body import render_turntable, reset_view, set_paint, set_runs_heat
from components.impact.ui.handlers.clip import on_clip, on_load
from components.impact.ui.handlers.frame import copy_link, follow_address, on_frame, on_timeline_click
from components.impact.ui.handlers.metrics import set_metrics
from components.impact.ui.handlers.model_runs import run_spatial, run_temporal, stop

__all__ = ["copy_link", "follow_address", "on_clip", "on_frame", "on_load", "on_timeline_click", "render_turntable", "reset_view",
           "run_spatial", "run_temporal", "set_metrics", "set_paint",
           "set_runs_heat", "stop"]
