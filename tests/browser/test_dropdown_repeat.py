"""gradio 6.31's Dropdown sends `input` twice for one click on an option (the click, then the blur
it causes); the tabs' pickers (a movie, a query, a clip, a question) drop the copy
(TabEvents drop_repeat, Resources.repeated), so one choice runs its handler once."""
from __future__ import annotations

import socket

import gradio as gr
import pytest

from components.common.page import LAUNCH_OPTIONS
from components.common.sessions import Resources, SessionRegistry
from components.common.ui import TabEvents
from tests.browser.conftest import idle
from tests.common.test_views import Shown


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def pickers():
    calls: list[tuple[str, str]] = []

    def picked(name):
        def handler(tab, res, qid):
            calls.append((name, qid))
            return Shown(shown=f"{name}: {qid}")
        handler.__qualname__ = f"picked_{name}"
        return handler

    with gr.Blocks() as demo:
        message = gr.Markdown(elem_id="message")
        guarded = gr.Dropdown(["q1", "q2", "q3"], value="q1", elem_id="guarded")
        plain = gr.Dropdown(["q1", "q2", "q3"], value="q1", elem_id="plain")
        shown = gr.Textbox(elem_id="shown")
        events = TabEvents(None, SessionRegistry(Resources), message, components={"shown": shown})
        events.on(guarded.input, picked("guarded"), [guarded], Shown, drop_repeat=True)
        events.on(plain.input, picked("plain"), [plain], Shown)
    demo.queue()
    demo.launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True,
                **LAUNCH_OPTIONS)
    yield demo.local_url, calls
    demo.close()


def choose(page, dropdown: str, option: str) -> None:
    page.locator(f"#{dropdown} input").click()
    page.get_by_role("option", name=option).click()
    page.wait_for_function("(v) => document.querySelector('#shown textarea').value.endsWith(v)", arg=option)
    idle(page)   # the copy, if any, has been answered
    page.wait_for_function("() => !document.querySelector('[role=\"option\"]')")   # the list has closed


def test_one_click_on_an_option_runs_the_picker_once(browser, pickers):
    url, calls = pickers
    page = browser.new_page()
    try:
        page.goto(url, wait_until="load")
        page.wait_for_selector("#guarded input")
        choose(page, "plain", "q2")
        # gradio's own behaviour, which drop_repeat is for: if this fails, gradio sends one input
        # per choice now and the repeat guard can go
        assert calls == [("plain", "q2"), ("plain", "q2")]
        calls.clear()
        choose(page, "guarded", "q2")
        choose(page, "guarded", "q3")
        choose(page, "guarded", "q2")
        assert calls == [("guarded", "q2"), ("guarded", "q3"), ("guarded", "q2")]
        assert page.locator("#shown textarea").input_value() == "guarded: q2"
    finally:
        page.close()
