"""The Impact tab's handlers, one module per panel; each handler takes the tab, this visitor's
resources, the typed session and the event's inputs, and returns a view (../views.py):

- clip.py        the clip, its frame, the painted body, the model runs and the metrics
- runs_panel.py  what every run file answered on the clip and frame in front of you
"""
from components.impact.ui.handlers.clip import (copy_link, on_clip, on_frame, on_load, on_timeline_click,
                                                render_turntable, reset_view, run_spatial, run_temporal, set_metrics,
                                                set_paint, set_runs_heat, stop)

__all__ = ["copy_link", "on_clip", "on_frame", "on_load", "on_timeline_click", "render_turntable", "reset_view",
           "run_spatial", "run_temporal", "set_metrics", "set_paint",
           "set_runs_heat", "stop"]
