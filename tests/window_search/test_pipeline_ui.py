"""The Window search tab in the real app, driven through gradio_client (baseline backend)."""
from __future__ import annotations

import json

import pytest
from gradio_client import Client, handle_file

from tests.helpers.live_app import running_app

pytestmark = pytest.mark.slow  # a live app (tests/test_slow_marks.py)


@pytest.fixture(scope="module")
def app_url(grounding_examples, tmp_path_factory):
    data = tmp_path_factory.mktemp("ws-data")
    (data / "grounding").symlink_to(grounding_examples.resolve())
    with running_app(data) as url:
        yield url


def test_pick_run_select_export_and_load(app_url, tmp_path):
    client = Client(app_url, verbose=False)
    out = client.predict("m01", 180, api_name="/pick_movie")
    assert "data-rank" not in out[1] and "ws-tl" in out[1]          # empty timeline, no ranks yet
    query, partner, timeline, *_, message, _address = client.predict("p0002_t", api_name="/pick_query")
    assert query == "Mary waves in the kitchen." and "p0002_c" in partner and "subject" in partner
    assert message == "" and ">GT<" in timeline                        # its ground truth, before any run
    job = client.submit(query, 180, 3, 1, 30, "rag", api_name="/run")
    updates = list(job)
    timeline, checklist, progress, result, window_pick, cast, frames, video, scrub, calls, message, _address = \
        job.result()
    assert len(updates) >= 2 and progress == "Done."
    assert "text-only baseline (subtitles only)" in result and "IoU" in result
    assert timeline.count("data-rank=") == 3
    assert len(frames) > 0  # the window's frames, for adding a character reference
    assert video["playback_position"] == scrub["value"] and message == ""   # the player went to the window
    selected = client.predict(window_pick["value"], api_name="/select_window")
    assert selected[2]["playback_position"] >= 0
    exported, *_ = client.predict(api_name="/export")   # the file, the message, the address
    saved = json.loads(open(exported["value"], encoding="utf-8").read())
    assert saved["trace"]["query"] == query and saved["trace"]["prediction"] is not None
    loaded = client.predict(handle_file(exported["value"]), api_name="/load")
    assert loaded[6] == query and "Window rank" in loaded[2] and loaded[-2] == ""   # then the address
    assert loaded[8]["value"] == "p0002_t" and "p0002_c" in loaded[9]   # the trace's own query and partner
    refused = client.predict(handle_file(str(_not_a_trace(tmp_path))), api_name="/load")
    assert refused[-2].startswith("⚠ Load trace: hello.json is not a saved window-search trace")


def _not_a_trace(tmp_path):
    path = tmp_path / "hello.json"
    path.write_text('{"hello": 1}')
    return path
