"""Grounding metrics (docs/metrics.md) on hand-computed cases, and annotation/prediction validation."""
from __future__ import annotations

import json

import pytest

from components.base.errors import DataFormatError
from components.window_search.data import load_annotations, load_predictions
from components.window_search.metrics import METRIC_KEYS, evaluate, grounding_metrics, temporal_iou, \
    window_bound_iou


def test_temporal_iou_edge_cases():
    assert temporal_iou([0, 10], [5, 15]) == pytest.approx(5 / 15)
    assert temporal_iou([0, 10], [0, 10]) == 1.0
    assert temporal_iou([0, 10], [10, 20]) == 0.0           # touching
    assert temporal_iou([2, 4], [0, 10]) == pytest.approx(0.2)  # inside
    assert temporal_iou([5, 5], [0, 10]) == 0.0             # e == s is invalid
    assert temporal_iou([6, 5], [0, 10]) == 0.0             # e < s is invalid
    assert temporal_iou(None, [0, 10]) == 0.0               # missing
    assert temporal_iou(["a", 3], [0, 10]) == 0.0           # non-numeric
    assert temporal_iou([0, float("nan")], [0, 10]) == 0.0


def test_window_bound_is_covered_share_of_gt():
    assert window_bound_iou([0, 180], [150, 210]) == pytest.approx(0.5)
    assert window_bound_iou([0, 180], [200, 260]) == 0.0
    assert window_bound_iou([0, 180], [10, 20]) == 1.0


def test_metrics_hand_computed():
    pairs = [("p1", [("a", [0, 10]), ("b", [100, 110])]),
             ("p2", [("c", [0, 10]), ("d", [50, 60])]),
             ("p3", [("e", [0, 10]), ("f", [20, 30])])]
    preds = {"a": [0, 10],      # 1.0
             "b": [100, 105],   # 0.5
             "c": [0, 6],       # 0.6
             "d": [52, 60],     # 0.8
             "e": [0, 4],       # 0.4
             # f missing -> 0
             }
    m = grounding_metrics(pairs, preds)
    assert list(m) == list(METRIC_KEYS)
    assert m["mIoU"] == pytest.approx(100 * (1.0 + 0.5 + 0.6 + 0.8 + 0.4 + 0) / 6)
    assert m["R@1@0.3"] == pytest.approx(100 * 5 / 6)
    assert m["R@1@0.5"] == pytest.approx(100 * 4 / 6)
    assert m["R@1@0.7"] == pytest.approx(100 * 2 / 6)
    assert m["PairSuccess@0.3"] == pytest.approx(100 * 2 / 3)  # p1, p2; p3 has a missing query
    assert m["PairSuccess@0.5"] == pytest.approx(100 * 2 / 3)  # p1 (1.0, 0.5), p2 (0.6, 0.8)
    assert m["PairSuccess@0.7"] == 0.0                          # p1 fails on b, p2 on c
    assert (m["num_queries"], m["num_pairs"]) == (6, 3)


def test_no_predictions_at_all_keeps_every_pair_in_the_denominator():
    m = grounding_metrics([("p1", [("a", [0, 1]), ("b", [2, 3])])], {})
    assert m["mIoU"] == 0.0 and m["PairSuccess@0.3"] == 0.0 and m["num_pairs"] == 1


def _ann(tmp_path, pairs=None, movies=None):
    data = {"movies": movies if movies is not None else [{"movie_id": "m01", "video": "movies/m01.mp4"}],
            "pairs": pairs if pairs is not None else [
                {"pair_id": "p1", "movie_id": "m01", "contrast_attribute": "setting",
                 "target": {"qid": "p1_t", "query": "snow walk", "interval": [0, 60]},
                 "confusable": {"qid": "p1_c", "query": "desert walk", "interval": [200, 260]}}]}
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(data))
    return path


def test_annotations_load_and_evaluate_with_window_diagnostics(tmp_path):
    ann = load_annotations(_ann(tmp_path))
    assert [q.qid for q in ann.queries] == ["p1_t", "p1_c"]
    assert ann.query("p1_c").partner_qid == "p1_t" and ann.query("p1_t").contrast_attribute == "setting"
    assert ann.movie("m01").video == tmp_path / "movies" / "m01.mp4"
    preds_path = tmp_path / "p.jsonl"
    preds_path.write_text('{"qid": "p1_t", "interval": [0, 30], "window": [0, 180]}\n'
                          '{"qid": "p1_c", "interval": [10, 20], "window": [0, 180]}\n')
    m = evaluate(ann, load_predictions(preds_path))
    assert m["mIoU"] == pytest.approx(25.0)
    assert m["diagnostics"]["retrieval_miss"] == pytest.approx(50.0)
    assert m["diagnostics"]["oracle_localizer_mIoU"] == pytest.approx(50.0)  # (60/60 + 0) / 2


def test_missing_key_names_file_record_and_key(tmp_path):
    pairs = [{"pair_id": "p1", "movie_id": "m01", "contrast_attribute": "setting",
              "target": {"qid": "p1_t", "interval": [0, 60]},
              "confusable": {"qid": "p1_c", "query": "x", "interval": [200, 260]}}]
    with pytest.raises(DataFormatError) as err:
        load_annotations(_ann(tmp_path, pairs))
    msg = str(err.value)
    assert "ann.json" in msg and "pairs[0]" in msg and "target" in msg and "'query'" in msg


def test_duplicate_qid_and_bad_intervals_are_errors(tmp_path):
    q = {"qid": "dup", "query": "x", "interval": [0, 10]}
    pairs = [{"pair_id": "p1", "movie_id": "m01", "contrast_attribute": "subject", "target": q, "confusable": q}]
    with pytest.raises(DataFormatError, match="duplicate qid 'dup'"):
        load_annotations(_ann(tmp_path, pairs))
    bad = [{"pair_id": "p1", "movie_id": "m01", "contrast_attribute": "subject",
            "target": {"qid": "a", "query": "x", "interval": [10, 5]},
            "confusable": {"qid": "b", "query": "y", "interval": [0, 1]}}]
    with pytest.raises(DataFormatError, match="'interval'"):
        load_annotations(_ann(tmp_path, bad))
    late = [{"pair_id": "p1", "movie_id": "m01", "contrast_attribute": "subject",
             "target": {"qid": "a", "query": "x", "interval": [0, 5]},
             "confusable": {"qid": "b", "query": "y", "interval": [100, 900]}}]
    with pytest.raises(DataFormatError, match="ends after the movie 'm01'"):
        load_annotations(_ann(tmp_path, late), durations={"m01": 880.0})
    unknown_movie = [{**late[0], "movie_id": "m99"}]
    with pytest.raises(DataFormatError, match="'m99' is not listed"):
        load_annotations(_ann(tmp_path, unknown_movie))


def test_predictions_errors_and_invalid_intervals(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text('{"qid": "a", "interval": [5, 5]}\n{"qid": "b", "interval": "soon"}\n')
    preds = load_predictions(p)
    assert preds["a"].interval is None and preds["b"].interval is None  # invalid -> IoU 0, no error
    p.write_text('{"qid": "a", "interval": [0, 1]}\n{"interval": [0, 1]}\n')
    with pytest.raises(DataFormatError, match="line 2 has no key 'qid'"):
        load_predictions(p)
    p.write_text('{"qid": "a", "interval": [0, 1]}\n{"qid": "a", "interval": [0, 2]}\n')
    with pytest.raises(DataFormatError, match="duplicate qid 'a'"):
        load_predictions(p)
