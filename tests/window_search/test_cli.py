"""`eval grounding` / `run grounding` through app.build_parser (docs/formats.md keys, resumable runs)."""
from __future__ import annotations

import json

import pytest

from app import build_parser
from components.base.io import read_jsonl
from tests.helpers.openai_server import ScriptedOpenAIServer

KEYS = {"mIoU", "R@1@0.3", "R@1@0.5", "R@1@0.7", "PairSuccess@0.3", "PairSuccess@0.5", "PairSuccess@0.7",
        "num_queries", "num_pairs"}


def _run(argv) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


def test_eval_json_keys_and_values(tmp_path, capsys):
    ann = tmp_path / "a.json"
    ann.write_text(json.dumps({"movies": [{"movie_id": "m", "video": "m.mp4"}], "pairs": [
        {"pair_id": "p1", "movie_id": "m", "contrast_attribute": "setting",
         "target": {"qid": "t1", "query": "q", "interval": [0, 10]},
         "confusable": {"qid": "c1", "query": "q", "interval": [20, 30]}},
        {"pair_id": "p2", "movie_id": "m", "contrast_attribute": "subject",
         "target": {"qid": "t2", "query": "q", "interval": [0, 10]},
         "confusable": {"qid": "c2", "query": "q", "interval": [40, 50]}}]}))
    pred = tmp_path / "p.jsonl"
    pred.write_text('{"qid": "t1", "interval": [0, 10]}\n{"qid": "c1", "interval": [22, 30]}\n'
                    '{"qid": "t2", "interval": [5, 15]}\n')  # c2 missing
    assert _run(["eval", "grounding", "--annotations", str(ann), "--predictions", str(pred), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # no windows in the predictions: no diagnostics; the source counts are always there (issue 13)
    assert set(out) == KEYS | {"counts", "scored_fallbacks", "intervals", "ignored_unknown_items",
                               "intervals_beyond_movie", "movies_without_duration", "notes"}
    assert out["movies_without_duration"] == 1  # m.mp4 is not on disk: ends not checked, said so
    assert out["counts"]["model"] == 3 and out["counts"]["missing"] == 1
    assert out["mIoU"] == pytest.approx(100 * (1 + 0.8 + 1 / 3 + 0) / 4)
    assert out["R@1@0.7"] == pytest.approx(50.0)
    assert out["PairSuccess@0.3"] == pytest.approx(50.0) and out["PairSuccess@0.7"] == pytest.approx(50.0)
    assert (out["num_queries"], out["num_pairs"]) == (4, 2)
    # every score with its interval, over its own unit: queries for mIoU and R@1, pairs for
    # PairSuccess; the interval holds the score and is the same for the same files
    cis = out["intervals"]
    assert set(cis) == set(KEYS) - {"num_queries", "num_pairs"}
    assert (cis["mIoU"]["unit"], cis["mIoU"]["units"]) == ("queries", 4)
    assert (cis["PairSuccess@0.3"]["unit"], cis["PairSuccess@0.3"]["units"]) == ("pairs", 2)
    assert cis["mIoU"]["value"] == round(out["mIoU"], 2)
    assert (cis["mIoU"]["resamples"], cis["mIoU"]["seed"], cis["mIoU"]["level"]) == (2000, 0, 0.95)
    for ci in cis.values():
        assert ci["low"] <= ci["value"] <= ci["high"]
    assert 0 <= cis["PairSuccess@0.3"]["low"] and cis["PairSuccess@0.3"]["high"] <= 100
    assert _run(["eval", "grounding", "--annotations", str(ann), "--predictions", str(pred), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["intervals"] == cis
    assert _run(["eval", "grounding", "--annotations", str(ann), "--predictions", str(pred)]) == 0
    table = capsys.readouterr().out
    assert "PairSuccess@0.5" in table and "over 2 pairs" in table and "2000 resamples, seed 0" in table


def test_run_rag_is_resumable_and_eval_prints_diagnostics(grounding_examples, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    ann = grounding_examples / "annotations.json"
    out, traces = tmp_path / "p.jsonl", tmp_path / "t.jsonl"
    base = ["run", "grounding", "--annotations", str(ann), "--backend", "baseline", "--out", str(out),
            "--traces", str(traces), "--method", "rag", "--k", "2"]
    assert _run(base + ["--limit", "2"]) == 0
    assert [r["qid"] for r in read_jsonl(out)] == ["p0001_t", "p0001_c"]
    assert _run(base + ["--limit", "3"]) == 0  # resumes: only the third query is new
    assert [r["qid"] for r in read_jsonl(out)] == ["p0001_t", "p0001_c", "p0002_t"]
    assert len(read_jsonl(traces)) == 3 and read_jsonl(traces)[0]["text_only_baseline"] is True
    capsys.readouterr()
    assert _run(["eval", "grounding", "--annotations", str(ann), "--predictions", str(out), "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["num_queries"] == 14 and metrics["diagnostics"]["num_with_window"] == 3


def test_run_against_an_api_backend_concurrently(grounding_examples, tmp_path, monkeypatch):
    """Movie RAG with a real HTTP model server as localizer, 3 queries in flight; no secret in traces."""
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-test-key")
    out, traces = tmp_path / "p.jsonl", tmp_path / "t.jsonl"
    with ScriptedOpenAIServer(['{"start": 10, "end": 40}']) as server:
        assert _run(["run", "grounding", "--annotations", str(grounding_examples / "annotations.json"),
                     "--backend", "openai:test-vlm", "--base-url", server.url, "--method", "rag",
                     "--out", str(out), "--traces", str(traces), "--concurrency", "3", "--limit", "4"]) == 0
        assert len(server.requests) == 4
    records = read_jsonl(out)
    assert sorted(r["qid"] for r in records) == ["p0001_c", "p0001_t", "p0002_c", "p0002_t"]
    for r in records:  # the reply is read inside the window (relative times when outside it)
        assert r["interval"] == [r["window"][0] + 10, r["window"][0] + 40]
    text = traces.read_text()
    assert "sk-secret-test-key" not in text and '"backend": "openai:test-vlm"' in text


def test_a_failing_api_leaves_queries_for_the_next_run(grounding_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "p.jsonl"
    argv = ["run", "grounding", "--annotations", str(grounding_examples / "annotations.json"),
            "--backend", "openai:test-vlm", "--method", "rag", "--out", str(out), "--limit", "2"]
    with ScriptedOpenAIServer([{"status": 400, "body": {"error": {"message": "bad request"}}}]) as server:
        assert _run(argv + ["--base-url", server.url]) == 1  # both failed: nothing written
    assert read_jsonl(out) == []
    with ScriptedOpenAIServer(['{"start": 1, "end": 2}']) as server:
        assert _run(argv + ["--base-url", server.url]) == 0
    assert len(read_jsonl(out)) == 2


def test_every_line_names_its_backend_and_a_resume_with_another_is_refused(grounding_examples, tmp_path,
                                                                           monkeypatch, capsys):
    # issue 28: grounding lines carried no backend, so two models in one file could not be seen
    from app import main

    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out, traces = tmp_path / "p.jsonl", tmp_path / "t.jsonl"
    argv = ["run", "grounding", "--annotations", str(grounding_examples / "annotations.json"),
            "--method", "rag", "--out", str(out), "--traces", str(traces), "--no-progress"]
    with ScriptedOpenAIServer(['{"start": 1, "end": 2}']) as server:
        assert main(argv + ["--backend", "openai:model-a", "--base-url", server.url, "--limit", "2"]) == 0
        asked = len(server.requests)
        capsys.readouterr()
        assert main(argv + ["--backend", "openai:model-b", "--base-url", server.url, "--limit", "4"]) == 2
        assert len(server.requests) == asked
    err = capsys.readouterr().err
    assert "openai:model-a" in err and "openai:model-b" in err and "p.jsonl" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert [r["backend"] for r in read_jsonl(out)] == ["openai:model-a"] * 2
    assert [r["backend"] for r in read_jsonl(traces)] == ["openai:model-a"] * 2


def test_a_torn_last_trace_line_is_moved_aside_before_new_lines(grounding_examples, tmp_path, monkeypatch,
                                                                capsys):
    # issue 28: new trace lines were appended after the fragment of a killed run's last line
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    ann = grounding_examples / "annotations.json"
    out, traces = tmp_path / "p.jsonl", tmp_path / "t.jsonl"
    base = ["run", "grounding", "--annotations", str(ann), "--backend", "baseline", "--out", str(out),
            "--traces", str(traces), "--method", "rag", "--k", "2", "--no-progress"]
    assert _run(base + ["--limit", "1"]) == 0
    whole = traces.read_bytes()
    traces.write_bytes(whole + whole[: len(whole) // 2])          # a second line cut mid-write
    capsys.readouterr()
    assert _run(base + ["--limit", "2"]) == 0
    err = capsys.readouterr().err
    assert "t.jsonl: its last line was cut off mid-write" in err and "t.jsonl.torn" in err
    lines = traces.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["qid"] for line in lines)   # every line reads
    assert (tmp_path / "t.jsonl.torn").read_bytes() == whole[: len(whole) // 2] + b"\n"
