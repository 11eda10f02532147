"""`python app.py eval impact-temporal|impact-spatial` and `run impact` through app.build_parser."""
from __future__ import annotations

import json

import pytest

from components.base.errors import UserError

from components.base.io import read_jsonl
from tests.impact.clipdata import make_impact_data

TEMPORAL_KEYS = {"mAP@0.3", "R1@0.3", "G-mAP", "@1_tgt", "@2_tgt", "@3+tgt", "mR@1", "mR@2", "mR@3",
                 "num_queries"}
SPATIAL_KEYS = {"F1", "precision", "recall", "geodesic_cm"} | {
    f"F1_{g}" for g in ("head", "torso", "arms", "hips", "legs", "hands", "feet")}


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    from app import build_parser

    args = build_parser().parse_args(argv)
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def impact_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    return make_impact_data(root)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_eval_impact_temporal_json_keys_and_values(tmp_path, capsys):
    # q1: the AP = 5/9 example of test_temporal_metrics; q2: found exactly; q3: no prediction line
    g = write_jsonl(tmp_path / "g.jsonl", [
        {"qid": "q1", "relevant_windows": [[0, 1], [2, 3], [4, 5]]},
        {"qid": "q2", "relevant_windows": [[1, 1.25]]},
        {"qid": "q3", "relevant_windows": [[1, 2]]}])
    p = write_jsonl(tmp_path / "p.jsonl", [
        {"qid": "q1", "pred_relevant_windows": [[0, 1, 0.9], [0.1, 1.1, 0.8], [2.5, 3.5, 0.7], [6, 7, 0.6]]},
        {"qid": "q2", "pred_relevant_windows": [[1, 1.25, 1.0]], "raw": "[[1, 1.25]]"}])
    # q3 has no prediction line: refused as QV-M2's qid check refuses it, naming the qid and --partial
    with pytest.raises(UserError, match=r"1 ground-truth query has no prediction line: 'q3' .*--partial"):
        run_cli(["eval", "impact-temporal", "--gt", str(g), "--pred", str(p), "--json"], capsys)
    code, out, _ = run_cli(["eval", "impact-temporal", "--gt", str(g), "--pred", str(p), "--json",
                            "--no-prediction-as-miss", "--partial"], capsys)
    assert code == 0
    result = json.loads(out)
    assert TEMPORAL_KEYS <= set(result)
    # the stricter reading: q3 scored as an empty prediction (AP 0) and counted
    assert result["num_queries"] == 3 and result["queries_without_prediction"] == 1
    assert result["scored_as_miss"] == 1 and result["no_prediction_rule"] == "miss"
    assert result["mAP@0.3"] == pytest.approx(100 * (5 / 9 + 1 + 0) / 3)
    assert result["R1@0.3"] == pytest.approx(100 * 2 / 3)
    assert result["@1_tgt"] == pytest.approx(50.0) and result["@2_tgt"] is None
    cis = result["intervals"]
    assert set(cis) == set(TEMPORAL_KEYS) - {"num_queries"}
    assert all(ci["unit"] == "queries" and ci["units"] == 3 for ci in cis.values())
    assert cis["mAP@0.3"]["value"] == round(result["mAP@0.3"], 2)
    assert cis["mAP@0.3"]["low"] <= cis["mAP@0.3"]["value"] <= cis["mAP@0.3"]["high"]
    code, out, err = run_cli(["eval", "impact-temporal", "--gt", str(g), "--pred", str(p),
                              "--partial", "--no-prediction-as-miss"], capsys)
    assert code == 0 and "mAP@0.3" in out and "51.85" in out
    assert "95 % interval" in out and "over 3 queries" in out
    assert "queries with no prediction (scored as misses: --no-prediction-as-miss)" in out
    assert "stricter reading" in err
    # the default with --partial: q3 is left out, as QV-M2's match_number=False leaves it
    code, out, err = run_cli(["eval", "impact-temporal", "--gt", str(g), "--pred", str(p), "--json",
                              "--partial"], capsys)
    result = json.loads(out)
    assert code == 0 and result["num_queries"] == 2 and result["left_out"] == 1
    assert result["mAP@0.3"] == pytest.approx(100 * (5 / 9 + 1) / 2)
    assert "1 query with no prediction (1 without a prediction line), left out as the reference" in err


def test_eval_user_error_is_one_readable_line(tmp_path, capsys):
    from app import main

    bad = write_jsonl(tmp_path / "p.jsonl", [{"qid": "q1"}])
    code = main(["eval", "impact-temporal", "--gt", str(bad), "--pred", str(bad), "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "missing required key 'relevant_windows'" in err and "Traceback" not in err


def test_run_impact_baseline_is_resumable_and_feeds_both_evals(impact_data, tmp_path, capsys):
    out_dir = tmp_path / "run"
    argv = ["run", "impact", "--annotations", str(impact_data), "--backend", "baseline",
            "--out", str(out_dir), "--split", "test", "--no-progress"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0
    preds = read_jsonl(out_dir / "temporal_pred.jsonl")
    gts = read_jsonl(out_dir / "temporal_gt.jsonl")
    spatial = read_jsonl(out_dir / "spatial_pred.jsonl")
    assert sorted(p["qid"] for p in preds) == ["h0001", "h0002"]
    assert all(p["method"] == "motion-energy baseline (no model)" for p in preds)
    assert gts[0]["relevant_windows"] == [[82 / 24, 86 / 24]]
    assert len(spatial) == 4 + 6 and {"qid", "frame", "regions", "raw"} <= set(spatial[0])
    by_key = {(s["qid"], s["frame"]): s["regions"] for s in spatial}
    assert by_key[("h0001", 84)] == ["left calf", "right calf"]  # "knees" -> calves (text-only)
    assert by_key[("h0002", 30)] == ["head"]                     # "face" -> head
    # resumable: a second run asks nothing again
    code, out, _ = run_cli(argv, capsys)
    summary = json.loads(out[:out.rindex("}") + 1])
    assert summary["temporal"]["done"] == 0 and summary["temporal"]["skipped"] == 2
    assert summary["spatial"]["done"] == 0 and summary["spatial"]["skipped"] == 10
    assert len(read_jsonl(out_dir / "temporal_pred.jsonl")) == 2

    code, out, _ = run_cli(["eval", "impact-temporal", "--gt", str(out_dir / "temporal_gt.jsonl"),
                            "--pred", str(out_dir / "temporal_pred.jsonl"), "--json"], capsys)
    temporal = json.loads(out)
    assert temporal["num_queries"] == 2 and temporal["R1@0.3"] > 0  # the block jumps are found
    code, out, _ = run_cli(["eval", "impact-spatial", "--annotations", str(impact_data),
                            "--pred", str(out_dir / "spatial_pred.jsonl"), "--json"], capsys)
    spatial_result = json.loads(out)
    assert SPATIAL_KEYS <= set(spatial_result)
    # h0001 frames: exact (F1 100) ; h0002 frames 30-31 exact, 90-93 predict head only vs head+neck
    assert spatial_result["num_frames"] == 10 and spatial_result["frames_without_prediction"] == 0
    assert spatial_result["F1_legs"] == pytest.approx(100.0)
    assert 0 < spatial_result["F1"] < 100


def test_run_impact_with_an_api_backend(impact_data, tmp_path, capsys, monkeypatch):
    from tests.helpers.openai_server import ScriptedOpenAIServer

    def answer(body):
        text = json.dumps(body)
        if "body regions physically affected" in text:
            return "The affected body regions are head."
        return "The event happens in 3.417 - 3.583 seconds."

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ScriptedOpenAIServer(answer) as server:
        code, out, _ = run_cli(["run", "impact", "--annotations", str(impact_data), "--backend",
                                "openai:gpt-4o", "--base-url", server.url, "--out", str(tmp_path),
                                "--concurrency", "2", "--max-frames", "16", "--no-progress"], capsys)
    assert code == 0
    preds = {p["qid"]: p for p in read_jsonl(tmp_path / "temporal_pred.jsonl")}
    assert preds["h0001"]["pred_relevant_windows"] == [[3.417, 3.583, 1.0]]
    assert preds["h0001"]["prompt_style"] == "gpt" and preds["h0001"]["num_frames_sent"] == 16
    assert preds["h0001"]["raw"] == "The event happens in 3.417 - 3.583 seconds."
    spatial = read_jsonl(tmp_path / "spatial_pred.jsonl")
    assert len(spatial) == 10 and all(s["regions"] == ["head"] for s in spatial)


def test_backend_failures_are_not_saved_and_a_rerun_resumes(impact_data, tmp_path, capsys, monkeypatch):
    from tests.helpers.openai_server import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    argv = ["run", "impact", "--annotations", str(impact_data), "--backend", "openai:qwen-vl",
            "--out", str(tmp_path), "--max-frames", "8", "--no-progress", "--tasks", "temporal"]
    with ScriptedOpenAIServer([{"status": 400, "body": {"error": {"message": "bad request"}}}]) as server:
        code, out, err = run_cli(argv + ["--base-url", server.url], capsys)
    assert code == 1 and "rerun the same command" in err
    summary = json.loads(out[:out.rindex("}") + 1])
    assert summary["temporal"]["failed"] == 2 and summary["temporal"]["done"] == 0
    assert read_jsonl(tmp_path / "temporal_pred.jsonl") == []
    with ScriptedOpenAIServer(["[[3.4, 3.6]]"]) as server:
        code, out, _ = run_cli(argv + ["--base-url", server.url], capsys)
    summary = json.loads(out[:out.rindex("}") + 1])
    assert summary["temporal"]["done"] == 2
    assert [p["status"] for p in read_jsonl(tmp_path / "temporal_pred.jsonl")] == ["ok", "ok"]
    assert "sk-test" not in out


def test_run_impact_with_a_table7_row_chosen_by_prompt_style(impact_data, tmp_path, capsys, monkeypatch):
    from tests.helpers.openai_server import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ScriptedOpenAIServer(["The event happens in 3.417 - 3.583 seconds."]) as server:
        code, _, _ = run_cli(["run", "impact", "--annotations", str(impact_data), "--backend",
                              "openai:gpt-4o", "--base-url", server.url, "--out", str(tmp_path),
                              "--tasks", "temporal", "--prompt-style", "timelens", "--max-frames", "8",
                              "--no-progress"], capsys)
    assert code == 0
    texts = [part["text"] for part in server.requests[0]["messages"][0]["content"]
             if part.get("type") == "text"]
    assert texts[-1].startswith("You are given a video with multiple frames. The numbers before")
    assert texts[0] == "0.000" or texts[0].replace(".", "").isdigit()  # each frame after its time
    preds = read_jsonl(tmp_path / "temporal_pred.jsonl")
    assert all(p["prompt_style"] == "timelens" and "timelens prompt" in p["method"] for p in preds)
    assert preds[0]["pred_relevant_windows"] == [[3.417, 3.583, 1.0]]


def test_a_resume_with_another_backend_or_prompt_style_is_refused_naming_both(impact_data, tmp_path, capsys,
                                                                               monkeypatch):
    # issue 28: a resume with another model appended its answers to the first model's file
    from app import main
    from tests.helpers.openai_server import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    argv = ["run", "impact", "--annotations", str(impact_data), "--out", str(tmp_path), "--split", "test",
            "--no-progress"]
    assert main(argv + ["--backend", "baseline"]) == 0
    assert {s["backend"] for s in read_jsonl(tmp_path / "spatial_pred.jsonl")} == {"baseline"}
    assert {p["backend"] for p in read_jsonl(tmp_path / "temporal_pred.jsonl")} == {"baseline"}
    capsys.readouterr()
    with ScriptedOpenAIServer(["[[3.4, 3.6]]"]) as server:
        assert main(argv + ["--backend", "openai:gpt-4o", "--base-url", server.url]) == 2
        assert server.requests == []
    err = capsys.readouterr().err
    assert "temporal_pred.jsonl" in err and "backend baseline" in err and "backend openai:gpt-4o" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    out = tmp_path / "api"
    api = ["run", "impact", "--annotations", str(impact_data), "--out", str(out), "--tasks", "temporal",
           "--backend", "openai:gpt-4o", "--max-frames", "8", "--no-progress"]
    with ScriptedOpenAIServer(["The event happens in 3.417 - 3.583 seconds."]) as server:
        assert main(api + ["--base-url", server.url, "--split", "test"]) == 0
        capsys.readouterr()
        assert main(api + ["--base-url", server.url, "--prompt-style", "timelens"]) == 2
    err = capsys.readouterr().err
    assert "prompt_style gpt" in err and "prompt_style timelens" in err
