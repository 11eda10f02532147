"""The Cloze tab's handlers, one module per panel; each handler takes the tab, this visitor's
resources, the typed session and the event's inputs, and returns a view (../views.py):

- question.py      the question on screen (shared): its set, clips, progress, drawing ahead
- practice.py      the practice playthrough: Start / resume, answers, navigation, export
- model_panel.py   a backend answers the question or the set; order sensitivity
- compare_panel.py the leaderboard and human vs model
- source_panel.py  the data folder, an uploaded zip, building an instance from a video
- page.py          the mode's panels, deep links, copying a link, the start-up head start
"""
from components.cloze.ui.handlers.compare_panel import open_run, pick_run, refresh, show_run
from components.cloze.ui.handlers.model_panel import (frame_cap, order_sensitivity, run_one, run_whole_set, runs_dir,
                                                      solver_settings, stop, visitor_runs_dir)
from components.cloze.ui.handlers.page import (copy_link, draw_first_ahead, mode_view, open_link, open_page,
                                               order_questions, pick_mode, view_address, warm)
from components.cloze.ui.handlers.practice import (choose, clock_timer, export_csv,
                                                   export_json, navigate, next_question, previous_question, redisplay,
                                                   runs_shut, start, submit, tick)
from components.cloze.ui.handlers.question import PAPER_FRAMES, clip_views, practice_dir, questions_for, render
from components.cloze.ui.handlers.source_panel import build, load_root, requested_gap, upload

__all__ = ["PAPER_FRAMES", "build", "choose", "clip_views", "clock_timer", "copy_link", "draw_first_ahead", "export_csv",
           "export_json", "frame_cap", "load_root", "mode_view", "navigate", "next_question", "open_link",
           "open_page", "order_questions", "order_sensitivity", "pick_mode", "practice_dir", "previous_question", "questions_for",
           "open_run", "pick_run", "redisplay", "refresh", "render", "requested_gap", "run_one", "run_whole_set",
           "runs_dir", "runs_shut", "show_run",
           "solver_settings", "start", "stop", "submit", "tick", "upload", "view_address", "visitor_runs_dir", "warm"]
