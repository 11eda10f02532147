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


def test_the_impact_address_follows_clip_and_frame_through_one_queued_event(example_data_dir):
    demo = app.build_app(example_data_dir)
    config = demo.get_config_file()
    [address] = [d for d in config["dependencies"] if d.get("api_name") == "_impact_address"]
    ids = {c["id"]: c["props"].get("elem_id") for c in config["components"]}
    assert sorted((ids[t], e) for t, e in address["targets"]) == [("impact-clip", "change"), ("impact-frame", "change")]
    assert address["queue"] is not False and address["trigger_mode"] == "always_last"
