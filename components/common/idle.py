"""An idle server uses no CPU (issue 11, "Idle is idle").

gradio's queue (6.x, `gradio/queueing.py`) polls for new events every 1 ms and for progress
updates every 10 ms, queued work or not: about 1,100 wake-ups a second, 5-6 % of a core on the
2-core development machine with no browser connected (a bare `gr.Blocks` app does the same;
scripts/bench_idle.py measures it from /proc). Here the queue keeps gradio's fast polling while it
holds or runs events and for `QUIET_AFTER_S` after, then polls every `IDLE_POLL_S`: the first click
after a quiet spell waits at most that long to be picked up. What is left of an idle server is its
wake-ups: on the development machine (a virtual machine) each wake-up of the event loop costs ~0.4
ms of CPU, mostly the kernel's. Polling every 0.05 s (progress every 0.5 s) woke it 32 times a
second, 1.15 % of a core; every 0.1 s (progress every 1 s) 12 times, 0.5 % (from /proc, the
explorer idle). The study page, where each answer's latency is measured, polls every 0.05 s.

The same queue also rebuilds its monitoring summary (a pandas DataFrame of up to 10,000 past
events, grouped by function) after every event: 5-20 ms of CPU per click once a study has run a
while, for a dashboard this app does not open. It is rebuilt every `ANALYTICS_EVERY` events here
(GRADIO_ANALYTICS_CACHE_FREQUENCY, when set, is kept).
"""
from __future__ import annotations

import os
import time
from typing import Any

QUIET_AFTER_S = 2.0
IDLE_POLL_S = 0.1           # new events, once quiet
IDLE_PROGRESS_POLL_S = 1.0  # progress updates, once quiet (there are none without a running event)
#: progress updates while busy: gradio's 10 ms sent a fast run's page ~100 redraws a second, and
#: a Stop clicked then waited 0.5-1.3 s for the page's main thread
PROGRESS_EVERY_S = 0.1
ANALYTICS_EVERY = 1000

_QUIET_CLASSES: dict[type, type] = {}


def _busy(queue: Any) -> bool:
    return len(queue) > 0 or any(job is not None for job in queue.active_jobs)


def _poll(fast_attr: str, idle_attr: str, idle: float):
    def get(queue: Any) -> float:
        now = time.monotonic()
        if _busy(queue):
            queue._quiet_last_busy = now
        if now - getattr(queue, "_quiet_last_busy", float("-inf")) < QUIET_AFTER_S:
            return queue.__dict__.get(fast_attr, 0.001)
        return queue.__dict__.get(idle_attr, idle)

    def keep(queue: Any, value: float) -> None:  # gradio's own setting stays the fast one
        queue.__dict__[fast_attr] = value

    return property(get, keep)


def quiet_when_idle(demo: Any, poll: float = IDLE_POLL_S) -> bool:
    """Slow the idle polling of `demo`'s queue to every `poll` seconds (call after
    `demo.queue(...)`). Returns False, and changes nothing, when this gradio's queue does not look
    as expected."""
    queue = getattr(demo, "_queue", None)
    if queue is None or not all(hasattr(queue, a) for a in
                                ("sleep_when_free", "progress_update_sleep_when_free", "active_jobs")):
        return False
    if "GRADIO_ANALYTICS_CACHE_FREQUENCY" not in os.environ and hasattr(queue, "ANAYLTICS_CACHE_FREQUENCY"):
        queue.ANAYLTICS_CACHE_FREQUENCY = ANALYTICS_EVERY   # (sic: gradio's spelling)
    queue.__dict__["_idle_poll"] = poll
    base = type(queue)
    if getattr(base, "_quiet_when_idle", False):
        return True
    quiet = _QUIET_CLASSES.get(base)
    if quiet is None:
        quiet = type(f"Quiet{base.__name__}", (base,), {
            "_quiet_when_idle": True,
            "sleep_when_free": _poll("_fast_sleep_when_free", "_idle_poll", IDLE_POLL_S),
            "progress_update_sleep_when_free": _poll("_fast_progress_sleep", "_idle_progress_poll",
                                                     IDLE_PROGRESS_POLL_S),
        })
        _QUIET_CLASSES[base] = quiet
    fast = queue.__dict__.pop("sleep_when_free", 0.001)
    fast_progress = queue.__dict__.pop("progress_update_sleep_when_free", 0.01)
    queue.__class__ = quiet
    queue.__dict__["_fast_sleep_when_free"] = fast
    queue.__dict__["_fast_progress_sleep"] = max(fast_progress, PROGRESS_EVERY_S)
    return True
