"""Issue 13, "nothing guessed": an unparsed or failed answer is never scored as a prediction."""
from __future__ import annotations

import json
import re

import pytest

from components.base.io import read_jsonl
from components.impact.data import load_annotations
from components.impact.pipeline import evaluate_spatial
from components.impact.metrics.temporal import AS_MISS, evaluate_temporal
from tests.impact.clipdata import make_impact_data
from tests.impact.test_cli import run_cli

GT = [{"qid": "q1", "relevant_windows": [[1.0, 2.0]]}, {"qid": "q2", "relevant_windows": [[3.0, 4.0]]}]


def test_unparsed_and_error_lines_are_scored_empty_whatever_windows_they_list():
    # the windows of q2 would be a perfect hit: a line that says it is unparsed must not score them
    pred = [{"qid": "q1", "pred_relevant_windows": [[1.0, 2.0, 1.0]], "status": "ok"},
            {"qid": "q2", "pred_relevant_windows": [[3.0, 4.0, 1.0]], "status": "unparsed"}]
    # no prediction: left out as QV-M2 leaves a query with no window (issue 35), or a miss
    result = evaluate_temporal(GT, pred)
    assert result["mAP@0.3"] == pytest.approx(100.0) and result["num_queries"] == 1
    assert result["invalid"] == 1 and result["unparsed"] == 1 and result["left_out"] == 1
    result = evaluate_temporal(GT, pred, no_prediction=AS_MISS)
    assert result["mAP@0.3"] == pytest.approx(50.0) and result["R1@0.3"] == pytest.approx(50.0)
    assert result["num_queries"] == 2
    pred[1]["status"] = "error"
    result = evaluate_temporal(GT, pred, no_prediction=AS_MISS)
    assert result["mAP@0.3"] == pytest.approx(50.0) and result["errors"] == 1
    pred[1]["status"] = "fallback:whole clip"
    assert evaluate_temporal(GT, pred)["fallbacks"] == 1
    assert evaluate_temporal(GT, pred)["num_queries"] == 1
    pred[1]["status"] = "ok"
    assert evaluate_temporal(GT, pred)["mAP@0.3"] == pytest.approx(100.0)
    assert evaluate_temporal(GT, pred)["num_queries"] == 2


@pytest.fixture(scope="module")
def impact_data(tmp_path_factory):
    return make_impact_data(tmp_path_factory.mktemp("data"))


def test_unparsed_region_lines_are_scored_as_nothing_predicted(impact_data):
    annotations = load_annotations(impact_data)
    truth = {(item.qid, frame): {"regions": list(ann.regions)} for item in annotations.split(None)
             for frame, ann in item.frames.items()}
    assert evaluate_spatial(annotations, truth)["F1"] == pytest.approx(100.0)
    key = next(iter(truth))
    spoiled = dict(truth)
    spoiled[key] = {**truth[key], "error": "unparsed: no body-region label found in the reply"}
    result = evaluate_spatial(annotations, spoiled)
    assert result["invalid"] == 1 and result["unparsed"] == 1
    assert result["F1"] == pytest.approx(100.0 * (len(truth) - 1) / len(truth))


def test_a_garbage_server_gives_no_scored_prediction_and_the_counts_are_shown(impact_data, tmp_path,
                                                                              capsys, monkeypatch):
    from tests.helpers.openai_server import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    garbage = ["I count 3, 4 or 5 impacts", "<think>[[3.4, 3.6]]", "The ball hit him, but nothing else.",
               "had", ", ".join(["head", "neck", "chest", "back", "left upper arm", "left forearm",
                                 "left hand", "right upper arm", "right forearm", "right hand", "butt",
                                 "hip", "left thigh", "left calf", "left foot", "right thigh",
                                 "right calf", "right foot"])]
    with ScriptedOpenAIServer(lambda body: garbage[len(json.dumps(body)) % len(garbage)]) as server:
        code, out, err = run_cli(["run", "impact", "--annotations", str(impact_data), "--backend",
                                  "openai:gpt-4o", "--base-url", server.url, "--out", str(tmp_path),
                                  "--max-frames", "8", "--no-progress"], capsys)
    assert code == 0
    summary = json.loads(out[:out.rindex("}") + 1])
    preds = read_jsonl(tmp_path / "temporal_pred.jsonl")
    spatial = read_jsonl(tmp_path / "spatial_pred.jsonl")
    assert len(preds) == summary["items"] and len(spatial) >= 10
    assert summary["temporal_answers"] == {"unparsed": len(preds)}
    assert summary["spatial_answers"] == {"unparsed": len(spatial)}
    assert f"temporal: {len(preds)} answer(s) were not parsed" in err
    assert f"spatial: {len(spatial)} answer(s)" in err
    assert all(p["pred_relevant_windows"] == [] and p["method"].startswith("openai:gpt-4o")
               for p in preds)  # no baseline stands in for the model
    assert all(s["regions"] == [] and s["error"].startswith("unparsed") for s in spatial)
    code, out, _ = run_cli(["eval", "impact-temporal", "--gt", str(tmp_path / "temporal_gt.jsonl"),
                            "--pred", str(tmp_path / "temporal_pred.jsonl")], capsys)
    assert re.search(rf"^invalid answers \(unparsed/error/fallback: no prediction\) +{len(preds)}$", out, re.M)
    code, out, _ = run_cli(["eval", "impact-spatial", "--annotations", str(impact_data),
                            "--pred", str(tmp_path / "spatial_pred.jsonl"), "--json"], capsys)
    result = json.loads(out)
    assert result["F1"] == 0.0 and result["invalid"] == result["num_frames"] == len(spatial)
