"""`python app.py compare <benchmark> A B` on real files through app.main: identical runs differ by
0 with p = 1, a hand-made Cloze case gives its known exact McNemar p-value, disagreeing items are
listed (all with --json), and runs on other data are refused with one line."""
from __future__ import annotations

import json

import pytest

from app import main
from tests.impact.clipdata import make_impact_data

OM = {"A": "GT", "B": "Rand1", "C": "Rand2", "D": "Rand3"}


def run(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def one_line_refusal(code: int, err: str, *parts: str) -> None:
    assert code == 2 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for part in parts:
        assert part in lines[0], (part, lines[0])


# -- grounding --------------------------------------------------------------------------------------
@pytest.fixture
def grounding_files(tmp_path):
    pairs = []
    for k in range(4):
        pairs.append({"pair_id": f"p{k}", "movie_id": "m", "contrast_attribute": "setting",
                      "target": {"qid": f"t{k}", "query": "q", "interval": [100 * k, 100 * k + 10]},
                      "confusable": {"qid": f"c{k}", "query": "q", "interval": [100 * k + 50, 100 * k + 60]}})
    ann = tmp_path / "a.json"
    ann.write_text(json.dumps({"movies": [{"movie_id": "m", "video": "m.mp4"}], "pairs": pairs}))
    exact = [{"qid": q[key]["qid"], "interval": q[key]["interval"], "source": "emitted"}
             for q in pairs for key in ("target", "confusable")]
    a = write_jsonl(tmp_path / "a.jsonl", exact)
    # B misses t0 entirely (IoU 0) and is half off on c1 (IoU 1/3)
    worse = [dict(r) for r in exact]
    worse[0]["interval"] = [500.0, 510.0]
    worse[3]["interval"] = [155.0, 165.0]
    b = write_jsonl(tmp_path / "b.jsonl", worse)
    return ann, a, b


def test_compare_grounding_identical_runs_differ_by_zero_with_p_one(grounding_files, capsys):
    ann, a, _ = grounding_files
    code, out, _ = run(["compare", "grounding", str(a), str(a), "--annotations", str(ann), "--json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert set(report["differences"]) == {"mIoU", "R@1@0.3", "R@1@0.5", "R@1@0.7",
                                          "PairSuccess@0.3", "PairSuccess@0.5", "PairSuccess@0.7"}
    for d in report["differences"].values():
        assert (d["diff"]["value"], d["diff"]["low"], d["diff"]["high"]) == (0.0, 0.0, 0.0)
        assert d["p_value"] == 1.0 and not d["significant"]
    assert report["differences"]["PairSuccess@0.5"]["diff"]["unit"] == "pairs"
    assert report["differences"]["mIoU"]["diff"]["units"] == 8
    assert report["disagreements"] == [] and report["items"] == 8


def test_compare_grounding_lists_the_disagreements_and_the_paired_difference(grounding_files, capsys):
    ann, a, b = grounding_files
    code, out, _ = run(["compare", "grounding", str(a), str(b), "--annotations", str(ann), "--json"], capsys)
    assert code == 0
    report = json.loads(out)
    miou = report["differences"]["mIoU"]
    assert miou["a"]["value"] == 100.0
    assert miou["diff"]["value"] == pytest.approx(round(100 * (1 + 2 / 3) / 8, 2), abs=0.01)
    assert miou["diff"]["low"] >= 0 and miou["p_value"] <= 1
    assert [r["qid"] for r in report["disagreements"]] == ["t0", "c1"]  # the largest IoU gap first
    assert report["disagreements"][0]["iou_b"] == 0.0 and report["disagreements"][0]["b"] == [500.0, 510.0]
    # the table: the first N, with the method stated
    code, out, _ = run(["compare", "grounding", str(a), str(b), "--annotations", str(ann), "--show", "1"], capsys)
    assert code == 0
    assert "disagreements: 2 of 8 queries; the first 1 (all with --json)" in out
    assert "t0" in out and "c1" not in out.split("disagreements:")[1]
    assert "2000 resamples, seed 0" in out


def test_compare_grounding_refuses_a_run_on_other_data(grounding_files, tmp_path, capsys):
    ann, a, _ = grounding_files
    other = write_jsonl(tmp_path / "other.jsonl", [{"qid": "x9", "interval": [0, 1]}])
    code, _, err = run(["compare", "grounding", str(a), str(other), "--annotations", str(ann)], capsys)
    one_line_refusal(code, err, str(other), "x9", "same data")


# -- cloze -----------------------------------------------------------------------------------------
def cloze_results(right: list[int], data_set: str = "cloze") -> dict:
    return {f"s{i}": {"S": {"answer": "A" if ok else "B", "expected": "A", "correct": bool(ok),
                            "option_map": OM, "data_set": data_set}}
            for i, ok in enumerate(right)}


def test_compare_cloze_gives_the_known_exact_mcnemar_p_value(tmp_path, capsys):
    # A right and B wrong on 1 question, B right and A wrong on 6: p = 2 * P[X <= 1] for
    # X ~ Bin(7, 1/2) = 2 * (1 + 7) / 128 = 0.125
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(cloze_results([1, 0, 0, 0, 0, 0, 0, 1, 1, 0])))
    b.write_text(json.dumps(cloze_results([0, 1, 1, 1, 1, 1, 1, 1, 1, 0])))
    code, out, _ = run(["compare", "cloze", str(a), str(b), "--json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["mcnemar"]["S"] == {"a_only_right": 1, "b_only_right": 6, "items": 10,
                                      "p_value": pytest.approx(0.125)}
    assert report["mcnemar"]["all"]["p_value"] == pytest.approx(0.125)
    s = report["differences"]["S"]
    assert (s["a"]["value"], s["b"]["value"], s["diff"]["value"]) == (30.0, 80.0, -50.0)
    assert s["diff"]["unit"] == "stems" and s["diff"]["low"] < -0 and s["diff"]["high"] <= 0
    assert len(report["disagreements"]) == 7
    assert report["disagreements"][0] == {"stem": "s0", "dim": "S", "pick_a": "GT", "pick_b": "Rand1",
                                          "right_a": True, "right_b": False}
    code, out, _ = run(["compare", "cloze", str(a), str(b)], capsys)
    assert "exact McNemar S: over 10 question(s) both runs answered, A only right 1, B only right 6, " \
           "p 0.1250" in out


def test_compare_cloze_identical_runs_differ_by_zero_with_p_one(tmp_path, capsys):
    a = tmp_path / "a.json"
    a.write_text(json.dumps(cloze_results([1, 0, 1, 1, 0, 1])))
    code, out, _ = run(["compare", "cloze", str(a), str(a), "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["disagreements"] == []
    assert report["mcnemar"]["S"]["p_value"] == 1.0
    assert report["differences"]["acc"]["diff"]["value"] == 0.0 and report["differences"]["acc"]["p_value"] == 1.0


def test_compare_cloze_refuses_runs_on_other_data(tmp_path, capsys):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(cloze_results([1, 0, 1], data_set="cloze")))
    b.write_text(json.dumps(cloze_results([1, 0, 1], data_set="other-set")))
    code, _, err = run(["compare", "cloze", str(a), str(b)], capsys)
    one_line_refusal(code, err, "other-set", "same data")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"zz": cloze_results([1])["s0"]}))
    code, _, err = run(["compare", "cloze", str(a), str(c)], capsys)
    one_line_refusal(code, err, "share no stem")
    # a grounding prediction file is no cloze result file
    g = write_jsonl(tmp_path / "g.jsonl", [{"qid": "q", "interval": [0, 1]}])
    code, _, err = run(["compare", "cloze", str(a), str(g)], capsys)
    assert code == 2 and "Traceback" not in err and "g.jsonl" in err


# -- impact ----------------------------------------------------------------------------------------
def test_compare_impact_temporal(tmp_path, capsys):
    g = write_jsonl(tmp_path / "g.jsonl", [{"qid": "q1", "relevant_windows": [[0, 1]]},
                                           {"qid": "q2", "relevant_windows": [[2, 3], [5, 6]]},
                                           {"qid": "q3", "relevant_windows": [[1, 2]]}])
    a = write_jsonl(tmp_path / "a.jsonl", [{"qid": "q1", "pred_relevant_windows": [[0, 1, 1.0]]},
                                           {"qid": "q2", "pred_relevant_windows": [[2, 3, 1.0]]},
                                           {"qid": "q3", "pred_relevant_windows": [[1, 2, 1.0]]}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"qid": "q1", "pred_relevant_windows": [[8, 9, 1.0]]},
                                           {"qid": "q2", "pred_relevant_windows": [[2, 3, 1.0]]}])
    code, out, _ = run(["compare", "impact-temporal", str(a), str(a), "--gt", str(g), "--json"], capsys)
    same = json.loads(out)
    assert code == 0 and same["disagreements"] == []
    assert all(d["diff"]["value"] == 0.0 and d["p_value"] == 1.0 for d in same["differences"].values())
    code, out, _ = run(["compare", "impact-temporal", str(a), str(b), "--gt", str(g), "--json"], capsys)
    report = json.loads(out)
    assert code == 0
    assert report["differences"]["mAP@0.3"]["b"]["value"] == pytest.approx(round(100 * 0.5 / 3, 2))
    assert report["differences"]["mAP@0.3"]["diff"]["units"] == 3  # q3 has no line in B: scored 0
    assert [r["qid"] for r in report["disagreements"]] == ["q1", "q3"]
    assert any("(1 without a line): scored as misses" in n for n in report["notes"])
    other = write_jsonl(tmp_path / "o.jsonl", [{"qid": "zz", "pred_relevant_windows": [[0, 1, 1.0]]}])
    code, _, err = run(["compare", "impact-temporal", str(a), str(other), "--gt", str(g)], capsys)
    one_line_refusal(code, err, "zz", "same data")


def test_compare_impact_spatial(tmp_path, capsys):
    ann = make_impact_data(tmp_path / "data")
    items = json.loads(ann.read_text())["items"]
    truth = [{"qid": it["qid"], "frame": int(f), "regions": fr["regions"]}
             for it in items for f, fr in it["frames"].items()]
    a = write_jsonl(tmp_path / "a.jsonl", truth)
    wrong = [dict(r, regions=["head"]) if i == 0 else r for i, r in enumerate(truth)]
    b = write_jsonl(tmp_path / "b.jsonl", wrong)
    code, out, _ = run(["compare", "impact-spatial", str(a), str(a), "--annotations", str(ann), "--json"], capsys)
    same = json.loads(out)
    assert code == 0 and same["disagreements"] == []
    assert same["differences"]["F1"]["diff"]["value"] == 0.0 and same["differences"]["F1"]["p_value"] == 1.0
    assert same["differences"]["F1"]["diff"]["unit"] == "queries"
    code, out, _ = run(["compare", "impact-spatial", str(a), str(b), "--annotations", str(ann), "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and len(report["disagreements"]) == 1
    row = report["disagreements"][0]
    assert (row["qid"], row["frame"], row["regions_b"]) == (truth[0]["qid"], truth[0]["frame"], ["head"])
    assert report["differences"]["F1"]["diff"]["value"] > 0
    other = write_jsonl(tmp_path / "o.jsonl", [{"qid": "nope", "frame": 1, "regions": ["head"]}])
    code, _, err = run(["compare", "impact-spatial", str(a), str(other), "--annotations", str(ann)], capsys)
    one_line_refusal(code, err, "nope#1", "same data")
