"""Two backends on the same Impact clip and frame ("compare with"): the same frames and prompt
to two real servers, both moment sets with the spans only one covers, both region answers with
the labels only one chose."""
from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from backends.config import ApiSettings
from backends.pair import PairedBackend
from backends.registry import resolve
from components.base.errors import UserError
from components.impact.data import ImpactItem
from components.impact.pairs import merged, minus, region_pair, temporal_pair
from components.impact.solvers import ModelRegionSolver
from components.impact.solvers import ModelTemporalSolver
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.impact.clipdata import block_clip


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    return block_clip(tmp_path_factory.mktemp("pair-clips") / "short.mp4", num_frames=48,
                      impacts=[(20, 21)])


def _backend(server, model):
    return resolve(f"openai:{model}", api=ApiSettings(base_url=server.url, api_key="sk-impact-pair",
                                                      max_retries=0))


def test_spans_only_one_side_covers():
    assert merged([(3, 4), (1, 2), (2, 2.5)]) == [(1, 2.5), (3, 4)]
    assert minus([(0, 10)], [(2, 3), (5, 6)]) == [(0, 2), (3, 5), (6, 10)]
    assert minus([(1, 2)], [(0, 5)]) == [] and minus([(1, 2)], []) == [(1, 2)]


def test_both_moment_sets_from_one_request(clip):
    item = ImpactItem(qid="h7", video=clip, query="A man is hit on the head.", num_frames=48,
                      moments=[(20, 21)], fps=24)
    with ScriptedOpenAIServer(["The event happens in 0.5 - 1.0 seconds."]) as a, \
            ScriptedOpenAIServer([{"content": "The event happens in 0.8 - 1.5 seconds.",
                                   "reasoning": "the hit is at 0.9 s"}]) as b:
        solver = ModelTemporalSolver(PairedBackend(_backend(a, "gpt-4o"), _backend(b, "gpt-4.1")))
        pair = temporal_pair(solver, item)
        body_a, body_b = a.requests[0], b.requests[0]
    assert body_a["messages"] == body_b["messages"] and pair.same_request
    assert pair.first.windows[0][:2] == [0.5, 1.0] and pair.second.windows[0][:2] == [0.8, 1.5]
    assert pair.second.reasoning == "the hit is at 0.9 s" and pair.first.reasoning == ""
    assert pair.second.method.startswith("openai:gpt-4.1")
    assert pair.only_first == [(0.5, 0.8)] and pair.only_second == [(1.0, 1.5)]
    assert not pair.agree and pair.pair_id
    assert "reasoning" in pair.second.to_record() and "reasoning" not in pair.first.to_record()


def test_both_region_answers_and_the_labels_only_one_chose():
    frame = Image.new("RGB", (64, 48), (120, 30, 30))
    with ScriptedOpenAIServer(["The affected body regions are head, right hand."]) as a, \
            ScriptedOpenAIServer(["no idea", "head and left hand"]) as b:
        solver = ModelRegionSolver(PairedBackend(_backend(a, "model-a"), _backend(b, "model-b")))
        pair = region_pair(solver, frame, "He is hit on the head.", ref="h7#3")
    assert pair.first.labels == ["head", "right hand"] and pair.second.attempts == 2
    assert pair.second.labels == ["head", "left hand"] and pair.second.source == "openai:model-b"
    assert pair.both == ["head"] and pair.only_first == ["right hand"]
    assert pair.only_second == ["left hand"] and not pair.agree


def test_an_unpaired_solver_says_what_to_choose(clip):
    with ScriptedOpenAIServer(["head"]) as a:
        with pytest.raises(UserError, match="Compare with"):
            region_pair(ModelRegionSolver(_backend(a, "model-a")), None, "q")
