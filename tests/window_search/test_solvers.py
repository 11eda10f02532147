"""solvers_for: the one place the tab decides model vs baseline, and where the Model panel's
"Max frames per request" reaches the verifier and the localizer."""
from __future__ import annotations

import pytest

from backends.registry import resolve
from components.window_search.agent import agentic_window_search
from components.window_search.localizer import ModelLocalizer, SubtitleLocalizer
from components.window_search.pipeline import SearchSettings
from components.window_search.solvers import ModelWindowSolver, TextOnlyBaselineSolver, solvers_for
from components.window_search.types import Chunk
from tests.window_search.agent_fixtures import CUES, ScriptedBackend, VideoMovie, inspect_reply, \
    write_test_video


@pytest.fixture(scope="module")
def movie(tmp_path_factory) -> VideoMovie:
    return VideoMovie(write_test_video(tmp_path_factory.mktemp("solvers") / "movie.mp4"), CUES)


def test_the_baseline_gets_the_text_only_solvers():
    solvers = solvers_for(resolve("baseline"), SearchSettings(max_frames=4), embedder="lexical")
    assert solvers.text_only and solvers.model is None and solvers.memory_builder is None
    assert isinstance(solvers.verifier, TextOnlyBaselineSolver)
    assert isinstance(solvers.localizer, SubtitleLocalizer)


def test_a_model_gets_the_verifier_localizer_and_memory_builder_with_the_frame_cap():
    be = ScriptedBackend()
    solvers = solvers_for(be, SearchSettings(max_frames=12, localize_cap=32))
    assert not solvers.text_only and solvers.model is be and solvers.memory_builder is not None
    assert isinstance(solvers.verifier, ModelWindowSolver) and solvers.verifier.max_frames == 12
    assert isinstance(solvers.localizer, ModelLocalizer) and solvers.localizer.cap == 12
    uncapped = solvers_for(be, SearchSettings())
    assert uncapped.verifier.max_frames is None and uncapped.localizer.cap == 32  # the paper's counts
    above = solvers_for(be, SearchSettings(max_frames=192))
    assert above.localizer.cap == 32   # the cap lowers the paper's counts, never raises them


def test_max_frames_caps_every_inspect_request_of_the_conversation(movie):
    be = ScriptedBackend(inspect=[inspect_reply("EXPAND", side="right", secs=30), inspect_reply("EMIT")])
    trace = agentic_window_search("Lloyd walks.", [Chunk(1, 60, 120, 0.9, 1)], movie, None,
                                  ModelWindowSolver(be, max_frames=10), K=1, M=3)
    first, second = be.by_task("aws.inspect")
    assert first.num_images() == 10 and second.num_images() == 10
    steps = trace.candidates[0].steps
    assert [s.num_frames for s in steps] == [10, 10]
    assert [s.frames_dropped for s in steps] == [60 - 10, 90 - 10]
    assert trace.accepted_rank == 1 and trace.calls["retries"] == 0
