"""Inputs that used to pass silently and change a score (issue 19, "Nothing that could skew a
score passes silently"): each is refused with one line naming the file, the line and the key, or
handled as docs/decisions.md says and reported in the output. Through app.main, on real files."""
from __future__ import annotations

import json
import shutil

import pytest

from app import main
from components.common.batch import run_resumable
from components.base.io import read_jsonl, torn_path
from tests.impact.clipdata import make_impact_data

OM = {"A": "GT", "B": "Rand1", "C": "Rand2", "D": "Rand3"}


def run(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def refused(code: int, err: str, *parts: str) -> str:
    assert code == 2 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def impact_data(tmp_path_factory):
    return make_impact_data(tmp_path_factory.mktemp("data"))


def entry(answer: str) -> dict:
    return {"answer": answer, "expected": "A", "correct": answer == "A", "option_map": OM}


# -- eval cloze ------------------------------------------------------------------------------------
def test_a_stem_given_twice_in_a_result_file_is_refused_naming_its_line(tmp_path, capsys):
    # json keeps the last copy: S was 83.33 where the first copy gives 100
    path = tmp_path / "r.json"
    path.write_text('{\n "s1": {"S": ' + json.dumps(entry("A")) + '},\n "s2": {"S": '
                    + json.dumps(entry("A")) + '},\n "s1": {"S": ' + json.dumps(entry("B")) + '}\n}\n')
    code, _, err = run(["eval", "cloze", "--results", str(path), "--json"], capsys)
    refused(code, err, str(path), "line 4", "key 's1'", "twice")


def test_a_key_given_twice_inside_a_stem_is_refused_too(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text('{"s1": {"S": ' + json.dumps(entry("A")) + ',\n "S": ' + json.dumps(entry("B")) + '}}')
    code, _, err = run(["eval", "cloze", "--results", str(path)], capsys)
    refused(code, err, "line 2", "key 'S'")


def test_a_missing_dimension_is_counted_and_reported(tmp_path, capsys):
    results = {"s1": {"S": entry("A"), "A": entry("A"), "C": entry("A")},
               "s2": {"S": entry("B"), "A": entry("A")}}  # s2 lacks C
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results))
    code, out, err = run(["eval", "cloze", "--results", str(path), "--json"], capsys)
    m = json.loads(out)
    assert code == 0 and m["missing_entries"] == {"S": 0, "A": 0, "P": 1}
    assert m["P"] == 100.0                      # the released rule: the entries present
    assert m["strict"]["P"] == 50.0             # strict: the missing entry is wrong
    assert "1 stem(s) lack P" in err
    code, out, _ = run(["eval", "cloze", "--results", str(path)], capsys)
    assert "missing entries" in out and "P 1" in out


# -- eval impact ------------------------------------------------------------------------------------
@pytest.mark.parametrize("window, shown", [([3, 1], "[3.0, 1.0]"), ([-1, 2], "[-1.0, 2.0]"), ([2, 2], "[2.0, 2.0]")])
def test_a_reversed_or_negative_ground_truth_window_is_refused(tmp_path, capsys, window, shown):
    g = write_jsonl(tmp_path / "g.jsonl", [{"qid": "q1", "relevant_windows": [[0, 1]]},
                                           {"qid": "q2", "relevant_windows": [[5, 6], window]}])
    p = write_jsonl(tmp_path / "p.jsonl", [{"qid": "q1", "pred_relevant_windows": [[0, 1, 1.0]]}])
    code, _, err = run(["eval", "impact-temporal", "--gt", str(g), "--pred", str(p), "--json"], capsys)
    refused(code, err, "g.jsonl", "line 2", "relevant_windows", shown)


def test_a_ground_truth_line_without_windows_is_counted_and_named(tmp_path, capsys):
    g = write_jsonl(tmp_path / "g.jsonl", [{"qid": "q1", "relevant_windows": [[0, 1]]},
                                           {"qid": "q2", "relevant_windows": []}])
    p = write_jsonl(tmp_path / "p.jsonl", [{"qid": "q1", "pred_relevant_windows": [[0, 1, 1.0]]},
                                           {"qid": "q2", "pred_relevant_windows": [[0, 1, 1.0]]}])
    code, out, err = run(["eval", "impact-temporal", "--gt", str(g), "--pred", str(p), "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["num_queries"] == 1 and result["gt_without_windows"] == 1
    assert "1 ground-truth line(s) have no window" in err


def test_a_duplicate_spatial_prediction_is_refused(impact_data, tmp_path, capsys):
    p = write_jsonl(tmp_path / "s.jsonl", [{"qid": "h0001", "frame": 84, "regions": ["left calf"]},
                                           {"qid": "h0002", "frame": 30, "regions": ["head"]},
                                           {"qid": "h0001", "frame": 84, "regions": ["head"]}])
    code, _, err = run(["eval", "impact-spatial", "--annotations", str(impact_data), "--pred", str(p)], capsys)
    refused(code, err, "s.jsonl", "line 3", "qid 'h0001' frame 84", "first on line 1")


def test_an_unknown_region_label_names_the_file_and_the_line(impact_data, tmp_path, capsys):
    p = write_jsonl(tmp_path / "s.jsonl", [{"qid": "h0001", "frame": 84, "regions": ["left calf"]},
                                           {"qid": "h0001", "frame": 85, "regions": ["tail"]}])
    code, _, err = run(["eval", "impact-spatial", "--annotations", str(impact_data), "--pred", str(p)], capsys)
    refused(code, err, "s.jsonl", "line 2", "key 'regions'", "'tail'")
    # an unparsed answer's line is scored as nothing predicted whatever it lists: not refused
    write_jsonl(p, [{"qid": "h0001", "frame": 85, "regions": ["tail"], "error": "unparsed: no label"}])
    code, out, _ = run(["eval", "impact-spatial", "--annotations", str(impact_data), "--pred", str(p), "--json"],
                       capsys)
    assert code == 0 and json.loads(out)["invalid"] == 1


def test_eval_impact_spatial_carries_intervals_over_queries(impact_data, tmp_path, capsys):
    items = json.loads(impact_data.read_text())["items"]
    truth = [{"qid": it["qid"], "frame": int(f), "regions": fr["regions"]}
             for it in items for f, fr in it["frames"].items()]
    p = write_jsonl(tmp_path / "s.jsonl", truth[:-3])
    code, out, _ = run(["eval", "impact-spatial", "--annotations", str(impact_data), "--pred", str(p), "--json"],
                       capsys)
    result = json.loads(out)
    assert code == 0
    f1 = result["intervals"]["F1"]
    assert (f1["unit"], f1["units"], f1["resamples"], f1["seed"]) == ("queries", 2, 2000, 0)
    assert f1["value"] == round(result["F1"], 2) and f1["low"] <= f1["value"] <= f1["high"]
    code, again, _ = run(["eval", "impact-spatial", "--annotations", str(impact_data), "--pred", str(p), "--json"],
                         capsys)
    assert json.loads(again)["intervals"] == result["intervals"]


# -- eval grounding ---------------------------------------------------------------------------------
def test_a_grounding_prediction_before_zero_is_refused(tmp_path, capsys):
    ann = tmp_path / "a.json"
    ann.write_text(json.dumps({"movies": [{"movie_id": "m", "video": "m.mp4"}], "pairs": [
        {"pair_id": "p1", "movie_id": "m", "contrast_attribute": "setting",
         "target": {"qid": "t1", "query": "q", "interval": [0, 228]},
         "confusable": {"qid": "c1", "query": "q", "interval": [300, 310]}}]}))
    pred = write_jsonl(tmp_path / "p.jsonl", [{"qid": "c1", "interval": [300, 310]},
                                              {"qid": "t1", "interval": [-50, 228]}])
    code, _, err = run(["eval", "grounding", "--annotations", str(ann), "--predictions", str(pred)], capsys)
    refused(code, err, "p.jsonl", "line 2", "qid 't1'", "key 'interval'", "[-50, 228]", "before 0 s")


# -- torn last line, failures, run impact -----------------------------------------------------------
def test_a_torn_last_line_is_moved_aside_and_redone_on_resume(tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    out.write_text('{"qid": "a", "v": 1}\n{"qid": "b", "v": 2}\n{"qid": "c", "v"')  # cut mid-record
    counts = run_resumable(["a", "b", "c", "d"], key=str, work=lambda k: {"v": k}, out_path=out,
                           progress=False)
    assert counts == {"done": 2, "skipped": 2, "failed": 0, "stopped": 0}
    lines = out.read_text().splitlines()
    assert [json.loads(line)["qid"] for line in lines] == ["a", "b", "c", "d"]  # every line readable
    assert torn_path(out).read_bytes() == b'{"qid": "c", "v"\n'                 # the torn bytes kept
    assert "cut off mid-write" in capsys.readouterr().err


def test_a_whole_last_line_without_its_newline_is_kept(tmp_path):
    out = tmp_path / "p.jsonl"
    out.write_text('{"qid": "a", "v": 1}\n{"qid": "b", "v": 2}')
    counts = run_resumable(["a", "b", "c"], key=str, work=lambda k: {"v": k}, out_path=out, progress=False)
    assert counts == {"done": 1, "skipped": 2, "failed": 0, "stopped": 0}
    assert [r["qid"] for r in read_jsonl(out)] == ["a", "b", "c"] and not torn_path(out).exists()


def test_run_impact_resumes_a_torn_file_and_eval_reads_it(impact_data, tmp_path, capsys):
    argv = ["run", "impact", "--annotations", str(impact_data), "--backend", "baseline",
            "--out", str(tmp_path), "--tasks", "temporal", "--no-progress"]
    code, _, _ = run(argv, capsys)
    assert code == 0
    pred = tmp_path / "temporal_pred.jsonl"
    whole = pred.read_bytes()
    last = whole.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    pred.write_bytes(whole[: len(whole) - len(last) // 2 - 1])  # a power cut halfway through it
    code, _, err = run(argv, capsys)
    assert code == 0 and "cut off mid-write" in err
    assert len(read_jsonl(pred)) == 2 and torn_path(pred).exists()
    code, out, _ = run(["eval", "impact-temporal", "--gt", str(tmp_path / "temporal_gt.jsonl"),
                        "--pred", str(pred), "--json"], capsys)
    assert code == 0 and json.loads(out)["queries_without_prediction"] == 0


@pytest.mark.parametrize("progress", [False, True])
def test_each_failure_reason_is_printed_once_on_stderr(tmp_path, capsys, progress):
    def work(key: str) -> dict:
        raise RuntimeError(f"{key}: connection refused" if key != "z" else "disk full")

    counts = run_resumable(["x", "y", "z"], key=str, work=work, out_path=tmp_path / "p.jsonl",
                           progress=progress)
    err = capsys.readouterr().err
    assert counts["failed"] == 3
    assert err.count("connection refused") == 1 and "x failed: connection refused" in err
    assert "z failed: disk full" in err
    assert "3 item(s) failed for 2 distinct reason(s)" in err


def test_run_cloze_with_no_progress_says_why_an_item_failed(cloze_examples, tmp_path, capsys, monkeypatch):
    from tests.helpers.openai_server import ScriptedOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ScriptedOpenAIServer([{"status": 400, "body": {"error": {"message": "model not found"}}}]) as server:
        code, out, err = run(["run", "cloze", "--data", str(cloze_examples), "--backend", "openai:test-model",
                              "--base-url", server.url, "--out", str(tmp_path / "r.json"), "--limit", "2",
                              "--dims", "S", "--retry-sleep", "0", "--no-progress"], capsys)
    assert code == 1 and "2 failed" in out
    assert err.count("model not found") == 1 and "sk-test" not in err


def test_run_impact_with_a_missing_video_says_so_and_exits_non_zero(impact_data, tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(impact_data.parent, data)
    (data / "clips" / "h0002.mp4").unlink()
    code, _, err = run(["run", "impact", "--annotations", str(data / "annotations.json"), "--backend",
                        "baseline", "--out", str(tmp_path / "out"), "--tasks", "temporal", "--no-progress"],
                       capsys)
    assert code == 1
    assert "h0002 failed:" in err and "h0002.mp4" in err
    assert "1 item(s) failed (1 temporal" in err
    assert [r["qid"] for r in read_jsonl(tmp_path / "out" / "temporal_pred.jsonl")] == ["h0001"]
