"""The shared single-flight LRU (components/base/lru.py) and the per-visitor registry
(components/common/sessions.py)."""
from __future__ import annotations

import threading
import time

from components.base.lru import SingleFlightLRU
from components.common.sessions import Resources, SessionRegistry


def test_a_value_asked_for_at_once_by_many_is_computed_once():
    cache: SingleFlightLRU[str, int] = SingleFlightLRU(4)
    calls, gate = [], threading.Event()

    def compute():
        calls.append(1)
        gate.wait(5)
        return 42

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("k", compute))) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join(5)
    assert results == [42] * 8 and len(calls) == 1


def test_the_least_recently_used_goes_first_and_is_handed_to_on_evict():
    evicted = []
    cache: SingleFlightLRU[str, str] = SingleFlightLRU(2, on_evict=evicted.append)
    cache.get("a", lambda: "A")
    cache.get("b", lambda: "B")
    cache.get("a", lambda: "never")       # a is now the most recent
    cache.get("c", lambda: "C")
    assert evicted == ["B"] and "a" in cache and "b" not in cache and len(cache) == 2
    assert cache.peek("b") is None and cache.peek("a") == "A"
    assert sorted(cache.clear()) == ["A", "C"] and len(cache) == 0


def test_a_failed_computation_leaves_nothing_and_the_next_caller_computes():
    cache: SingleFlightLRU[str, int] = SingleFlightLRU(2)

    def boom():
        raise ValueError("no")

    try:
        cache.get("k", boom)
    except ValueError:
        pass
    assert "k" not in cache and not cache.being_made("k")
    assert cache.get("k", lambda: 7) == 7


def test_a_closing_page_stops_its_work_and_removes_its_folders_only_after_it_ended(tmp_path):
    registry: SessionRegistry[Resources] = SessionRegistry(Resources)
    res = registry.get("visitor")
    folder = tmp_path / "runs" / "visitor"
    folder.mkdir(parents=True)
    res.folders.append(folder)
    written = []

    def run():
        with res.working() as stop:
            while not stop.is_set():
                time.sleep(0.01)
            time.sleep(0.3)                       # the last answer is still being written
            (folder / "R.json").write_text("{}")   # the folder must still be there
            written.append(True)

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(0.05)
    registry.release("visitor")                   # returns once the work ended, then removes
    worker.join(5)
    assert written == [True] and not folder.exists() and "visitor" not in registry


def test_the_registry_forgets_the_oldest_session_beyond_its_size_without_stopping_it():
    closed = []

    class Kept(Resources):
        def close(self) -> None:
            closed.append(self)

    registry: SessionRegistry[Kept] = SessionRegistry(Kept, max_sessions=2)
    first = registry.get("a")
    registry.get("b")
    registry.get("c")
    assert closed == [first] and not first.stop.is_set() and len(registry) == 2
    assert registry.get("b") is registry.get("b")


def test_a_watched_file_is_read_once_and_again_when_it_changes_or_appears(tmp_path):
    import os

    from components.common.watched import WatchedFile

    path = tmp_path / "annotations.json"
    reads = []

    def load():
        reads.append(1)
        return path.read_text() if path.exists() else None

    watched = WatchedFile(path, load)
    assert watched.get() is None and watched.get() is None and len(reads) == 1   # missing, read once
    path.write_text("one")
    assert watched.get() == "one" and len(reads) == 2                               # it appeared
    assert watched.get() == "one" and len(reads) == 2
    path.write_text("two!")
    os.utime(path, ns=(1, 2))
    assert watched.get() == "two!" and len(reads) == 3                              # it changed


def test_an_error_line_escapes_html_but_keeps_code_spans_as_typed():
    from backends.errors import BackendError
    from components.common.ui import error_line

    line = error_line(BackendError("No call for <task>; record one with `--record <trace.jsonl>`."))
    assert line == "⚠ No call for &lt;task&gt;; record one with `--record <trace.jsonl>`."
    assert error_line(BackendError("a ` b <c>")) == "⚠ a ` b &lt;c&gt;"


def test_an_event_with_only_the_message_line_returns_its_value_not_a_list():
    """gradio takes a list returned for one output as that output's value: Stop (no outputs but
    the message line) must return the line itself."""
    from types import SimpleNamespace

    from components.base.errors import UserError
    from components.common.sessions import Resources, SessionRegistry
    from components.common.ui import TabEvents, View

    class Nothing(View):   # a view that changes no component: the line is the event's one output
        pass

    events = TabEvents(None, SessionRegistry(Resources), message=None)
    request = SimpleNamespace(session_hash="one-output")

    def stop(tab, res, session):
        res.stop.set()
        return Nothing()

    def refuse(tab, res, session):
        raise UserError("Nothing runs.")

    assert events.fn(stop, Nothing)(request, None) == ""
    assert events.fn(refuse, Nothing)(request, None) == "⚠ Nothing runs."
    assert events.registry.get("one-output").stop.is_set()


def test_a_stop_pressed_just_before_a_run_started_stops_it_and_an_old_one_does_not():
    from components.common import sessions
    from components.common.sessions import Resources

    res = Resources()
    res.ask_stop()                      # pressed while the run's request was still on its way
    assert res.fresh_stop().is_set()    # the run sees it at its first step
    res._stop_asked -= sessions.STOP_GRACE_S + 1   # the same Stop, for work that ended long ago
    assert not res.fresh_stop().is_set()
    assert not Resources().fresh_stop().is_set()   # never pressed


def test_a_stop_that_stopped_a_run_does_not_stop_the_next_one():
    from components.common import sessions
    from components.common.sessions import Resources

    res = Resources()
    with res.working():                 # a run going
        stop = res.fresh_stop()
        res.ask_stop()                  # the visitor stops it
        assert stop.is_set()
    assert not res.fresh_stop().is_set()   # Run again at once: it runs
    with res.working():
        res.fresh_stop()
    res.ask_stop()                      # pressed as the run ended on its own: for that run
    assert not res.fresh_stop().is_set()
    res._last_end -= sessions.STOP_GRACE_S + 1
    res.ask_stop()                      # nothing ran for a while: for the run about to start
    assert res.fresh_stop().is_set()
    assert not res.fresh_stop().is_set()   # used once


def test_a_run_with_a_progress_bar_counts_as_running_work_while_it_runs(tmp_path):
    import gradio as gr

    from components.common.sessions import Resources, SessionRegistry
    from components.common.ui import TabEvents
    from tests.common.test_views import Done

    seen = []

    def run(tab, res, progress=None):
        seen.append(res.busy)
        return Done(value="done")

    def stream(tab, res):
        seen.append(res.busy)
        yield Done(value="step")

    with gr.Blocks():
        events = TabEvents(None, SessionRegistry(Resources), gr.Markdown())
    request = type("Request", (), {"session_hash": "runner", "query_params": {}})()
    events.fn(run, Done, kind="progress")(request)
    list(events.fn(stream, Done)(request))
    assert seen == [True, True] and not events.registry.get("runner").busy


def test_a_copy_of_the_last_event_is_a_repeat_within_the_window_and_a_new_choice_is_not(monkeypatch):
    from components.common import sessions
    from components.common.sessions import Resources

    clock = [100.0]
    monkeypatch.setattr(sessions.time, "monotonic", lambda: clock[0])
    res = Resources()
    state = object()
    assert not res.repeated("pick", (state, "q1"))
    assert res.repeated("pick", (object(), "q1"))      # the copy: a state copy of its own, same choice
    assert not res.repeated("pick", (state, "q2"))     # another choice
    assert not res.repeated("other", (state, "q2"))    # another event with the same value
    assert not res.repeated("pick", (state, "q2"))
    clock[0] += sessions.REPEAT_WINDOW_S + 0.01
    assert not res.repeated("pick", (state, "q2"))     # the same choice again, a moment later


def test_an_event_that_drops_repeats_answers_the_copy_with_no_change():
    from types import SimpleNamespace

    from components.common.sessions import Resources, SessionRegistry
    from components.common.ui import SKIP, TabEvents
    from tests.common.test_views import Done

    calls = []

    def pick(tab, res, session, qid):
        calls.append(qid)
        return Done(value=qid)

    events = TabEvents(None, SessionRegistry(Resources), message=None)
    fn = events.fn(pick, Done, drop_repeat=True)
    one, other = SimpleNamespace(session_hash="a"), SimpleNamespace(session_hash="b")
    assert fn(one, None, "q1") == ["q1", ""]
    assert fn(one, None, "q1") == [SKIP, SKIP]
    assert fn(other, None, "q1") == ["q1", ""]      # another visitor's choice is its own
    assert fn(one, None, "q2") == ["q2", ""]
    assert calls == ["q1", "q1", "q2"]
    plain = events.fn(pick, Done)
    assert plain(one, None, "q2") == ["q2", ""]     # without drop_repeat every call runs
