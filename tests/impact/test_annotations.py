"""Impact annotation format (docs/formats.md): conversion and clear errors on malformed files."""
from __future__ import annotations

import copy
import json

import pytest

from components.base.errors import DataFormatError
from components.impact.data import (load_annotations, load_qv_gt, load_qv_pred, load_spatial_pred,
                                    moment_to_seconds)

GOOD = {"fps": 24, "items": [{
    "qid": "h0001", "video": "clips/h0001.mp4", "query": "A man is struck behind the knees by a staff.",
    "split": "test", "movie": "tt0000001", "num_frames": 156, "moments": [[83, 86], [120, 120]],
    "frames": {"84": {"regions": ["left calf", "right calf"], "vertices": [4312, 4313]},
               "120": {"regions": ["head"]}}, "source_note": "kept"}]}


def write(tmp_path, data, name="annotations.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_conversion_is_1_based_inclusive():
    assert moment_to_seconds([83, 86], 24) == (82 / 24, 86 / 24)
    assert moment_to_seconds([1, 1], 24) == (0.0, 1 / 24)


def test_loads_the_documented_example(tmp_path):
    ann = load_annotations(write(tmp_path, GOOD))
    item = ann.items[0]
    assert ann.fps == 24.0 and item.video == tmp_path / "clips" / "h0001.mp4"
    assert item.moments == [(83, 86), (120, 120)]
    assert item.frames[84].vertices == [4312, 4313] and item.frames[120].vertices is None
    assert item.extra == {"source_note": "kept"}
    assert item.gt_record()["relevant_windows"] == [[82 / 24, 86 / 24], [119 / 24, 120 / 24]]
    assert item.duration == pytest.approx(6.5)
    assert [i.qid for i in ann.split("test")] == ["h0001"]
    with pytest.raises(DataFormatError, match="no item has split 'val'"):
        ann.split("val")


def mutate(fn):
    data = copy.deepcopy(GOOD)
    fn(data)
    return data


@pytest.mark.parametrize("data,message", [
    ("{not json", "not valid JSON"),
    ([], "expected an object"),
    ({"fps": 24}, "missing required key 'items'"),
    ({"fps": 0, "items": []}, "'fps'"),
    (mutate(lambda d: d["items"][0].pop("query")), r"items\[0\] \(qid 'h0001'\): missing required key 'query'"),
    (mutate(lambda d: d["items"][0].pop("moments")), "missing required key 'moments'"),
    (mutate(lambda d: d["items"][0].update(num_frames="156")), "'num_frames' must be a positive integer"),
    (mutate(lambda d: d["items"][0].update(qid=7)), "'qid' must be a non-empty string"),
    (mutate(lambda d: d["items"][0].update(moments=[[83, 200]])), r"out of range.*num_frames=156"),
    (mutate(lambda d: d["items"][0].update(moments=[[0, 3]])), "1-based"),
    (mutate(lambda d: d["items"][0].update(moments=[[86, 83]])), "start frame 86 is after end frame 83"),
    (mutate(lambda d: d["items"][0].update(moments=[[83.5, 86]])), "two integers"),
    (mutate(lambda d: d["items"].append(copy.deepcopy(d["items"][0]))), "duplicate qid"),
    (mutate(lambda d: d["items"][0]["frames"].update({"400": {"regions": ["head"]}})), "out of range 1..156"),
    (mutate(lambda d: d["items"][0]["frames"].update({"x": {"regions": ["head"]}})), "frame keys"),
    (mutate(lambda d: d["items"][0]["frames"].update({"90": {"vertices": [1]}})), "'regions'"),
    (mutate(lambda d: d["items"][0]["frames"].update({"90": {"regions": ["head"], "vertices": ["a"]}})),
     "'vertices'"),
])
def test_malformed_files_raise_a_clear_error(tmp_path, data, message):
    path = write(tmp_path, data)
    with pytest.raises(DataFormatError, match=message) as info:
        load_annotations(path)
    assert str(path) in str(info.value)


def test_missing_file_names_it(tmp_path):
    with pytest.raises(DataFormatError, match="not found"):
        load_annotations(tmp_path / "nope.json")


def test_unknown_region_label_is_rejected(tmp_path):
    data = mutate(lambda d: d["items"][0]["frames"].update({"90": {"regions": ["kneecap left"]}}))
    with pytest.raises(DataFormatError, match="unknown region label"):
        load_annotations(write(tmp_path, data))


def test_qvhighlights_jsonl_readers(tmp_path):
    g = tmp_path / "g.jsonl"
    g.write_text('{"qid": "a", "relevant_windows": [[0, 1]]}\n\n{"qid": 2, "relevant_windows": []}\n')
    assert [r["qid"] for r in load_qv_gt(g)] == ["a", "2"]
    p = tmp_path / "p.jsonl"
    p.write_text('{"qid": "a", "pred_relevant_windows": [[0, 1, 0.9]], "raw": "x"}\n')
    assert load_qv_pred(p)[0]["raw"] == "x"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "a", "pred_relevant_windows": [[0, 1]]}\n')
    with pytest.raises(DataFormatError, match=r"line 1.*\[start, end, score\]"):
        load_qv_pred(bad)
    bad.write_text('{"qid": "a"}\n')
    with pytest.raises(DataFormatError, match="missing required key 'relevant_windows'"):
        load_qv_gt(bad)
    bad.write_text('{"qid": "a", "relevant_windows": [[0, 1]]}\n{"qid": "a", "relevant_windows": []}\n')
    with pytest.raises(DataFormatError, match="duplicate qid 'a'"):
        load_qv_gt(bad)
    bad.write_text("{oops\n")
    with pytest.raises(DataFormatError, match="line 1 is not valid JSON"):
        load_qv_gt(bad)
    s = tmp_path / "s.jsonl"
    s.write_text('{"qid": "a", "frame": 84, "regions": ["head"]}\n')
    assert load_spatial_pred(s)[("a", 84)]["regions"] == ["head"]
