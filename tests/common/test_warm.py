"""components/common/warm.py and the start-up head start it runs (app.warm_up_tasks)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import app
from components.common.warm import warm_in_background

from components.cloze.ui.session import ClozeTab  # noqa: E402
from components.common.sessions import Resources  # noqa: E402

TAB, RES = ClozeTab(""), Resources()

ROOT = Path(__file__).resolve().parents[2]


def test_tasks_run_in_order_in_a_low_priority_thread_and_a_failure_skips_only_itself():
    ran: list = []

    def fails():
        ran.append("fails")
        raise RuntimeError("no data folder")

    def nice():
        ran.append(("nice", threading.current_thread().name, os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))

    thread = warm_in_background([lambda: ran.append("first"), fails, nice])
    thread.join(30)
    assert not thread.is_alive() and thread.daemon
    assert ran[:2] == ["first", "fails"]
    assert ran[2][:2] == ("nice", "warm-up") and ran[2][2] >= os.getpriority(os.PRIO_PROCESS, 0)


def test_the_api_client_is_imported_by_the_head_start_and_not_before():
    code = ("import sys, app\n"
            "from backends.registry import preload\n"
            "assert 'openai' not in sys.modules, 'imported at start'\n"
            "preload('openai')\n"
            "assert 'openai' in sys.modules and 'openai.types.chat' in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_cloze_head_start_reads_the_default_folder_and_draws_the_first_questions(example_data_dir, monkeypatch):
    from components.cloze import data as layout, frames
    from components.cloze.ui import handlers as h
    from components.cloze.ui.handlers import question
    from components.cloze.ui.session import ClozeSession

    layout.DATASETS.clear()    # a process that has read nothing yet (the warm-up fills the app's own)
    frames.FRAMES.clear()
    question.SETS.clear()
    tasks = app.warm_up_tasks(example_data_dir)
    assert len(tasks) == 4      # each tab's (window search, cloze, impact), then the API client's
    warm_in_background(tasks[1:2]).join(300)
    frames._prefetcher.submit(lambda: None).result(120)
    assert len(layout.DATASETS) == 1 and len(question.SETS) == 2     # study order and model order
    grids = [k for k in frames.FRAMES.made if k[-3] == "grid"]   # (identity..., kind, n, max_height)
    assert len(grids) >= 6                                             # a first question's six clips
    loads = []
    monkeypatch.setattr(layout, "load_dataset", lambda path: loads.append(path))
    view = h.load_root(TAB, RES, ClozeSession(data_dir=str(example_data_dir)), "cloze")   # a visitor's tab load
    assert loads == [] and "stems" in view.status
