"""Events whose repeats must answer in the order asked. gradio's page holds back a repeat of an
`always_last` event (and sends it, with the inputs of that moment, once the running one has
answered) only while a *queued* one runs; an unqueued event's repeats run side by side and may
answer in any order. So an always_last event that calls Python is queued: otherwise a view written
from two quick changes (a link's clip, then its frame) could end on the older one."""
from __future__ import annotations

import app


def test_every_always_last_event_that_calls_python_is_queued(example_data_dir):
    demo = app.build_app(example_data_dir)
    config = demo.get_config_file()
    unqueued = [d.get("api_name") or d["id"] for d in config["dependencies"]
                if d["trigger_mode"] == "always_last" and d.get("backend_fn") and d.get("queue") is False]
    assert unqueued == []


def test_the_impact_address_is_written_once_each_view_moving_clip_or_frame_has_answered(example_data_dir):
    """Chained after the views (their boxes then hold the view's clip and frame), never on the
    boxes' own change events (the clip's change read the frame box before the same answer set it)."""
    demo = app.build_app(example_data_dir)
    config = demo.get_config_file()
    names = {d["id"]: d.get("api_name") for d in config["dependencies"]}
    address = [d for d in config["dependencies"] if (d.get("api_name") or "").startswith("_impact_address")]
    after = sorted(names[d["trigger_after"]] for d in address)
    assert after == ["on_clip", "on_frame", "on_load_impact", "on_load_impact_prepared"]
    assert all(d["targets"][0][1] == "then" and d["queue"] is not False and d["trigger_mode"] == "always_last"
               for d in address)
