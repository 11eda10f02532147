"""components.common.idle: gradio's queue stops polling every millisecond once it is quiet, and
still answers the next event."""
from __future__ import annotations

import time

import gradio as gr
import pytest

from components.common import idle
from tests.helpers.live_app import free_port


def test_the_queue_polls_fast_while_busy_and_slowly_once_quiet(monkeypatch):
    with gr.Blocks() as demo:
        box = gr.Textbox()
        gr.Button().click(lambda s: s.upper(), box, box, api_name="shout")
    demo.queue()
    queue = demo._queue
    fast = queue.sleep_when_free
    assert idle.quiet_when_idle(demo) is True and idle.quiet_when_idle(demo) is True
    assert queue.sleep_when_free == idle.IDLE_POLL_S  # never busy yet
    assert queue.progress_update_sleep_when_free == idle.IDLE_PROGRESS_POLL_S
    queue.active_jobs.append([object()])  # an event running
    assert queue.sleep_when_free == fast and fast < idle.IDLE_POLL_S
    queue.active_jobs.pop()
    assert queue.sleep_when_free == fast  # just finished: still fast
    monkeypatch.setattr(idle, "QUIET_AFTER_S", 0.0)
    time.sleep(0.01)
    assert queue.sleep_when_free == idle.IDLE_POLL_S


@pytest.mark.slow  # a live app (tests/test_slow_marks.py)
def test_a_quiet_app_still_answers(monkeypatch):
    from gradio_client import Client

    monkeypatch.setattr(idle, "QUIET_AFTER_S", 0.0)  # quiet from the start
    with gr.Blocks() as demo:
        box = gr.Textbox()
        gr.Button().click(lambda s: s.upper(), box, box, api_name="shout")
    demo.queue()
    assert idle.quiet_when_idle(demo)
    demo.launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        assert client.predict("idle", api_name="/shout") == "IDLE"
        assert client.predict("again", api_name="/shout") == "AGAIN"
    finally:
        demo.close()


def test_an_unexpected_queue_is_left_alone():
    class NotAQueue:
        pass

    class Demo:
        _queue = NotAQueue()

    assert idle.quiet_when_idle(Demo()) is False and type(Demo._queue) is NotAQueue


def _record() -> dict:
    return {"time": time.time(), "status": "success", "process_time": 0.01, "function": "shout",
            "session_hash": "s"}


def test_the_monitoring_summary_is_not_rebuilt_after_every_event(monkeypatch):
    monkeypatch.delenv("GRADIO_ANALYTICS_CACHE_FREQUENCY", raising=False)

    def queued() -> object:
        with gr.Blocks() as demo:
            gr.Button().click(lambda: None, None, None)
        demo.queue()
        return demo

    plain, quiet = queued(), queued()
    assert idle.quiet_when_idle(quiet)
    for demo in (plain, quiet):
        demo._queue.events_recorded = 5   # five events have finished
    summary = plain._queue.compute_analytics_summary([_record()] * 5)
    assert summary and "shout" in summary["functions"]          # gradio: rebuilt at every event
    assert quiet._queue.compute_analytics_summary([_record()] * 5) == quiet._queue.cached_event_analytics_summary
    assert "shout" not in (quiet._queue.cached_event_analytics_summary or {}).get("functions", {})
    quiet._queue.events_recorded = idle.ANALYTICS_EVERY
    assert "shout" in quiet._queue.compute_analytics_summary([_record()] * 5)["functions"]


def test_a_server_may_poll_more_often_once_quiet(monkeypatch):
    """The study page polls every 0.05 s (its answers' latency), the explorer every IDLE_POLL_S."""
    monkeypatch.setattr(idle, "QUIET_AFTER_S", 0.0)
    demos = []
    for _ in range(2):
        with gr.Blocks() as demo:
            gr.Button().click(lambda: None, None, None)
        demo.queue()
        demos.append(demo)
    assert idle.quiet_when_idle(demos[0], poll=0.05) and idle.quiet_when_idle(demos[1])
    assert demos[0]._queue.sleep_when_free == 0.05
    assert demos[1]._queue.sleep_when_free == idle.IDLE_POLL_S != 0.05
