"""Work done once in the background right after the server answers, so that the first visitor's
first actions find it done: loading what a tab opens by default, importing a model API's client.
It runs after the first HTTP 200, so start-up does not wait for it (nor scan the data folder), at
the lowest CPU priority, and a task that fails changes nothing (the visitor's own action reports
the problem)."""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable

log = logging.getLogger(__name__)


def _lower_priority() -> None:
    try:  # Linux: the nice value of this thread alone
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):
        pass


def warm_in_background(tasks: Iterable[Callable[[], object]], name: str = "warm-up") -> threading.Thread:
    """Run `tasks` one after the other in a daemon thread; returns it (tests join it)."""
    todo = list(tasks)

    def run() -> None:
        _lower_priority()
        for task in todo:
            try:
                task()
            except Exception as exc:  # noqa: BLE001 - only a head start; the real action reports
                log.info("warm-up %s skipped: %s", getattr(task, "__qualname__", task), exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
