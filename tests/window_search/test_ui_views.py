"""The tab's views by named fields (components/common/ui.py): no view is built from positions, a
handler names only what it changes (the rest goes out as gr.skip()), and each event's outputs are
the layout's components named like its view's fields, in their order, then the message line and
the address box (the order API clients read them in)."""
from __future__ import annotations

import dataclasses

import pytest

gr = pytest.importorskip("gradio")

from components.common.ui import SKIP, UNCHANGED, TabContext, outputs  # noqa: E402
from components.window_search.data import load_annotations  # noqa: E402
from components.window_search.ui import handlers, layout, views  # noqa: E402
from components.window_search.ui.session import WindowSearchResources, WindowSearchSession  # noqa: E402
from components.window_search.ui.session import WindowSearchTab  # noqa: E402

VIEWS = [views.MovieView, views.PageView, views.QueryView, views.RunView, views.PlayheadView, views.ExportView,
         views.LoadView, views.LinkView, views.MemoryView, views.BenchView]


@pytest.fixture(scope="module")
def tab(grounding_examples) -> WindowSearchTab:
    return WindowSearchTab(load_annotations(grounding_examples / "annotations.json"))


def _position(view_type: type, name: str) -> int:
    return [f.name for f in dataclasses.fields(view_type) if f.name != "message"].index(name)


@pytest.mark.parametrize("view_type", VIEWS, ids=lambda v: v.__name__)
def test_no_view_is_built_from_positions_and_an_empty_one_changes_nothing(view_type):
    with pytest.raises(TypeError):
        view_type(WindowSearchSession())
    assert outputs(view_type()) == [SKIP] * view_type.size()


def test_a_picked_query_without_a_run_names_only_the_query_its_partner_and_the_timeline(tab):
    res = WindowSearchResources()
    session = handlers.pick_movie(tab, res, WindowSearchSession(), "m01", 180).session
    picked = handlers.pick_query(tab, res, session, "p0002_t")
    assert picked.query == "Mary waves in the kitchen." and "ws-tl" in picked.timeline
    assert picked.checklist is picked.result is picked.window_pick is picked.calls is UNCHANGED
    sent = outputs(picked)
    assert sent[_position(views.QueryView, "checklist")] is SKIP and sent[_position(views.QueryView, "query")] == picked.query
    cleared = handlers.pick_query(tab, res, session, None)
    assert cleared.query is UNCHANGED and cleared.partner == "" and cleared.session is session


def test_a_run_leaves_the_player_alone_until_it_is_done_and_playing_never_moves_it(tab):
    res = WindowSearchResources()
    page = handlers.open_page(tab, res, WindowSearchSession(), 180, {"qid": "p0005_t"})
    shown = list(handlers.run(tab, res, page.session, None, page.query, 180, 5, 3, 30, "aws"))
    first, last = shown[0], shown[-1]
    assert first.video is UNCHANGED and first.scrub is UNCHANGED and first.frames == []
    assert last.video is not UNCHANGED and last.scrub["value"] == last.session.playhead
    window = last.session.trace.candidates[0]
    picked = handlers.select_window(tab, res, last.session, f"#{window.rank}")   # the radio seeks the player
    assert picked.video["playback_position"] == window.span[0]
    played = handlers.played(tab, res, last.session, window.span[0] + 3)
    assert played.video is UNCHANGED and played.frames is UNCHANGED             # the same window, playing on
    assert outputs(played)[_position(views.PlayheadView, "video")] is SKIP


def test_each_event_outputs_the_components_named_like_its_views_fields(tmp_path):
    with gr.Blocks() as demo:
        settings, address = gr.State({}), gr.Textbox(visible=False, elem_id="page-address")
        layout.build_tab(TabContext(data_dir=tmp_path, settings=settings, demo=demo, address=address))
    ids = {block._id: getattr(block, "elem_id", None) for block in demo.blocks.values()}
    by_api = {d["api_name"]: [ids[i] for i in d["outputs"]] for d in demo.config["dependencies"]}
    line, tail = ["ws-message", "page-address"], ["ws-tools-message", "page-address"]
    assert by_api["select_window"] == [None, "ws-timeline", "ws-checklist", "ws-movie", "ws-scrub", "ws-window-pick",
                                       "ws-window-frames", *line]   # None: the session (a gr.State)
    assert by_api["remove_ref"] == [None, "ws-memory-names", "ws-memory-refs", "ws-memory-char", "ws-memory-confirm",
                                    "ws-memory-confirm-text", *line]
    assert by_api["copy_link"] == ["ws-link", *tail] and by_api["export"] == ["ws-export-file", *tail]
    assert by_api["bench"] == ["ws-bench-progress", "ws-bench-metrics", "ws-bench-export", *line]
    assert by_api["open_page"][-4:] == ["ws-movie-pick", None, *line]   # None: the preparation timer
    for api, view_type in {"pick_movie": views.MovieView, "upload_movie": views.MovieView, "pick_query": views.QueryView,
                           "run": views.RunView, "timeline_click": views.PlayheadView, "scrubbed": views.PlayheadView,
                           "load": views.LoadView, "open_page": views.PageView,
                           "open_page_prepared": views.PageView, "confirm_remove": views.MemoryView,
                           "cancel_remove": views.MemoryView, "add_ref": views.MemoryView,
                           "find_names": views.MemoryView, "build_refs": views.MemoryView}.items():
        assert len(by_api[api]) == view_type.size() + 2, api

