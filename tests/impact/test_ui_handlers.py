"""The Impact tab's module-level handlers, its session objects, its wiring and its standalone app."""
from __future__ import annotations

import dataclasses
import threading

import gradio as gr

import pytest

from backends.errors import GenerationStopped
from components.impact.ui import handlers
from components.impact.ui.views import FrameView
from components.impact.ui.session import ImpactTab, load_tab
from components.common.ui import UNCHANGED, outputs
from components.impact.ui.session import RESOURCES, ImpactResources, ImpactSession

from tests.impact.clipdata import make_impact_data

RES = ImpactResources()

BASELINE = {"backend": "baseline", "max_frames": 32}


def painting_of(body3d) -> str | None:
    """The painting (its key) a body update sends (None for gr.skip())."""
    return body3d["key"] if isinstance(body3d, dict) else None


@pytest.fixture(autouse=True)
def own_render_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPACT_RENDER_DIR", str(tmp_path / "render"))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    make_impact_data(root)
    return root


@pytest.fixture(scope="module")
def data(data_dir):
    return load_tab(data_dir)


def test_a_clip_view_starts_at_the_first_moment(data):
    clip = handlers.on_clip(data, RES, ImpactSession(), "h0002")
    assert clip.frame.value == 30 and clip.frame.maximum == 120
    assert clip.video.playback_position == pytest.approx(29 / 24)
    assert "press Run temporal" in clip.timeline
    assert "truth [head]" in clip.body.regions and painting_of(clip.body.body3d)
    assert len(outputs(clip)) == 12  # clip list, video, frame, timeline, the seven frame outputs, status
    assert clip.status == ""  # the last run's line was about another clip


def test_predictions_live_in_the_session_that_made_them(data):
    mine = ImpactSession()
    ran = handlers.run_temporal(data, RES, mine, BASELINE, "h0001", 84, "auto")
    assert "motion-energy" in ran.status and "#1 IoU" in ran.timeline
    assert "h0001" in ran.session.temporal and ran.session.temporal_method.startswith("motion-energy")
    assert mine.temporal == {}  # a handler returns a new session, it never edits one
    assert "#1 IoU" in handlers.on_clip(data, RES, ran.session, "h0001").timeline
    assert "#1 IoU" not in handlers.on_clip(data, RES, ImpactSession(), "h0001").timeline
    assert [type(v).__name__ for v in outputs(ran)] == ["ImpactSession", "str", "str"]


def test_run_spatial_with_the_baseline_paints_the_text_only_answer(data):
    ran = handlers.run_spatial(data, RES, ImpactSession(), BASELINE, "h0001", 84)
    assert ran.status.startswith("Spatial: **baseline (text-only") and "4 frame(s) of h0001" in ran.status
    assert "predicted [left calf, right calf] · truth [left calf, right calf] · F1 1.00" in ran.body.regions
    assert "text-only baseline" in ran.body.regions  # the baseline's note under the line
    assert set(ran.session.spatial["h0001"]) == {"83", "84", "85", "86"}
    moved = handlers.on_frame(data, RES, ran.session, "h0001", 85)
    assert "predicted [left calf, right calf]" in moved.body.regions


def test_the_painting_the_page_already_shows_is_never_sent_again(data):
    """The same painting again would reset the camera the visitor turned."""
    first = handlers.on_clip(data, RES, ImpactSession(), "h0001")
    shown = dict(first.body.body3d)   # as the page sends it back
    again = handlers.on_frame(data, RES, ImpactSession(), "h0001", first.frame.value, shown)
    assert again.body.body3d is UNCHANGED
    assert "truth [" in again.body.regions  # everything else is still sent
    ran = handlers.run_spatial(data, RES, ImpactSession(), BASELINE, "h0001", first.frame.value, shown=shown)
    assert painting_of(ran.body.body3d) not in (None, shown["key"])  # painted anew
    assert painting_of(handlers.on_frame(data, RES, ImpactSession(), "h0001", 1, None).body.body3d)


def test_a_click_without_a_frame_changes_nothing_and_unknown_clips_are_user_errors(data):
    import gradio as gr

    from components.base.errors import UserError

    assert handlers.frame.clicked_frame({}) is None
    seek = handlers.on_timeline_click(data, RES, ImpactSession(), "h0001", {})
    assert outputs(seek) == [gr.skip(), gr.skip()]
    with pytest.raises(UserError, match="No clip matches “nope”"):
        handlers.on_clip(data, RES, ImpactSession(), "nope")
    with pytest.raises(UserError, match="Choose a clip first"):
        handlers.on_clip(data, RES, ImpactSession(), "")
    with pytest.raises(UserError, match="No impact annotations"):
        ImpactTab(None, "missing").item("h0001")


def test_stop_events_are_set_when_a_session_is_released():
    event = RESOURCES.get("abc").stop
    assert RESOURCES.get("abc").stop is event and not event.is_set()
    RESOURCES.release("abc")
    assert event.is_set() and "abc" not in RESOURCES
    assert not RESOURCES.get("abc").stop.is_set()  # a new page gets a fresh event
    RESOURCES.release("abc")
    RESOURCES.release("never-seen")  # harmless


def test_a_set_stop_event_stops_the_set_run(data):
    class Pressed(threading.Event):
        """Stop pressed while the run starts (a run clears an old press at its start)."""

        def clear(self) -> None:
            self.set()

    res = ImpactResources(stop=Pressed())
    with pytest.raises(GenerationStopped):
        handlers.set_metrics(data, res, ImpactSession(), "all", BASELINE)


def test_every_event_names_its_api_and_the_page_close_is_wired(data_dir):
    import gradio as gr

    from components.common.ui import TabContext
    from components.impact.ui import build_tab

    with gr.Blocks() as demo:
        build_tab(TabContext(data_dir=data_dir, settings=gr.State(BASELINE), demo=demo))
    events = {fn.api_name: len(fn.outputs) for fn in demo.fns.values()
              if fn.fn is not None and any(t[1] != "unload" for t in fn.targets)}
    # every event's outputs end with the tab's message line
    assert events == {"on_clip": 13, "on_frame": 10, "on_timeline_click": 3, "on_run_temporal": 4,
                      "on_run_spatial": 11, "on_render": 4, "on_metrics": 2, "on_load_impact": 15,
                      "on_load_impact_prepared": 15, "on_reset_view": 2,
                      "on_copy_link": 2, "on_stop": 2, "on_paint": 9, "on_runs_heat": 9,
                      "_impact_runs_panel": 3}   # the runs panel, its timer and the line (left as it is)
    assert any(t[1] == "unload" for fn in demo.fns.values() for t in fn.targets)


BODY = ["impact-body3d", "impact-legend", "impact-regions", "impact-turntable", "impact-turntable-msg",
        "impact-body-note", "impact-beside"]


def test_each_event_fills_the_components_its_view_names_and_no_others(data_dir):
    """The outputs come from the views' field names: a frame move fills the video, the timeline and
    the body, never the last run's status line (the old hand-made list carried it as a skip)."""
    import gradio as gr

    from components.common.ui import TabContext
    from components.impact.ui import build_tab

    with gr.Blocks() as demo:
        build_tab(TabContext(data_dir=data_dir, settings=gr.State(BASELINE), demo=demo))
    filled = {fn.api_name: [getattr(c, "elem_id", None) for c in fn.outputs] for fn in demo.fns.values()
              if fn.api_name}
    assert filled["on_frame"] == ["impact-video", "impact-timeline", *BODY, "impact-message"]
    assert filled["on_clip"] == ["impact-clip", "impact-video", "impact-frame", "impact-timeline", *BODY,
                                 "impact-status", "impact-message"]
    assert filled["on_load_impact"][-4:] == ["impact-status", "impact-split", None, "impact-message"]  # None: the timer
    assert filled["on_paint"] == [None, *BODY, "impact-message"]   # None: the session state
    assert filled["on_reset_view"] == ["impact-body3d", "impact-message"]
    assert filled["_impact_runs_panel"][0] == "impact-runs-panel"


def test_a_frame_move_names_only_the_video_the_timeline_and_the_body(data):
    moved = handlers.on_frame(data, ImpactResources(), ImpactSession(), "h0001", 84)
    named = {f.name for f in dataclasses.fields(moved) if getattr(moved, f.name) is not UNCHANGED}
    assert named == {"video", "timeline", "body", "message"}
    assert moved.body.body3d["key"] and "frame 84 = " in moved.timeline
    kept = handlers.on_frame(data, ImpactResources(), ImpactSession(), "h0001", "x")
    assert outputs(kept) == [gr.skip()] * 9 and "holds `x`" in kept.message   # a bad box: nothing but the line
    with pytest.raises(TypeError):
        FrameView("body", "legend")   # the point: no view is built from positions


def test_the_tab_runs_alone_with_the_model_panel(data_dir):
    from components.common.standalone import build_demo, build_parser

    demo = build_demo("components.impact.ui", data_dir)
    ids = {c.elem_id for c in demo.blocks.values() if getattr(c, "elem_id", None)}
    assert {"settings-panel", "impact-clip", "impact-body3d", "impact-run-metrics"} <= ids
    assert {"set_backend", "on_run_temporal"} <= {fn.api_name for fn in demo.fns.values()}
    args = build_parser("impact").parse_args(["--data-dir", str(data_dir), "--port", "7999"])
    assert args.port == 7999 and args.backend
