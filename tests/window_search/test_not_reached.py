"""Window search when the model is not reached (an `openai:` backend pointed at a port on
127.0.0.1 where nothing listens): the tab says "not reached: <reason>" once (the message line of
a failed search), never "unparsed", and a search stopped before any reply names no unparsed reply."""
from __future__ import annotations

import re
import threading

import pytest

import backends.openai_api as openai_api
from components.settings.session import SessionSettings
from components.window_search.data import load_annotations
from components.window_search.ui import handlers
from components.window_search.ui.session import RESOURCES, WindowSearchSession, WindowSearchTab
from tests.helpers.live_app import free_port


@pytest.fixture(scope="module")
def tab(grounding_examples) -> WindowSearchTab:
    return WindowSearchTab(load_annotations(grounding_examples / "annotations.json"))


def _text(view) -> str:
    parts = [getattr(view, name, "") for name in ("progress", "result", "checklist", "calls", "message")]
    return " ".join(re.sub(r"<[^>]+>", " ", str(p)) for p in parts)


def _search(tab, key: str, settings: dict, *, stop_after_first: bool = False):
    res = RESOURCES.get(key)
    session = handlers.pick_movie(tab, res, WindowSearchSession(), "m01", 60).session
    views = []
    for view in handlers.run(tab, res, session, settings, tab.annotations.query("p0001_t").query, 60, 3, 1, 30,
                             "aws"):
        views.append(view)
        if stop_after_first and len(views) == 1:
            threading.Timer(0.5, handlers.stop, (tab, res)).start()
    RESOURCES.release(key)
    return views[-1]


def _closed_port() -> dict:
    return SessionSettings(backend="openai:m", base_url=f"http://127.0.0.1:{free_port()}/v1",
                           api_key="sk-x").to_state()


def test_a_closed_port_reads_not_reached_once(tab, monkeypatch):
    monkeypatch.setattr(openai_api, "_sleep", lambda seconds, cancel: None)   # the transport's back-off
    last = _search(tab, "ws-not-reached", _closed_port())
    text = _text(last)
    assert "unparsed" not in text, text
    assert text.count("not reached:") == 1, text
    assert re.search(r"not reached: aws\.decompose: openai:m failed .*connection failed", last.message), last.message
    assert "source: `not reached`" in last.result


def test_a_search_stopped_before_any_reply_names_no_unparsed_reply(tab):
    # the real back-off (1 s, then 2 s) between the transport's tries: the Stop comes within it
    last = _search(tab, "ws-stopped", _closed_port(), stop_after_first=True)
    assert last.progress == "Stopped."
    assert "unparsed" not in _text(last), _text(last)
