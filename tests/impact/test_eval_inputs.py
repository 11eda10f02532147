"""Issue 28, "Eval inputs that still score silently": every impact prediction line that eval used to
score (or drop) without a word is refused (rc 2, one line naming file, line and key) or counted
(a key in the JSON, a note on stderr). Real files, `app.main` as the command line runs it."""
from __future__ import annotations

import json

import pytest

from tests.impact.clipdata import make_impact_data


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run_main(argv, capsys) -> tuple[int, str, str]:
    from app import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def gt(tmp_path):
    # as `run impact` writes it: the clip's duration on every line
    return write_jsonl(tmp_path / "temporal_gt.jsonl", [
        {"qid": "h1", "duration": 6.5, "relevant_windows": [[3.0, 3.5]]},
        {"qid": "h2", "duration": 5.0, "relevant_windows": [[1.0, 1.5], [3.0, 3.5]]}])


def temporal(gt, pred, capsys, *extra):
    return run_main(["eval", "impact-temporal", "--gt", str(gt), "--pred", str(pred), "--json", *extra], capsys)


@pytest.mark.parametrize(("windows", "says"), [
    ([[-1, 3.0, 1]], "window 0 [-1.0, 3.0] starts before 0 s"),
    ([[-3, -2, 1]], "window 0 [-3.0, -2.0] starts before 0 s"),
    ([[3.0, 2.875, 1]], "window 0 [3.0, 2.875] ends before it starts"),
    ([[1, 2, 0.5], [3, 3, 1]], "window 1 [3.0, 3.0] has no length"),
])
def test_malformed_temporal_windows_are_refused_naming_line_and_key(tmp_path, gt, capsys, windows, says):
    pred = write_jsonl(tmp_path / "P.jsonl", [{"qid": "h2", "pred_relevant_windows": [[1, 1.5, 1]]},
                                              {"qid": "h1", "pred_relevant_windows": windows}])
    code, out, err = temporal(gt, pred, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"P.jsonl: line 2, key 'pred_relevant_windows': {says}" in err
    assert "fix or remove the line" in err


def test_non_finite_window_is_refused(tmp_path, gt, capsys):
    pred = tmp_path / "P.jsonl"
    pred.write_text('{"qid": "h1", "pred_relevant_windows": [[0, Infinity, 1]]}\n')
    code, _, err = temporal(gt, pred, capsys)
    assert code == 2 and "P.jsonl: line 1, key 'pred_relevant_windows'" in err and "finite" in err


def test_status_typo_is_refused(tmp_path, gt, capsys):
    pred = write_jsonl(tmp_path / "P.jsonl", [{"qid": "h1", "pred_relevant_windows": [[3, 3.5, 1]],
                                               "status": "erorr"}])
    code, out, err = temporal(gt, pred, capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert "P.jsonl: line 1, key 'status': unknown status 'erorr'" in err


def test_known_statuses_still_score(tmp_path, gt, capsys):
    pred = write_jsonl(tmp_path / "P.jsonl", [
        {"qid": "h1", "pred_relevant_windows": [[3, 3.5, 1]], "status": "ok"},
        {"qid": "h2", "pred_relevant_windows": [[1, 1.5, 1]], "status": "fallback:whole-clip"}])
    code, out, _ = temporal(gt, pred, capsys)
    assert code == 0 and json.loads(out)["fallbacks"] == 1


@pytest.mark.parametrize("window", [[0, 1e300, 1], [3.0, 7.0, 1], [6.6, 7.0, 1]])
def test_window_past_the_clip_is_scored_as_given_and_counted(tmp_path, gt, capsys, window):
    pred = write_jsonl(tmp_path / "P.jsonl", [{"qid": "h1", "pred_relevant_windows": [window]},
                                              {"qid": "h2", "pred_relevant_windows": [[1, 1.5, 1]]}])
    code, out, err = temporal(gt, pred, capsys)
    result = json.loads(out)
    assert code == 0 and result["windows_beyond_clip"] == 1
    assert any("windows_beyond_clip" in n and "P.jsonl line 1" in n for n in result["notes"])
    assert "end after their clip" in err and "ends after the clip (6.5 s)" in err
    # scored as the released evaluation scores it: not clipped (h1's IoU stays below 0.3)
    assert result["R1@0.3"] == pytest.approx(50.0)


def test_window_ending_at_the_clip_end_is_not_counted(tmp_path, gt, capsys):
    pred = write_jsonl(tmp_path / "P.jsonl", [{"qid": "h1", "pred_relevant_windows": [[3, 6.5, 1]]}])
    code, out, err = temporal(gt, pred, capsys)
    assert code == 0 and json.loads(out)["windows_beyond_clip"] == 0 and "after their clip" not in err


def test_unknown_qids_are_counted_and_named(tmp_path, gt, capsys):
    pred = write_jsonl(tmp_path / "P.jsonl", [{"qid": "h1", "pred_relevant_windows": [[3, 3.5, 1]]},
                                              {"qid": "zz", "pred_relevant_windows": [[3, 3.5, 1]]},
                                              {"qid": "yy", "pred_relevant_windows": []}])
    code, out, err = temporal(gt, pred, capsys)
    result = json.loads(out)
    assert code == 0 and result["ignored_unknown_items"] == 2
    assert "2 prediction line(s) for qids not in the ground truth were ignored" in err
    assert "P.jsonl line 3, qid 'yy'" in err or "P.jsonl line 2, qid 'zz'" in err
    code, out, err = run_main(["eval", "impact-temporal", "--gt", str(gt), "--pred", str(pred)], capsys)
    assert code == 0 and "prediction lines for unknown qids (ignored)" in out


def test_a_file_of_another_split_is_refused(tmp_path, gt, capsys):
    pred = write_jsonl(tmp_path / "P.jsonl", [{"qid": "x1", "pred_relevant_windows": [[3, 3.5, 1]]},
                                              {"qid": "x2", "pred_relevant_windows": []}])
    code, out, err = temporal(gt, pred, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "none of its 2 prediction line(s) is for a qid of the ground truth" in err
    assert "P.jsonl line 1, qid 'x1'" in err


def test_an_empty_prediction_file_is_scored_and_counted(tmp_path, gt, capsys):
    pred = tmp_path / "P.jsonl"
    pred.write_text("")
    code, out, err = temporal(gt, pred, capsys)
    assert code == 0 and json.loads(out)["queries_without_prediction"] == 2
    assert "2 query(ies) have no prediction line" in err


# -- spatial -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def annotations(tmp_path_factory):
    return make_impact_data(tmp_path_factory.mktemp("data"))


def spatial(annotations, pred, capsys, *extra):
    return run_main(["eval", "impact-spatial", "--annotations", str(annotations), "--pred", str(pred),
                     "--json", *extra], capsys)


def _all_frames() -> list[dict]:
    return ([{"qid": "h0001", "frame": f, "regions": ["left calf"]} for f in range(83, 87)]
            + [{"qid": "h0002", "frame": f, "regions": ["head"]} for f in (30, 31, 90, 91, 92, 93)])


@pytest.mark.parametrize("frame", [-1, 0])
def test_a_frame_below_1_is_refused(tmp_path, annotations, capsys, frame):
    pred = write_jsonl(tmp_path / "S.jsonl", [*_all_frames(), {"qid": "h0001", "frame": frame, "regions": []}])
    code, out, err = spatial(annotations, pred, capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"S.jsonl: line 11, key 'frame': frame {frame} is no frame: frames are 1-based" in err


def test_unannotated_frames_and_unknown_qids_are_counted(tmp_path, annotations, capsys):
    pred = write_jsonl(tmp_path / "S.jsonl", [*_all_frames(),
                                              {"qid": "h0001", "frame": 9999, "regions": ["head"]},
                                              {"qid": "h0001", "frame": 5, "regions": ["head"]},
                                              {"qid": "nope", "frame": 84, "regions": ["head"]}])
    code, out, err = spatial(annotations, pred, capsys)
    result = json.loads(out)
    assert code == 0 and result["num_frames"] == 10
    assert result["ignored_unannotated_frames"] == 2 and result["ignored_unknown_items"] == 1
    assert "2 prediction line(s) for frames that are not annotated" in err
    assert "S.jsonl line 11, qid 'h0001' frame 9999" in err
    assert "1 prediction line(s) for qids not in the annotations" in err and "S.jsonl line 13" in err
    assert len(result["notes"]) == 2


def test_a_spatial_file_of_another_set_is_refused(tmp_path, annotations, capsys):
    pred = write_jsonl(tmp_path / "S.jsonl", [{"qid": "h0001", "frame": 9999, "regions": ["head"]},
                                              {"qid": "other", "frame": 3, "regions": ["head"]}])
    code, out, err = spatial(annotations, pred, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "S.jsonl: none of its 2 prediction line(s) is for an annotated frame" in err


def test_missing_frame_lines_get_a_note(tmp_path, annotations, capsys):
    pred = write_jsonl(tmp_path / "S.jsonl", _all_frames()[:7])
    code, out, err = spatial(annotations, pred, capsys)
    result = json.loads(out)
    assert code == 0 and result["frames_without_prediction"] == 3
    assert "3 annotated frame(s) have no prediction line" in err


def test_an_empty_spatial_file_gets_a_count_and_a_note(tmp_path, annotations, capsys):
    pred = tmp_path / "S.jsonl"
    pred.write_text("")
    code, out, err = spatial(annotations, pred, capsys)
    result = json.loads(out)
    assert code == 0 and result["frames_without_prediction"] == 10
    assert "S.jsonl holds no prediction line: all 10 annotated frame(s)" in err
    code, out, err = run_main(["eval", "impact-spatial", "--annotations", str(annotations),
                               "--pred", str(pred)], capsys)
    assert code == 0 and "frames_without_prediction" in out and "holds no prediction line" in err
