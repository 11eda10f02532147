"""Temporal solvers on real encoded clips: motion-energy baseline, a real HTTP server, a tiny model."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from backends.base import GenerationResult, VLMBackend
from backends.config import ApiSettings
from backends.errors import TooManyImagesError
from backends.registry import resolve
from components.impact.data import ImpactItem
from components.impact.metrics.temporal import temporal_iou
from components.impact.solvers import solvers_for
from components.impact.solvers import (BASELINE_METHOD, ModelTemporalSolver,
                                                MotionEnergyBaseline, impact_candidates,
                                                motion_energy)
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.impact.clipdata import block_clip

FPS = 24


@pytest.fixture(scope="module")
def impact_clip(tmp_path_factory) -> Path:
    return block_clip(tmp_path_factory.mktemp("clips") / "impact.mp4")


@pytest.fixture(scope="module")
def short_clip(tmp_path_factory) -> Path:
    return block_clip(tmp_path_factory.mktemp("clips") / "short.mp4", num_frames=40, impacts=[(20, 21)])


def item_for(video: Path, num_frames: int, qid: str = "h0001") -> ImpactItem:
    return ImpactItem(qid=qid, video=video, query="A man is struck behind the knees by a staff.",
                      num_frames=num_frames, moments=[(83, 86)], fps=FPS)


def test_motion_energy_baseline_finds_the_known_impact(impact_clip):
    solver = MotionEnergyBaseline()
    pred = solver.localize(item_for(impact_clip, 156))
    assert pred.method == BASELINE_METHOD and pred.status == "ok"
    top = pred.windows[0]
    gt = (82 / FPS, 86 / FPS)  # frames 83-86
    assert temporal_iou(top, gt) >= 0.5, pred.windows
    scores = [w[2] for w in pred.windows]
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0
    assert all(0 <= w[0] < w[1] <= 156 / FPS for w in pred.windows)


def test_candidates_are_few_frames_wide_and_quiet_clip_gives_none():
    energy = np.zeros(100)
    energy[1:] = 1.0 + 0.01 * np.sin(np.arange(99))
    energy[50] = 20.0
    (window,) = impact_candidates(energy, FPS)[:1]
    assert window[0] <= 50 / FPS < window[1] and 3 <= round((window[1] - window[0]) * FPS) <= 8
    grey = np.zeros((30, 8, 8))
    assert motion_energy(grey).max() == 0 and impact_candidates(motion_energy(grey), FPS) == []


def _texts(body: dict) -> list[str]:
    return [p["text"] for m in body["messages"] for p in m["content"]
            if isinstance(m["content"], list) and p.get("type") == "text"]


def _images(body: dict) -> int:
    return sum(1 for m in body["messages"] if isinstance(m["content"], list)
               for p in m["content"] if p.get("type") == "image_url")


def openai_backend(server, model="gpt-4o"):
    return resolve(f"openai:{model}", api=ApiSettings(base_url=server.url, api_key="sk-test",
                                                      max_retries=0))


def test_gpt_style_request_and_a_bounded_retry_after_malformed_output(impact_clip):
    script = ["I think there is a hit somewhere.",
              "The event happens in 3.417 - 3.583 seconds; 9.0 - 9.5 seconds."]
    with ScriptedOpenAIServer(script) as server:
        solver = ModelTemporalSolver(openai_backend(server), max_retries=2)
        pred = solver.localize(item_for(impact_clip, 156))
    assert len(server.requests) == 2
    body = server.requests[0]
    texts = _texts(body)
    assert texts[0].startswith("You are given multiple frames from a video.")
    assert "A man is struck behind the knees by a staff." in texts[0]
    labels = [t for t in texts[1:]]
    assert _images(body) == 156 <= 192 and len(labels) == 156
    assert labels[0] == "Frame at 0.000s:" and "Frame at 3.417s:" in labels
    assert all(t.startswith("Frame at ") and t.endswith("s:") for t in labels)
    assert pred.prompt_style == "gpt" and pred.status == "ok" and pred.num_frames_sent == 156
    assert pred.attempts == script and pred.raw == script[1]
    assert pred.windows == [[3.417, 3.583, 1.0]]  # 9.0-9.5 lies beyond the 6.5 s clip


def test_session_cap_and_open_style(impact_clip):
    with ScriptedOpenAIServer(["[[3.4, 3.6]]"]) as server:
        solver = ModelTemporalSolver(openai_backend(server, "qwen3-vl-8b"), max_frames=32)
        pred = solver.localize(item_for(impact_clip, 156))
    body = server.requests[0]
    assert _images(body) == 32 and pred.num_frames_sent == 32
    assert _texts(body)[-1].startswith("Identify one or more time intervals")
    assert pred.prompt_style == "open" and pred.windows == [[3.4, 3.6, 1.0]]


def test_backend_image_cap_lowers_the_frame_count(impact_clip):
    with ScriptedOpenAIServer(["[[3.4, 3.6]]"]) as server:
        backend = resolve("openai:gpt-4o", api=ApiSettings(base_url=server.url, api_key="sk-test",
                                                           max_images=10, max_retries=0))
        pred = ModelTemporalSolver(backend).localize(item_for(impact_clip, 156))
    assert _images(server.requests[0]) == 10 and pred.num_frames_sent == 10


def test_clip_shorter_than_the_request_uses_all_its_frames(short_clip):
    with ScriptedOpenAIServer(["[[00:00.800, 00:00.900]]"]) as server:
        solver = ModelTemporalSolver(openai_backend(server, "gemini-3.1-pro"))
        pred = solver.localize(item_for(short_clip, 40))
    assert _images(server.requests[0]) == 40
    assert pred.prompt_style == "gemini" and pred.windows == [[0.8, 0.9, 1.0]]


def test_none_answer_is_an_empty_counted_prediction(short_clip):
    with ScriptedOpenAIServer(["None"]) as server:
        pred = ModelTemporalSolver(openai_backend(server)).localize(item_for(short_clip, 40))
    assert len(server.requests) == 1  # "None" is an answer, not asked again
    record = pred.to_record()
    assert record["pred_relevant_windows"] == [] and record["status"] == "none" and record["raw"] == "None"


def test_intervals_beyond_the_clip_are_clamped(short_clip):
    with ScriptedOpenAIServer(["[[1.5, 30.0], [-2, 0.25]]"]) as server:
        pred = ModelTemporalSolver(openai_backend(server, "qwen")).localize(item_for(short_clip, 40))
    assert pred.windows[0][:2] == [1.5, 40 / FPS] and pred.windows[1][:2] == [0.0, 0.25]


def test_always_malformed_is_kept_raw_and_unparsed_after_bounded_retries(short_clip):
    with ScriptedOpenAIServer(["no idea"]) as server:
        pred = ModelTemporalSolver(openai_backend(server), max_retries=2).localize(item_for(short_clip, 40))
    assert len(server.requests) == 3
    assert pred.status == "unparsed" and pred.windows == [] and pred.raw == "no idea"
    assert pred.attempts == ["no idea"] * 3


def test_baseline_backend_gets_the_motion_solver():
    assert isinstance(solvers_for(resolve("baseline")).temporal, MotionEnergyBaseline)


def test_tiny_model_noise_is_counted_not_guessed(tiny_vlm_dir, short_clip):
    backend = resolve(f"hf:{tiny_vlm_dir}")
    solver = ModelTemporalSolver(backend, max_frames=2, max_retries=1)
    solver.params = type(solver.params)(temperature=0.0, max_tokens=16)
    pred = solver.localize(item_for(short_clip, 40))
    assert pred.num_frames_sent == 2 and pred.prompt_style == "open"
    assert 1 <= len(pred.attempts) <= 2 and pred.raw == pred.attempts[-1]
    from components.impact.replies import parse_intervals

    parsed = parse_intervals(pred.raw, duration=40 / FPS)
    assert pred.status == parsed.status  # whatever the noise says, it is parsed, never invented
    if pred.status == "unparsed":
        assert pred.windows == [] and len(pred.attempts) == 2
    else:
        assert pred.windows == parsed.windows()


class CappedBackend(VLMBackend):
    """Refuses a request with more than `cap` images and says its limit, as a vLLM server does."""

    kind = "openai"

    def __init__(self, cap: int, answer: str):
        self.cap, self.answer, self.sent = cap, answer, []

    @property
    def backend_id(self) -> str:
        return "openai:capped-model"

    def generate(self, request):
        self.sent.append(request.num_images())
        if request.num_images() > self.cap:
            raise TooManyImagesError("too many images in this request", limit=self.cap,
                                     sent=request.num_images())
        return GenerationResult(text=self.answer, backend=self.backend_id, model="capped-model")


def test_a_server_that_states_its_image_cap_gets_the_clip_resampled(impact_clip):
    backend = CappedBackend(12, "[[3.4, 3.6]]")
    pred = ModelTemporalSolver(backend).localize(item_for(impact_clip, 156))
    assert backend.sent == [156, 12]  # the refused size is not an attempt
    assert pred.status == "ok" and pred.num_frames_sent == 12 and pred.attempts == ["[[3.4, 3.6]]"]


def test_a_transport_failure_is_recorded_and_not_asked_again(short_clip):
    with ScriptedOpenAIServer([{"status": 400, "body": {"error": {"message": "bad request"}}}]) as server:
        pred = ModelTemporalSolver(openai_backend(server), max_retries=2).localize(item_for(short_clip, 40))
    assert len(server.requests) == 1
    assert pred.status == "error" and "bad request" in pred.error and pred.windows == []


def test_the_model_panel_cap_reaches_the_model_solver():
    from components.settings.session import SessionSettings

    backend = resolve("openai:gpt-4o", api=ApiSettings(base_url="http://127.0.0.1:9/v1", api_key="sk-test"))
    solvers = solvers_for(backend, SessionSettings(max_frames=12), style="open", max_retries=1)
    assert isinstance(solvers.temporal, ModelTemporalSolver)
    assert solvers.temporal.max_frames == 12 and solvers.temporal.style == "open"
    assert solvers.temporal.max_retries == 1 and solvers.regions.needs_image
    assert not solvers_for(resolve("baseline")).regions.needs_image


def test_vtimellm_frame_numbers_are_indices_of_the_frames_sent():
    from components.impact.replies import frame_index_answer

    # 100 frames sent over a 10 s clip: frame i covers [i/10, (i+1)/10] s
    parsed = frame_index_answer("From 20 to 29; From 50 to 50", 100, 10.0)
    assert parsed.status == "ok"
    assert parsed.intervals == [pytest.approx((2.0, 3.0)), pytest.approx((5.0, 5.1))]
    assert frame_index_answer("not 1 - 2", 100, 10.0).status == "unparsed"
    assert frame_index_answer("From 150 to 160", 100, 10.0).intervals == []  # past the frames sent
