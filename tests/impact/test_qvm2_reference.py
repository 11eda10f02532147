"""Issue 35: HAPACT temporal scores equal QV-M2's standalone evaluation, number for number to 2
decimals, on multi-moment cases with empty prediction lists and windows starting before 0 s.
The reference is the transcription in tests/impact/qvm2_reference.py (independent of the app)."""
from __future__ import annotations

import json
import random

import pytest

from components.impact.metrics.temporal import AS_MISS, evaluate_temporal, no_prediction_note
from tests.impact.qvm2_reference import eval_submission

ROW = ("mAP@0.3", "R1@0.3", "G-mAP", "@1_tgt", "@2_tgt", "@3+tgt", "mR@1", "mR@2", "mR@3")
G1, G2 = [0.0, 10.0], [20.0, 30.0]
J = [50.0, 55.0]  # overlaps no moment


def hit(moment: list[float], level: int) -> list[float]:
    """A window whose IoU with `moment` passes the lowest `level` of the thresholds 0.1..0.5:
    5 -> 10/10.5 (it starts 0.5 s before the moment: before 0 s for G1), 3 -> .35, 2 -> .25, 1 -> .15."""
    s = moment[0]
    return {5: [s - 0.5, s + 10], 3: [s, s + 3.5], 2: [s, s + 2.5], 1: [s, s + 1.5]}[level]


def line(qid: str, *listed: tuple[list[float], float]) -> dict:
    """A prediction line: windows in the order listed, each with its score (the AP sorts by score,
    R1 and Recall@k take the listed order)."""
    return {"qid": qid, "pred_relevant_windows": [[w[0], w[1], score] for w, score in listed]}


def twelve_queries() -> tuple[list[dict], list[dict]]:
    """Issue 35's 12-query shape: 6 one-moment and 6 two-moment queries, one of them (q12) with an
    empty list. Per query, what it adds (T: AP summed over the 5 thresholds, S3: AP@0.3, R1 hit,
    m1 / m2: Recall@1 / @2 matches summed over the thresholds):
      q1 hit first, alone          T 5      S3 1     R1 1  m1 5
      q2 hit 3rd by score          T 5/3    S3 1/3
      q3 hit 4th by score          T 5/4    S3 1/4
      q4 hit 10th by score         T 1/2    S3 1/10
      q5 IoU .25 listed first, 2nd by score  T 1   m1 2
      q6 IoU .15 listed first, 3rd by score  T 1/3 m1 1
      q7 both hits listed first, 4th/5th by score: AP .4   T 2  S3 .4  R1 1  m1 5  m2 10
      q8 IoU .35 on G1 first and 1st by score: AP .5 to .3   T 3/2  S3 1/2  R1 1  m1 3  m2 3
      q9 junk first, G2 hit 2nd: AP .25     T 5/4  S3 1/4  m2 5
      q10 G1 hit listed 3rd, 2nd by score   T 5/4  S3 1/4
      q11 IoU .35 hit 4th                   T 3/8  S3 1/8
      q12 empty list
    Over the 11 scored queries: T 129/8 -> G-mAP 29.32; S3 77/24 -> mAP@0.3 29.17; R1 3/11 = 27.27;
    the two-moment group T 51/8 over 5 -> @2_tgt 25.50; Recall@1 5,4,3,2,2 of 11 -> mR@1 29.09;
    Recall@2 18 of 5 x 10 -> mR@2 36.00."""
    gt = [{"qid": f"q{i}", "duration": 60.0, "relevant_windows": [G1]} for i in range(1, 7)]
    gt += [{"qid": f"q{i}", "duration": 60.0, "relevant_windows": [G1, G2]} for i in range(7, 13)]
    pred = [
        line("q1", (hit(G1, 5), 0.9)),
        line("q2", (J, 0.9), (J, 0.8), (hit(G1, 5), 0.7)),
        line("q3", (J, 0.9), (J, 0.8), (J, 0.7), (hit(G1, 5), 0.6)),
        line("q4", *[(J, 0.9 - 0.05 * i) for i in range(9)], (hit(G1, 5), 0.1)),
        line("q5", (hit(G1, 2), 0.5), (J, 0.9)),
        line("q6", (hit(G1, 1), 0.3), (J, 0.9), (J, 0.8)),
        line("q7", (hit(G1, 5), 0.3), (hit(G2, 5), 0.2), (J, 0.9), (J, 0.8), (J, 0.7)),
        line("q8", (hit(G1, 3), 0.9), (J, 0.5)),
        line("q9", (J, 0.9), (hit(G2, 5), 0.5)),
        line("q10", (J, 0.9), (J, 0.3), (hit(G1, 5), 0.6)),
        line("q11", (J, 0.9), (J, 0.8), (J, 0.7), (hit(G1, 3), 0.6)),
        line("q12"),
    ]
    return gt, pred


def rounded(result: dict) -> dict:
    return {k: None if result.get(k) is None else round(result[k], 2) for k in ROW}


def test_the_issues_twelve_query_file_gives_qv_m2s_row():
    gt, pred = twelve_queries()
    reference = eval_submission(pred, gt)
    issue_row = {"mAP@0.3": 29.17, "R1@0.3": 27.27, "G-mAP": 29.32, "@2_tgt": 25.50, "mR@1": 29.09,
                 "mR@2": 36.00}
    assert {k: reference[k] for k in issue_row} == issue_row   # the case is the issue's case
    app = rounded(evaluate_temporal(gt, pred))
    assert {k: app[k] for k in issue_row} == issue_row
    assert app == {k: reference.get(k) for k in ROW}           # every number of the row
    result = evaluate_temporal(gt, pred)
    assert result["num_queries"] == 11 and result["left_out"] == 1
    assert no_prediction_note(result).startswith("1 query with no prediction (1 empty window list(s)")
    # the stricter reading gives the issue's "app" row (the old default)
    strict = rounded(evaluate_temporal(gt, pred, no_prediction=AS_MISS))
    assert {k: strict[k] for k in ("mAP@0.3", "R1@0.3", "@2_tgt", "mR@1", "mR@2")} == \
        {"mAP@0.3": 26.74, "R1@0.3": 25.00, "@2_tgt": 21.25, "mR@1": 26.67, "mR@2": 30.00}
    assert strict["G-mAP"] == pytest.approx(26.875, abs=0.006)


def random_case(seed: int) -> tuple[list[dict], list[dict]]:
    """1..5 moments per query on a quarter-second grid, 0..12 predictions: empty lists, starts
    before 0 s, zero-length windows, equal scores and duplicate windows."""
    rng = random.Random(seed)
    gt, pred = [], []
    for q in range(rng.randint(8, 30)):
        starts = sorted(rng.sample(range(0, 80), rng.randint(1, 5)))
        moments = [[s / 4, (s + rng.randint(1, 12)) / 4] for s in starts]
        gt.append({"qid": f"q{q}", "relevant_windows": moments})
        windows = []
        for _ in range(rng.choice([0, 0, 1, 2, 3, 5, 8, 12])):
            if rng.random() < 0.6:
                s, e = rng.choice(moments)
                s, e = s + rng.choice([-0.75, -0.25, 0, 0.25]), e + rng.choice([-0.25, 0, 0.5])
            else:
                s = rng.randint(-8, 90) / 4
                e = s + rng.randint(0, 16) / 4
            windows.append([s - rng.choice([0, 0, 1.5]) if s < 2 else s, e, rng.choice([0.5, 0.9, round(rng.random(), 3)])])
        windows = [w for w in windows if w[1] >= w[0]]
        pred.append({"qid": f"q{q}", "pred_relevant_windows": windows})
    return gt, pred


@pytest.mark.parametrize("seed", range(40))
def test_every_number_equals_qv_m2_on_random_multi_moment_cases(seed):
    gt, pred = random_case(seed)
    assert any(not p["pred_relevant_windows"] for p in pred) or seed % 7  # empty lists are common
    reference = eval_submission(pred, gt)
    app = rounded(evaluate_temporal(gt, pred))
    if reference["queries"] == 0:
        assert app["mAP@0.3"] is None
        return
    for key in ROW:
        if key in ("@1_tgt", "@2_tgt") and key not in reference:
            assert app[key] is None, key                      # the reference has no such group
        else:
            assert app[key] == reference[key], key


def test_the_random_cases_hold_what_the_issue_asks_for():
    cases = [random_case(seed) for seed in range(40)]
    windows = [w for _, pred in cases for p in pred for w in p["pred_relevant_windows"]]
    assert sum(1 for w in windows if w[0] < 0) >= 20
    assert sum(1 for _, pred in cases for p in pred if not p["pred_relevant_windows"]) >= 40
    assert sum(1 for gt, _ in cases for g in gt if len(g["relevant_windows"]) >= 3) >= 40


def test_partial_equals_qv_m2s_match_number_false(tmp_path, capsys):
    from app import main

    gt, pred = random_case(3)
    kept = pred[::2]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gt))
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in kept))
    with pytest.raises(AssertionError):
        eval_submission(kept, gt)                                 # QV-M2 refuses the file ...
    argv = ["eval", "impact-temporal", "--gt", str(tmp_path / "g.jsonl"), "--pred", str(tmp_path / "p.jsonl"),
            "--json"]
    assert main(argv) == 2 and "--partial" in capsys.readouterr().err   # ... and so does the app
    reference = eval_submission(kept, gt, match_number=False)
    assert main([*argv, "--partial"]) == 0
    app = rounded(json.loads(capsys.readouterr().out))
    for key in ("mAP@0.3", "R1@0.3", "G-mAP", "@3+tgt"):
        assert app[key] == reference[key], key
