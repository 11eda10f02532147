"""The agent through real backends: a real HTTP server (ScriptedOpenAIServer + resolve("openai:..."))
playing a realistic sequence, and the tiny random-weight Qwen2.5-VL (noise output) end to end."""
from __future__ import annotations

import json

import pytest

from backends.config import ApiSettings
from backends.registry import resolve
from components.window_search.agent import agentic_window_search
from components.window_search.solvers import ModelWindowSolver
from components.window_search.types import Chunk, SearchTrace
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.window_search.agent_fixtures import CUES, VideoMovie, make_memory, write_test_video

QUERY = "Lloyd and Harry walk on a snowy street at night."


@pytest.fixture(scope="module")
def movie(tmp_path_factory) -> VideoMovie:
    d = tmp_path_factory.mktemp("aws-movie-b")
    return VideoMovie(write_test_video(d / "movie.mp4"), CUES)


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    return make_memory(tmp_path_factory.mktemp("aws-memory-b"))


def test_realistic_sequence_over_http(movie, memory):
    decompose = json.dumps({"statements": [
        {"id": "s1", "text": "Lloyd appears"}, {"id": "s2", "text": "Harry is visible"},
        {"id": "s3", "text": "Two people walk on a snowy street at night"}],
        "cast": [{"char_id": "C1", "name": "Lloyd", "ref": "C1:r1"},
                 {"char_id": "C2", "name": "Harry", "ref": "C2:r2"}]})
    reject = ("```json\n" + json.dumps({"statements": [
        {"id": "s1", "note": "Lloyd stands in a desert", "holds": "TRUE"},
        {"id": "s2", "note": "Harry beside him", "holds": "True"},
        {"id": "s3", "note": "sunny highway, no snow", "holds": "false"}],
        "cooccurrence": "desert, not snow", "decision": "reject", "confidence": 0.9,
        "expand_direction": None, "expand_seconds": None}) + "\n```")
    expand = json.dumps({"statements": [
        {"id": "s1", "note": "Lloyd walks", "holds": "true"},
        {"id": "s2", "note": "Harry enters in the last frames", "holds": "cutoff"},
        {"id": "s3", "note": "snowy street at night", "holds": "true"}],
        "cooccurrence": "right edge cuts Harry off", "decision": "EXPAND", "confidence": 0.7,
        "expand_direction": "right", "expand_seconds": 30})
    emit = json.dumps({"statements": [
        {"id": "s1", "note": "Lloyd walks", "holds": "true"},
        {"id": "s2", "note": "Harry joins at 190 s", "holds": "true"},
        {"id": "s3", "note": "snowy street at night", "holds": "true"}],
        "cooccurrence": "all hold 180-200 s", "decision": "EMIT", "confidence": 0.85,
        "expand_direction": None, "expand_seconds": None})
    chunks = [Chunk(1, 60, 120, 0.8, 1), Chunk(2, 120, 180, 0.7, 2), Chunk(0, 0, 60, 0.6, 3)]
    updates: list[SearchTrace] = []
    with ScriptedOpenAIServer([decompose, reject, expand, emit]) as server:
        backend = resolve("openai:test-model", api=ApiSettings(base_url=server.url,
                                                               api_key="sk-test", max_retries=0))
        trace = agentic_window_search(QUERY, chunks, movie, memory, ModelWindowSolver(backend),
                                      K=5, M=3, frame_cap=6, on_update=updates.append, qid="p1_t")
        bodies = list(server.requests)
    assert len(bodies) == 4 and len(updates) == 4
    assert [(b["temperature"], b.get("top_p")) for b in bodies] == [
        (0.2, 1.0), (0.4, 0.9), (0.4, 0.9), (0.4, 0.9)]
    assert trace.accepted_rank == 2 and trace.window == (120.0, 210.0)
    assert [c.outcome for c in trace.candidates] == ["rejected", "accepted"]
    first, second = trace.candidates
    assert [c.status for c in first.steps[0].checks] == ["true", "true", "false"]
    assert first.steps[0].confidence == 0.9
    assert [s.decision for s in second.steps] == ["EXPAND", "EMIT"]
    assert second.steps[0].applied_seconds == 30.0 and second.steps[1].window == (120.0, 210.0)
    assert [c.ref_id for c in trace.cast] == ["C1:r1", "C2:r2"]
    assert trace.calls == {"decompose": 1, "inspect": 3, "select": 0, "localize": 0, "retries": 0}
    assert "sk-test" not in json.dumps(trace.to_dict())
    # the 4th request (second Inspect of rank 2) carries the earlier reply and the new band only
    msgs = bodies[3]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[2]["content"] in (expand, [{"type": "text", "text": expand}])
    new_turn = msgs[3]["content"]
    n_images = sum(1 for p in new_turn if p.get("type") == "image_url")
    assert n_images == 30   # 1 fps over the 30 s band (frame_cap limits the initial window only)


def test_tiny_model_end_to_end_noise_output(movie, memory, tiny_vlm_dir):
    backend = resolve(f"hf:{tiny_vlm_dir}")
    # byte-level tokenizer: every prompt is thousands of tokens, so keep the calls few
    solver = ModelWindowSolver(backend, max_tokens=8, max_retries=0)
    chunks = [Chunk(0, 0, 20, 0.9, 1), Chunk(5, 100, 120, 0.8, 2)]
    trace = agentic_window_search(QUERY, chunks, movie, memory, solver, K=2, M=1, frame_cap=3,
                                  qid="tiny")
    assert not trace.stopped and trace.window in ((0.0, 20.0), (100.0, 120.0))
    assert trace.errors and "Decompose" in trace.errors[0]
    assert [s.text for s in trace.statements] == [QUERY]   # fallback: the query itself
    steps = [s for c in trace.candidates for s in c.steps]
    unparsed = [s for s in steps if s.parse_error]
    assert len(unparsed) == len(steps) == 2 and all(s.decision == "REJECT" for s in unparsed)
    assert all(s.num_frames == 3 for s in steps)
    logical = trace.calls["decompose"] + trace.calls["inspect"] + trace.calls["select"]
    assert logical == 4 and logical <= 2 * (1 + 1) + 2
    assert trace.calls["retries"] == 0
    assert trace.selected_rank == 1   # unreadable Select -> first rejected, recorded
    SearchTrace.from_dict(json.loads(json.dumps(trace.to_dict())))
