"""Issue 13 for window search: sources on every prediction, numbers that are not numbers, the
thinking switch, the localizer as its own model and the sampling its prompt states."""
from __future__ import annotations

import json
import math

import pytest

from backends.registry import resolve
from components.window_search.agent import MIN_EXPAND_S, expand_window
from components.window_search.data import load_annotations, load_predictions
from components.window_search.localizer import ModelLocalizer, SubtitleLocalizer
from components.window_search.replies import IntervalParseError, parse_interval
from components.window_search.metrics import evaluate
from components.window_search.pipeline import prediction_record, prediction_source
from components.window_search.replies import ReplyParseError, parse_confidence, parse_inspect
from components.window_search.solvers import ModelWindowSolver, solvers_for
from components.window_search.types import InspectContext, Observation, SearchSettings, SearchTrace
from components.window_search import view
from tests.window_search.agent_fixtures import ScriptedBackend, frame_times, texts
from tests.window_search.test_localizer import FrameMovie


# -- 1. sources ----------------------------------------------------------------------------------
def _trace(**kw) -> SearchTrace:
    t = SearchTrace(query="q", qid="q1", method="aws", window=(100.0, 160.0), prediction=(110.0, 120.0))
    for k, v in kw.items():
        setattr(t, k, v)
    return t


@pytest.mark.parametrize("kw,source", [
    ({"accepted_rank": 2}, "emitted"),
    ({"selected_rank": 3}, "selected"),
    ({"fallbacks": ["select-unparsed"], "selected_rank": 1}, "fallback:select-unparsed"),
    ({"fallbacks": ["decompose-unparsed", "localizer-unparsed"]}, "fallback:decompose-unparsed"),
    ({"text_only_baseline": True, "accepted_rank": 1}, "baseline"),
    ({"method": "rag"}, "rag"),
    ({"prediction": None}, "unparsed"),
])
def test_every_prediction_says_how_it_was_obtained(kw, source):
    trace = _trace(**kw)
    assert prediction_source(trace) == source
    rec = prediction_record(trace)
    assert rec["source"] == source
    if source.startswith("fallback:"):  # never written where a scorer would read it
        assert rec["interval"] is None and rec["fallback_interval"] == [110.0, 120.0]
    elif source != "unparsed":
        assert rec["interval"] == [110.0, 120.0] and "fallback_interval" not in rec


def _annotations(tmp_path):
    ann = tmp_path / "a.json"
    ann.write_text(json.dumps({"movies": [{"movie_id": "m", "video": "m.mp4"}], "pairs": [
        {"pair_id": "p1", "movie_id": "m", "contrast_attribute": "setting",
         "target": {"qid": "t1", "query": "q", "interval": [0, 10]},
         "confusable": {"qid": "c1", "query": "q", "interval": [20, 30]}}]}))
    return load_annotations(ann)


def test_eval_scores_only_model_answers_unless_asked_for_a_diagnostic(tmp_path):
    ann = _annotations(tmp_path)
    pred = tmp_path / "p.jsonl"
    pred.write_text('{"qid": "t1", "interval": null, "fallback_interval": [0, 10], '
                    '"source": "fallback:localizer-unparsed"}\n'
                    '{"qid": "c1", "interval": [20, 30], "source": "emitted"}\n')
    metrics = evaluate(ann, load_predictions(pred))
    assert metrics["mIoU"] == pytest.approx(50.0)
    assert metrics["counts"]["fallback"] == 1 and metrics["counts"]["model"] == 1
    diag = evaluate(ann, load_predictions(pred), score_fallbacks=True)
    assert diag["mIoU"] == pytest.approx(100.0) and diag["scored_fallbacks"] is True


def test_a_fallback_written_with_its_interval_is_still_not_scored(tmp_path):
    """Predictions from an older run carried the whole window as "interval": the source decides."""
    ann = _annotations(tmp_path)
    pred = tmp_path / "p.jsonl"
    pred.write_text('{"qid": "t1", "interval": [0, 10], "source": "fallback:select-unparsed"}\n'
                    '{"qid": "c1", "interval": [20, 30], "source": "made-up"}\n')
    metrics = evaluate(ann, load_predictions(pred))
    assert metrics["mIoU"] == 0.0 and metrics["counts"]["other"] == 1


def test_the_ui_result_shows_the_source():
    text = view.result_markdown(_trace(fallbacks=["localizer-unparsed"], source="fallback:localizer-unparsed"))
    assert "fallback:localizer-unparsed" in text and "not scored" in text
    assert "whole window" in text
    assert "`emitted`" in view.result_markdown(_trace(accepted_rank=1, source="emitted"))


# -- 2. numbers that are not numbers -----------------------------------------------------------
def test_a_nan_localizer_reply_never_reaches_the_predictions_file():
    be = ScriptedBackend(fn=lambda req: '{"start": "NaN", "end": 120}')
    res = ModelLocalizer(be).localize("q", (100.0, 160.0), FrameMovie())
    assert res.method == "vlm-fallback-window"
    trace = _trace(prediction=res.interval, fallbacks=["localizer-unparsed"])
    line = json.dumps(prediction_record(trace), allow_nan=False)
    assert "NaN" not in line and json.loads(line)["interval"] is None


def test_traces_are_json_without_nan():
    trace = _trace(elapsed_s=float("nan"))
    json.dumps(trace.to_dict(), allow_nan=False)
    assert trace.to_dict()["elapsed_s"] is None


@pytest.mark.parametrize("text", ["The event happens in 1e309 - 1e310 seconds", "[1e309, 20]",
                                  '{"start": 1e309, "end": 2}', '["2", "8"]'])
def test_overflowing_and_quoted_numbers_are_no_interval(text):
    with pytest.raises(IntervalParseError):
        parse_interval(text)


def test_numeric_strings_in_the_predictions_file_are_invalid(tmp_path):
    ann = _annotations(tmp_path)
    pred = tmp_path / "p.jsonl"
    pred.write_text('{"qid": "t1", "interval": ["0", "10"]}\n{"qid": "c1", "interval": [20, 30]}\n')
    preds = load_predictions(pred)
    assert preds["t1"].interval is None
    metrics = evaluate(ann, preds)
    assert metrics["mIoU"] == pytest.approx(50.0) and metrics["counts"]["unparsed"] == 1


class _Movie:
    movie_id, duration = "m", 1000.0

    def frames(self, start, end, fps=1.0, cap=None):
        return []

    def cues(self, start, end):
        return []


@pytest.mark.parametrize("requested,applied", [(1e20, 30.0), (1e-9, MIN_EXPAND_S), (12.0, 12.0)])
def test_expand_seconds_is_clamped_to_one_second_and_delta_max(requested, applied):
    reply = parse_inspect(json.dumps({"decision": "EXPAND", "expand_direction": "right",
                                      "expand_seconds": requested}))
    assert reply.expand_seconds == requested  # read exactly; the agent applies the clamp
    ctx = InspectContext("q", [], [], [], None, 1, 1000.0)
    ctx.observations.append(Observation("initial", (100.0, 160.0), (100.0, 160.0)))
    W, _, obs = expand_window((100.0, 160.0), ctx, reply.expand_direction, reply.expand_seconds,
                              30.0, _Movie(), 32, False)
    assert obs.applied == pytest.approx(applied) and W == (100.0, 160.0 + applied)


@pytest.mark.parametrize("value", [1.5, 2.5, 99.9, "1.5", float("nan"), "1e309"])
def test_confidence_that_is_neither_probability_nor_whole_percentage_is_unparsed(value):
    with pytest.raises(ReplyParseError):
        parse_confidence(value)


def test_whole_percentages_still_read():
    assert parse_confidence(80) == pytest.approx(0.8) and parse_confidence("1.5%") == pytest.approx(0.015)


# -- 4. inference settings ------------------------------------------------------------------------
def test_the_verifier_roles_ask_for_thinking_off_by_default():
    solver = ModelWindowSolver(ScriptedBackend())
    assert solver.decompose_params.thinking is False and solver.inspect_params.thinking is False
    assert solver.select_params.thinking is False
    server_default = solvers_for(ScriptedBackend(), SearchSettings(thinking=None))
    assert server_default.verifier.inspect_params.thinking is None
    assert server_default.localizer.params.thinking is None
    assert solvers_for(ScriptedBackend()).localizer.params.thinking is False


def test_the_localizer_is_its_own_model():
    verifier, loc = ScriptedBackend(), ScriptedBackend()
    solvers = solvers_for(verifier, SearchSettings(localize_cap=8), localizer_backend=loc)
    assert solvers.verifier.backend is verifier and solvers.localizer.backend is loc
    assert solvers.localizer.cap == 8  # the frame budget is a setting
    assert solvers_for(verifier).localizer.backend is verifier  # default: the verifier's backend
    mixed = solvers_for(resolve("baseline"), localizer_backend=loc)
    assert mixed.localizer.backend is loc
    assert isinstance(solvers_for(verifier, localizer_backend=resolve("baseline")).localizer,
                      SubtitleLocalizer)


def test_the_localizer_prompt_states_the_real_sampling():
    be = ScriptedBackend(fn=lambda req: "The event happens in 10 - 20 seconds")
    ModelLocalizer(be, cap=32).localize("q", (0.0, 210.0), FrameMovie())
    message = be.requests[0].messages[0]
    body, times = texts(message), frame_times(message)
    assert len(times) == 32 and "sampled at 1 fps" not in body
    assert "You are given 32 frames" in body and "one frame every 6.6 seconds" in body
    assert all(math.isclose(t, i * 210 / 32, abs_tol=0.0501) for i, t in enumerate(times))  # markers: 0.1 s
    be2 = ScriptedBackend(fn=lambda req: "The event happens in 10 - 20 seconds")
    ModelLocalizer(be2, cap=32).localize("q", (100.0, 120.0), FrameMovie())
    assert "20 frames" in texts(be2.requests[0].messages[0]) and \
        "one frame per second" in texts(be2.requests[0].messages[0])


def test_the_tab_sends_thinking_off_unless_the_box_is_unticked():
    from components.window_search.ui.handlers.search import search_settings

    assert search_settings(None, 5, 3, 30).thinking is False
    assert search_settings(None, 5, 3, 30, True).thinking is False
    assert search_settings(None, 5, 3, 30, False).thinking is None


def test_the_sessions_localizer_choice_is_used(monkeypatch):
    from components.settings.session import SessionSettings
    from components.window_search.ui import handlers

    verifier = ScriptedBackend()
    assert handlers.search._localizer_backend(SessionSettings(backend="openai:x").to_state(), verifier) is verifier
    chosen = handlers.search._localizer_backend(SessionSettings(backend="openai:x", localizer="baseline").to_state(),
                                         verifier)
    assert chosen is not verifier and chosen.is_baseline
