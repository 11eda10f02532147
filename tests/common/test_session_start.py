"""components.common.session_start: a new gradio session builds no component's configuration
until one is read, and what is read is what gradio built before."""
from __future__ import annotations

import gradio as gr
import pytest
from gradio import blocks as gradio_blocks
from gradio.state_holder import SessionState

from components.common import session_start
from tests.helpers.live_app import free_port


def _page() -> gr.Blocks:
    with gr.Blocks() as demo:
        with gr.Tabs():
            with gr.Tab("a"):
                name = gr.Textbox(value="x", label="name")
                shout = gr.Textbox(label="shout")
            with gr.Tab("b"):
                gr.Dropdown(["p", "q"], value="q", label="pick")
                gr.Markdown("words")
        gr.Button("go").click(lambda s: gr.update(value=s.upper(), label="loud"), name, shout, api_name="go")
    return demo


def _every_config(demo: gr.Blocks) -> dict:
    config = demo.default_config
    return {k: config.config_for_block(k, [], b) for k, b in config.blocks.items() if k in demo.blocks}


@pytest.fixture
def lazy():
    assert session_start.start_sessions_lazily() is True
    assert session_start.start_sessions_lazily() is True   # once per process


def test_a_new_session_builds_no_configuration(lazy, monkeypatch):
    demo = _page()
    built = []
    real = gradio_blocks.BlocksConfig.config_for_block
    monkeypatch.setattr(gradio_blocks.BlocksConfig, "config_for_block",
                        staticmethod(lambda *a, **kw: built.append(a[0]) or real(*a, **kw)))
    session = SessionState(demo)
    assert built == [] and dict(session.config_values) == {}


def test_reading_every_component_gives_what_gradio_built(lazy):
    demo = _page()
    session = SessionState(demo)
    assert list(session.components) == [c for c in _every_config(demo).values() if c]


@pytest.mark.slow  # a live app (tests/test_slow_marks.py)
def test_a_live_page_answers_and_keeps_what_its_events_set(lazy):
    from gradio_client import Client

    demo = _page()
    demo.queue()
    demo.launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        assert client.predict("hey", api_name="/go")["value"] == "HEY"
        [session] = demo.state_holder.session_data.values()
        shout = next(b for b in demo.blocks.values() if getattr(b, "label", None) == "shout")
        saved = {c["id"]: c for c in session.components}
        assert saved[shout._id]["props"]["value"] == "HEY" and saved[shout._id]["props"]["label"] == "loud"
        assert len(saved) == len([c for c in _every_config(demo).values() if c])
    finally:
        demo.close()


def test_an_unexpected_gradio_is_left_alone(monkeypatch):
    from gradio import state_holder

    class NoComponents:
        pass

    monkeypatch.setattr(state_holder, "SessionState", NoComponents)
    assert session_start.start_sessions_lazily() is False
    assert not hasattr(NoComponents, "_starts_lazily")
