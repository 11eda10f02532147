"""Each event shows its busy state on one component (components/common/progress.py)."""
from __future__ import annotations

import gradio as gr

from components.common.progress import busy_on_one_component
from components.common.ui import message_line


def _page():
    with gr.Blocks() as demo:
        state = gr.State(0)
        line = message_line("t-message")
        box, other = gr.Textbox(elem_id="t-box"), gr.Textbox(elem_id="t-other")
        button = gr.Button("go")
        writes_line = button.click(lambda s: (s, "a", "b", ""), state, [state, box, other, line])
        quiet = button.click(lambda: "x", None, box, show_progress="hidden")
        loud = button.click(lambda: ("x", "y"), None, [other, box])
        states_only = button.click(lambda s: s, state, state)
        named = button.click(lambda: ("x", ""), None, [box, line], show_progress_on=[other])
    return demo, line, box, other, (writes_line, quiet, loud, states_only, named)


def _on(demo, event) -> list:
    return demo.fns[event["id"]].show_progress_on


def test_an_event_writing_the_message_line_shows_its_busy_state_there_alone():
    demo, line, *_, events = _page()
    busy_on_one_component(demo)
    assert _on(demo, events[0]) == [line]


def test_other_events_use_their_first_drawn_output_or_nothing_when_their_progress_is_hidden():
    demo, line, box, other, events = _page()
    busy_on_one_component(demo)
    assert _on(demo, events[1]) == []
    assert _on(demo, events[2]) == [other]
    assert _on(demo, events[3]) == []          # a State is not drawn on the page


def test_a_target_the_event_names_itself_is_kept():
    demo, line, box, other, events = _page()
    busy_on_one_component(demo)
    assert _on(demo, events[4]) == [other]


def test_the_page_config_names_the_targets_so_the_browser_tracks_a_handful():
    demo, line, box, other, _ = _page()
    busy_on_one_component(demo)
    targets = {i for dep in demo.get_config_file()["dependencies"] for i in dep["show_progress_on"]}
    assert targets == {line._id, other._id}


def test_an_event_with_a_progress_bar_shows_it_on_its_view_not_on_the_message_line():
    with gr.Blocks() as demo:
        line = message_line("t-message")
        with gr.Row() as row:
            view = gr.Markdown(elem_id="t-view")
        button = gr.Button("go")

        def long_run(progress=gr.Progress()):
            return "done", ""

        event = button.click(long_run, None, [view, line])
        layout_first = button.click(lambda: ("x", ""), None, [row, view])
    busy_on_one_component(demo)
    assert demo.fns[event["id"]].tracks_progress
    assert _on(demo, event) == [view]
    assert _on(demo, layout_first) == [view]      # a Row draws no busy state of its own


def test_a_tab_handler_given_a_progress_bar_gets_one_gradio_tracks():
    # gradio hands a gr.Progress only to a positional parameter; a keyword-only one stays a
    # silent default and the run shows no bar
    from components.common.sessions import Resources, SessionRegistry
    from components.common.ui import TabEvents
    from tests.common.test_views import Done

    seen = []

    def handler(tab, res, value, *, progress=None):
        seen.append(progress)
        progress((1, 2), desc="steps")
        return Done(value=value)

    with gr.Blocks() as demo:
        line = message_line("t-message")
        box = gr.Textbox()
        events = TabEvents({}, SessionRegistry(Resources), line, components={"value": box})
        event = events.on(gr.Button("go").click, handler, [box], Done, kind="progress")
    assert demo.fns[event["id"]].tracks_progress
    # and the bar gradio puts before the inputs reaches the handler, the inputs after it
    bar = gr.Progress()
    bar.track = lambda *a, **k: None
    assert demo.fns[event["id"]].fn(None, bar, "v") == ["v", ""]
    assert seen == [bar]
