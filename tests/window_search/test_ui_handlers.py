"""The tab's handlers called directly (no browser): typed views, the Model panel's frame cap, and a
search that stops asking the model once its page is closed."""
from __future__ import annotations

import threading

import pytest

from backends.base import GenerationRequest, GenerationResult, VLMBackend
from components.base.errors import UserError
from components.settings.session import SessionSettings
from components.window_search.data import load_annotations
from components.window_search.ui import handlers
from components.window_search.ui.session import WindowSearchTab
from components.window_search.ui.session import RESOURCES, WindowSearchResources, WindowSearchSession
from tests.window_search.agent_fixtures import decompose_reply, inspect_reply


class GatedBackend(VLMBackend):
    """Counts its calls; the first one waits until the test opens the gate. Inspect always wants
    to see more, so only a stop ends a search early."""

    kind = "gated"

    def __init__(self):
        self.requests: list[GenerationRequest] = []
        self.entered = threading.Event()
        self.gate = threading.Event()

    @property
    def backend_id(self) -> str:
        return "gated:test"

    def generate(self, request: GenerationRequest) -> GenerationResult:
        self.requests.append(request)
        self.entered.set()
        self.gate.wait(30)
        text = {"aws.decompose": decompose_reply(), "aws.localize": "[2, 20]"}.get(
            request.task, inspect_reply("EXPAND", ["true", "cutoff", "true"], side="right", secs=30))
        return GenerationResult(text=text, backend=self.backend_id, model="test")


@pytest.fixture(scope="module")
def tab(grounding_examples) -> WindowSearchTab:
    return WindowSearchTab(load_annotations(grounding_examples / "annotations.json"))


@pytest.fixture
def gated(monkeypatch) -> GatedBackend:
    backend = GatedBackend()
    monkeypatch.setattr(handlers.search, "backend_for", lambda settings: backend)
    return backend


def _settings(max_frames: int = 192) -> dict:
    return SessionSettings(backend="openai:gated", max_frames=max_frames).to_state()


def _start(tab, key: str, settings: dict, *, k: int = 1, m: int = 1):
    res = RESOURCES.get(key)
    session = handlers.pick_movie(tab, res, WindowSearchSession(), "m01", 60).session
    query = tab.annotations.query("p0001_t").query
    return res, handlers.run(tab, res, session, settings, query, 60, k, m, 30, "aws")


def test_picking_a_movie_and_a_query_gives_typed_views(tab):
    res = WindowSearchResources()
    picked = handlers.pick_movie(tab, res, WindowSearchSession(), "m01", 180)
    assert picked.session.movie.movie_id == "m01" and picked.session.movie.duration > 0
    assert "ws-tl" in picked.timeline and "data-rank" not in picked.timeline
    assert picked.scrub["maximum"] == int(picked.session.movie.duration)
    query = handlers.pick_query(tab, res, picked.session, "p0002_t")
    assert query.query == "Mary waves in the kitchen." and "p0002_c" in query.partner
    assert query.session.picked.qid == "p0002_t" and query.session.partner.qid == "p0002_c"
    with pytest.raises(UserError, match="Movie: pick a movie"):
        next(handlers.run(tab, res, WindowSearchSession(), _settings(), "x", 180, 5, 3, 30, "aws"))


def test_an_unloaded_session_stops_asking_the_model(tab, gated):
    res, search = _start(tab, "closing-page", _settings())
    assert next(search).progress == "Retrieving chunks…"
    assert gated.entered.wait(60)          # the search is inside its first model call (Decompose)
    RESOURCES.release("closing-page")       # the page closes: demo.unload
    assert res.stop.is_set() and "closing-page" not in RESOURCES
    gated.gate.set()
    views = list(search)
    assert views[-1].progress == "Stopped." and views[-1].session.trace.stopped
    assert [r.task for r in gated.requests] == ["aws.decompose"]   # nothing asked after the close


def test_an_open_session_runs_to_the_end_within_the_frame_cap(tab, gated):
    gated.gate.set()
    _, search = _start(tab, "open-page", _settings(max_frames=8), m=1)
    views = list(search)
    assert views[-1].progress == "Done." and views[-1].session.trace.prediction is not None
    assert [r.task for r in gated.requests] == ["aws.decompose", "aws.inspect", "aws.inspect",
                                                "aws.localize"]
    for r in gated.requests[1:]:   # 60 s chunks at 1 fps, +30 s expansions: capped at 8 frames
        assert 0 < r.num_images() <= 8, (r.task, r.num_images())
    steps = views[-1].session.trace.candidates[0].steps
    assert [s.num_frames for s in steps] == [8, 8]
    RESOURCES.release("open-page")


def test_the_stop_button_sets_the_sessions_stop_event(tab):
    res = WindowSearchResources()
    handlers.stop(tab, res)
    assert res.stop.is_set()


class ReplayMissBackend(VLMBackend):
    """Every call fails as a replay that has no such call does (a BackendError)."""

    kind = "replay"

    @property
    def backend_id(self) -> str:
        return "replay:talk.jsonl"

    def generate(self, request: GenerationRequest) -> GenerationResult:
        from backends.errors import BackendError

        raise BackendError(f"Replay trace 'talk.jsonl' has no recorded call for {request.task}.")


def test_a_search_whose_model_calls_fail_says_failed_where_the_eye_is(tab, monkeypatch):
    """A replay miss is a failed step: the progress says Failed and the message line names the
    cause (not "Done." with the warning in grey below the timeline)."""
    monkeypatch.setattr(handlers.search, "backend_for", lambda settings: ReplayMissBackend())
    res = RESOURCES.get("replay-miss")
    session = handlers.pick_movie(tab, res, WindowSearchSession(), "m01", 60).session
    query = tab.annotations.query("p0001_t").query
    views = list(handlers.run(tab, res, session, _settings(), query, 60, 2, 1, 30, "aws"))
    last = views[-1]
    assert last.progress.startswith("**Failed**") and "Done" not in last.progress
    assert last.message.startswith("⚠ The search failed:") and "talk.jsonl" in last.message
    assert all(v.message == "" for v in views[:-1])          # the line stays clear while it runs
    RESOURCES.release("replay-miss")
