"""Issue 28, "Eval inputs that still score silently", for `eval grounding`: lines for unknown qids
counted and named, a file of another set refused, an interval past the movie's end (read from the
video's header) scored as given and counted. Real files and a real video, `app.main`."""
from __future__ import annotations

import json

import numpy as np
import pytest


def run_main(argv, capsys) -> tuple[int, str, str]:
    from app import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def annotations(tmp_path):
    from components.media import write_video_from_arrays

    frames = [np.full((32, 48, 3), 10 * (i % 20), dtype=np.uint8) for i in range(240)]  # 10 s at 24 fps
    write_video_from_arrays(frames, tmp_path / "m.mp4", 24)
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"movies": [{"movie_id": "m", "video": "m.mp4"}], "pairs": [
        {"pair_id": "p1", "movie_id": "m", "contrast_attribute": "setting",
         "target": {"qid": "t1", "query": "q", "interval": [0, 2]},
         "confusable": {"qid": "c1", "query": "q", "interval": [5, 8]}}]}))
    return path


def write_lines(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def grounding(annotations, pred, capsys, *extra):
    return run_main(["eval", "grounding", "--annotations", str(annotations), "--predictions", str(pred),
                     *extra], capsys)


def test_an_interval_past_the_movie_is_scored_as_given_and_counted(tmp_path, annotations, capsys):
    pred = write_lines(tmp_path / "P.jsonl", [{"qid": "t1", "interval": [0, 2]},
                                              {"qid": "c1", "interval": [5, 1e300]}])
    code, out, err = grounding(annotations, pred, capsys, "--json")
    m = json.loads(out)
    assert code == 0 and m["intervals_beyond_movie"] == 1 and m["movies_without_duration"] == 0
    assert m["mIoU"] == pytest.approx(50.0)  # as given: IoU of [5, 1e300] with [5, 8] is ~0
    assert "P.jsonl line 2, key 'interval': [5.0, 1e+300] ends after the movie 'm' (10.0 s)" in err
    code, out, err = grounding(annotations, pred, capsys)
    assert code == 0 and "intervals ending after the movie (scored as given): 1" in out


def test_an_interval_inside_the_movie_is_not_counted(tmp_path, annotations, capsys):
    pred = write_lines(tmp_path / "P.jsonl", [{"qid": "t1", "interval": [0, 10]}])
    code, out, err = grounding(annotations, pred, capsys, "--json")
    assert code == 0 and json.loads(out)["intervals_beyond_movie"] == 0 and "after their movie" not in err


def test_unknown_qids_are_counted_in_json_and_named(tmp_path, annotations, capsys):
    pred = write_lines(tmp_path / "P.jsonl", [{"qid": "t1", "interval": [0, 2]},
                                              {"qid": "zz", "interval": [0, 2]}])
    code, out, err = grounding(annotations, pred, capsys, "--json")
    m = json.loads(out)
    assert code == 0 and m["ignored_unknown_items"] == 1
    assert any("P.jsonl line 2, qid 'zz'" in n for n in m["notes"])
    assert "1 prediction line(s) for qids not in the annotations were ignored" in err


def test_a_file_of_another_set_is_refused(tmp_path, annotations, capsys):
    pred = write_lines(tmp_path / "P.jsonl", [{"qid": "x1", "interval": [0, 2]}])
    code, out, err = grounding(annotations, pred, capsys, "--json")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "none of its 1 prediction line(s) is for a qid of a.json (e.g. " in err
