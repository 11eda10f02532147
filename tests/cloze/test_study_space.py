"""A Space (or any server) that is the study page alone: APP_PAGE=study makes `python app.py`
serve the study page instead of the explorer, on the same port; nothing of the explorer is there."""
from __future__ import annotations

import json
import urllib.request

import pytest

from tests.cloze.test_study_flow import make_study
from tests.helpers.live_app import free_port

pytestmark = pytest.mark.slow  # a live app (tests/test_slow_marks.py)


def test_app_page_study_serves_the_study_page_alone(cloze_examples, tmp_path, monkeypatch):
    import app

    data = make_study(cloze_examples, tmp_path, display="frames", access="invite")
    monkeypatch.setenv("APP_PAGE", "study")
    monkeypatch.delenv("APP_STUDY", raising=False)
    port = free_port()
    args = app.build_parser().parse_args(["--data-dir", str(data), "--port", str(port)])
    demo = app.launch(args, prevent_thread_lock=True)
    try:
        config = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=60).read())
        ids = {c.get("props", {}).get("elem_id") for c in config["components"]}
        assert {"study-start", "study-progress", "study-intro"} <= ids
        assert not {"app-tabs", "cloze-root", "cloze-mode"} & ids
        assert config.get("title") == "Cloze study"
    finally:
        demo.close()


def test_an_unknown_app_page_is_one_line(monkeypatch, tmp_path):
    import app

    monkeypatch.setenv("APP_PAGE", "studdy")
    args = app.build_parser().parse_args(["--data-dir", str(tmp_path)])
    with pytest.raises(SystemExit, match="APP_PAGE must be 'explorer' .* or 'study'; got 'studdy'"):
        app.launch(args, prevent_thread_lock=True)
