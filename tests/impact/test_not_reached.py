"""Impact when the model is not reached (an `openai:` backend pointed at a port on 127.0.0.1 where
nothing listens): Run temporal and Run spatial say "not reached: <reason>", once, never unparsed."""
from __future__ import annotations

import re

import pytest

import backends.openai_api as openai_api
from components.impact.ui import handlers
from components.impact.ui.session import ImpactResources, ImpactSession, load_tab
from tests.helpers.live_app import free_port
from tests.impact.clipdata import make_impact_data


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    make_impact_data(root)
    return load_tab(root)


@pytest.fixture
def closed_port(tmp_path, monkeypatch) -> dict:
    monkeypatch.setenv("IMPACT_RENDER_DIR", str(tmp_path / "render"))
    monkeypatch.setattr(openai_api, "_sleep", lambda seconds, cancel: None)   # the transport's back-off
    return {"backend": "openai:m", "base_url": f"http://127.0.0.1:{free_port()}/v1", "api_key": "sk-x",
            "max_frames": 32}


def _plain(text: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", str(text)).split())


def test_run_temporal_says_not_reached_once(data, closed_port):
    ran = handlers.run_temporal(data, ImpactResources(), ImpactSession(), closed_port, "h0001", 84, "auto")
    text = _plain(ran.status) + " " + _plain(ran.timeline)
    assert text.count("not reached:") == 1 and "connection failed" in text, text
    assert "unparsed" not in text and "backend error" not in text, text


def test_run_spatial_says_not_reached_once(data, closed_port):
    ran = handlers.run_spatial(data, ImpactResources(), ImpactSession(), closed_port, "h0001", 84)
    text = _plain(ran.status) + " " + _plain(ran.body.regions)
    assert text.count("not reached:") == 1 and "connection failed" in text, text
    assert "unparsed" not in text and "not usable" not in text, text
