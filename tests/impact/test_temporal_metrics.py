"""HAPACT temporal metrics (docs/metrics.md), worked by hand."""
from __future__ import annotations

import pytest

from components.impact.metrics.temporal import AS_MISS, average_precision, evaluate_temporal, \
    no_prediction_note, temporal_iou

THR = (0.1, 0.2, 0.3, 0.4, 0.5)


def gt(qid, *windows):
    return {"qid": qid, "relevant_windows": [list(w) for w in windows]}


def pred(qid, *windows):
    return {"qid": qid, "pred_relevant_windows": [list(w) for w in windows]}


def test_ap_with_several_gt_windows_worked_by_hand():
    # GT: G1=[0,1], G2=[2,3], G3=[4,5]  (#GT = 3)
    # P1=[0,1] s.9   IoU(G1)=1            -> TP, locks G1
    # P2=[.1,1.1] s.8 IoU(G1)=.9/1.1=.818 but G1 locked; next GT by IoU is G2 with 0 < .3 -> FP
    # P3=[2.5,3.5] s.7 IoU(G2)=.5/1.5=.333 >= .3 -> TP (at .4 it is an FP)
    # P4=[6,7] s.6   IoU 0                -> FP
    # t=.3: cumTP 1,1,2,2  cumFP 0,1,1,2 -> recall 1/3,1/3,2/3,2/3  precision 1,.5,2/3,.5
    #   envelope with (0,0) prepended and (1,0) appended: p = 1,1,2/3,2/3,.5,0 over r = 0,1/3,1/3,2/3,2/3,1
    #   AP = (1/3)*1 + (1/3)*(2/3) + (1/3)*0 = 5/9
    # t=.4: cumTP 1,1,1,1 -> only the first step counts: AP = (1/3)*1 = 1/3
    g = [[0, 1], [2, 3], [4, 5]]
    # listed out of score order on purpose: AP sorts by score
    p = [[2.5, 3.5, 0.7], [0, 1, 0.9], [6, 7, 0.6], [0.1, 1.1, 0.8]]
    ap = average_precision(g, p, [0.3, 0.4])
    assert ap[0] == pytest.approx(5 / 9)
    assert ap[1] == pytest.approx(1 / 3)
    result = evaluate_temporal([gt("q", *g)], [pred("q", *p)])
    assert result["mAP@0.3"] == pytest.approx(100 * 5 / 9)


def test_ap_keeps_the_first_ten_listed_predictions_only():
    g = [[0, 1]]
    misses = [[5 + i * 0.1, 5.05 + i * 0.1, 0.5] for i in range(10)]
    hit_listed_eleventh = [0, 1, 0.99]
    assert average_precision(g, misses + [hit_listed_eleventh], [0.3])[0] == 0.0
    assert average_precision(g, [hit_listed_eleventh] + misses, [0.3])[0] == pytest.approx(1.0)


def test_temporal_iou():
    assert temporal_iou([0, 2], [1, 3]) == pytest.approx(1 / 3)
    assert temporal_iou([0, 1], [2, 3]) == 0.0


def perfect(qid, windows):
    return pred(qid, *[[s, e, 1 - 0.1 * i] for i, (s, e) in enumerate(windows)])


def test_g_map_groups_and_3plus_is_the_unweighted_mean_of_group_means():
    three = [[0, 1], [2, 3], [4, 5]]
    four = [[0, 1], [2, 3], [4, 5], [6, 7]]
    gts = [gt("a3", *three), gt("b3", *three), gt("c4", *four), gt("d1", [0, 1]), gt("e2", [0, 1], [3, 4])]
    preds = [perfect("a3", three),                  # AP 1 at every threshold
             pred("b3", [9, 9.5, 0.9]),             # AP 0
             perfect("c4", four),                   # AP 1
             perfect("d1", [[0, 1]]),               # AP 1
             pred("e2", [0, 1, 0.9], [8, 9, 0.5])]  # t: TP then FP -> p 1,.5 r .5,.5 -> AP .5
    r = evaluate_temporal(gts, preds)
    assert r["@1_tgt"] == pytest.approx(100.0)
    assert r["@2_tgt"] == pytest.approx(50.0)
    # group 3: (1 + 0)/2 = .5 ; group 4: 1 -> unweighted mean .75 (a per-query mean would be 2/3)
    assert r["@3+tgt"] == pytest.approx(75.0)
    # G-mAP = mean over all queries = (1 + 0 + 1 + 1 + .5) / 5
    assert r["G-mAP"] == pytest.approx(100 * 3.5 / 5)
    assert r["num_queries"] == 5


def test_mr_at_k_excludes_queries_with_fewer_predictions_than_k():
    gts = [gt("qA", [0, 1], [2, 3]), gt("qB", [0, 1], [2, 3], [4, 5]), gt("qC", [0, 1])]
    preds = [pred("qA", [0, 1, 0.9], [2, 3, 0.8]),
             pred("qB", [4, 5, 0.9]),                 # one prediction: out of mR@2 and mR@3
             pred("qC", [3, 4, 0.9], [0, 1, 0.8])]    # top-1 misses
    r = evaluate_temporal(gts, preds)
    assert r["mR@1"] == pytest.approx(66.67)         # (1 + 1 + 0) / (1 + 1 + 1), 2 decimals as QV-M2
    assert r["mR@2"] == pytest.approx(100.0)         # only qA: 2 / min(2, 2)
    assert r["mR@3"] == 0.0                          # qB has 3 GT but 1 prediction: nobody left
    assert r["mR@2_queries"] == 1


def test_mr_matching_is_greedy_in_rank_order():
    # P1 [.2,1.2] takes G1 (IoU .8/1.2 = .667); P2 [0,1] would fit G1 perfectly but it is taken,
    # and G2 [1.2,2.2] has IoU 0 with P2 -> 1 match of 2 at every threshold
    r = evaluate_temporal([gt("q", [0, 1], [1.2, 2.2])], [pred("q", [0.2, 1.2, 0.9], [0, 1, 0.8])])
    assert r["mR@2"] == pytest.approx(50.0)


def test_r1_at_03_uses_the_top_prediction():
    gts = [gt("a", [1, 2]), gt("b", [1, 2]), gt("c", [1, 2], [5, 6])]
    preds = [pred("a", [1.2, 2.2, 0.9]),           # IoU .8/1.2 = .667 -> hit
             pred("b", [1.8, 2.8, 0.9], [1, 2, 0.5]),  # top IoU .2/1.8 = .11 -> miss
             pred("c", [5.5, 6.5, 0.9])]           # vs second GT: .5/1.5 = .333 -> hit
    r = evaluate_temporal(gts, preds)
    assert r["R1@0.3"] == pytest.approx(100 * 2 / 3)


def test_a_query_with_no_prediction_is_left_out_as_qv_m2_leaves_it():
    # issue 35: QV-M2 builds its per-query table from the predicted windows, so a query with an
    # empty list (or, with match_number=False, no line) is in no AP, no R1 and no Recall@k. Issues
    # 19 and 28 had made it a miss instead (mAP and R1 1/3 here); that reading is now AS_MISS.
    gts = [gt("a", [0, 1]), gt("b", [2, 3]), gt("c", [4, 5])]
    for preds in ([pred("a", [0, 1, 1.0])],                                  # no line for b, c
                  [pred("a", [0, 1, 1.0]), pred("b"), pred("c")],             # b, c answered "None"
                  [pred("a", [0, 1, 1.0]), {**pred("b", [2, 3, 1.0]), "status": "unparsed"},
                   pred("c")]):                                              # b unparsed
        r = evaluate_temporal(gts, preds)
        assert r["mAP@0.3"] == pytest.approx(100.0) and r["R1@0.3"] == pytest.approx(100.0)
        assert r["G-mAP"] == pytest.approx(100.0) and r["@1_tgt"] == pytest.approx(100.0)
        assert r["mR@1"] == pytest.approx(100.0) and r["mR@1_queries"] == 1
        assert r["num_queries"] == 1 and r["left_out"] == 2 and r["scored_as_miss"] == 0
        assert r["intervals"]["mAP@0.3"]["units"] == 1
        note = no_prediction_note(r)
        assert note.startswith("2 queries with no prediction (") and "left out as the reference (QV-M2) does" in note
        assert "over 1 of 3 queries" in note
        strict = evaluate_temporal(gts, preds, no_prediction=AS_MISS)
        assert strict["mAP@0.3"] == pytest.approx(100 / 3) and strict["R1@0.3"] == pytest.approx(100 / 3)
        assert strict["mR@1"] == pytest.approx(33.33) and strict["mR@1_queries"] == 3
        assert strict["intervals"]["mR@1"]["value"] == pytest.approx(round(100 / 3, 2))
        assert strict["scored_as_miss"] == 2 and strict["left_out"] == 0
        assert "scored as misses" in no_prediction_note(strict) and "stricter reading" in no_prediction_note(strict)
    r = evaluate_temporal(gts, [pred("a", [0, 1, 1.0]), pred("b")])
    assert r["queries_without_prediction"] == 1 and r["empty_predictions"] == 1
    assert "1 empty window list(s)" in no_prediction_note(r) and "1 without a prediction line" in no_prediction_note(r)


def test_a_run_with_no_prediction_at_all_scores_nothing_and_says_so():
    r = evaluate_temporal([gt("a", [0, 1])], [pred("a")])
    assert r["num_queries"] == 0 and r["mAP@0.3"] is None and r["left_out"] == 1
    assert no_prediction_note(r).startswith("1 query with no prediction")


def test_a_ground_truth_line_without_windows_is_left_out_and_counted():
    # nothing to find: its AP is undefined (recall divides by the GT count), so it leaves every
    # average, and the output says how many such lines there were
    gts = [gt("a", [0, 1]), gt("b")]
    r = evaluate_temporal(gts, [pred("a", [0, 1, 1.0]), pred("b", [0, 1, 1.0])])
    assert r["num_queries"] == 1 and r["gt_without_windows"] == 1
    assert r["mAP@0.3"] == pytest.approx(100.0)


def test_3plus_tgt_is_zero_without_such_a_query_as_the_reference():
    r = evaluate_temporal([gt("a", [0, 1]), gt("b", [0, 1], [2, 3])],
                          [pred("a", [0, 1, 1.0]), pred("b", [0, 1, 1.0])])
    assert r["@3+tgt"] == 0.0 and r["@3+tgt_queries"] == 0
    assert r["intervals"]["@3+tgt"]["value"] == 0.0


def test_length_and_count_breakdowns():
    fps = 24.0
    short, middle, long = [0, 2 / fps], [1, 1 + 4 / fps], [3, 3 + 8 / fps]  # 2, 4, 8 frames
    gts = [gt("q1", short, long), gt("q2", middle)]
    preds = [pred("q1", [*long, 0.9]), pred("q2", [*middle, 0.9])]
    r = evaluate_temporal(gts, preds, fps=fps)
    # q1's short window alone (long dropped from the GT) is missed; q1's long window alone is found
    assert r["by_length"]["short"]["mAP@0.3"] == 0.0
    assert r["by_length"]["long"]["mAP@0.3"] == pytest.approx(100.0)
    assert r["by_length"]["middle"]["mAP@0.3"] == pytest.approx(100.0)
    assert r["by_length"]["short"]["num_queries"] == 1
    # counts: q2 single (found), q1 multiple (1 of 2 found: p 1, r .5 -> AP .5)
    assert r["by_count"]["single"]["mAP@0.3"] == pytest.approx(100.0)
    assert r["by_count"]["multiple"]["mAP@0.3"] == pytest.approx(50.0)


def test_fast_path_equals_the_reference_ap_on_a_seeded_random_case():
    """evaluate_temporal scores each query once through _QueryAP and shares the APs between the
    core metrics and the breakdowns; it must give what average_precision / recall_matches_at_k
    give query by query. Windows on a quarter-second grid (IoU ties, duplicate windows), up to 11
    GT windows (8+ recall steps), up to 13 predictions (top-10 cut), equal scores, empty answers."""
    import random

    import numpy as np

    from components.impact.metrics.temporal import LENGTH_BINS, _QueryAP, recall_matches_at_k

    rng = random.Random(1234)
    gts, preds = [], []
    for q in range(40):
        starts = [rng.randint(0, 20) for _ in range(rng.randint(1, 11))]
        windows = [[s / 4, (s + rng.randint(1, 8)) / 4] for s in starts]
        windows += [list(windows[0])] if rng.random() < 0.2 else []
        guesses = []
        for _ in range(rng.randint(0, 13)):
            if rng.random() < 0.6:
                s, e = rng.choice(windows)
            else:
                s, e = rng.randint(0, 24) / 4, rng.randint(25, 30) / 4
            guesses.append([s + rng.choice([0, 0.25, -0.25]), e + rng.choice([0, 0.25]),
                            rng.choice([0.5, 0.9, rng.random()])])
        gts.append(gt(f"q{q}", *windows))
        if q != 7:  # q7 has no prediction line
            preds.append(pred(f"q{q}", *guesses))
    fps = 4.0
    result = evaluate_temporal(gts, preds, fps=fps, no_prediction=AS_MISS)  # every query scored

    by_qid = {p["qid"]: p["pred_relevant_windows"] for p in preds}
    pairs = [(g["relevant_windows"], by_qid.get(g["qid"], [])) for g in gts]  # q7: scored empty
    for g, p in pairs:  # per query, all GT windows and the subsets the length bins keep
        fast = _QueryAP(g, p, THR)
        for lo, hi in LENGTH_BINS.values():
            cols = [j for j, w in enumerate(g) if lo <= round((w[1] - w[0]) * fps) <= (hi or 10 ** 9)]
            assert fast.ap(cols) == average_precision([g[j] for j in cols], p, THR).tolist()
        assert fast.ap() == average_precision(g, p, THR).tolist()

    def ap03(g, p):
        return average_precision(g, p, [0.3])[0]

    def ap_mean(g, p):
        return np.mean(average_precision(g, p, THR))

    assert result["num_queries"] == 40 and result["queries_without_prediction"] == 1
    assert result["mAP@0.3"] == pytest.approx(100 * np.mean([ap03(g, p) for g, p in pairs]), abs=1e-9)
    assert result["G-mAP"] == pytest.approx(100 * np.mean([ap_mean(g, p) for g, p in pairs]), abs=1e-9)
    for k in (1, 2, 3):
        # a query with no prediction is a miss (docs/decisions.md); one with 1..k-1 stays out
        eligible = [(g, p) for g, p in pairs if len(g) >= k and (len(p) >= k or not p)]
        denom = sum(min(len(g), k) for g, _ in eligible)
        recall = [sum(recall_matches_at_k(g, p, k, t) for g, p in eligible) / denom for t in THR]
        # each threshold's recall rounded to 2 decimals (in %) before the mean, as QV-M2
        assert result[f"mR@{k}"] == pytest.approx(np.mean([float(f"{100 * r:.2f}") for r in recall]), abs=1e-9)
    for name, (lo, hi) in LENGTH_BINS.items():
        kept = [([w for w in g if lo <= round((w[1] - w[0]) * fps) <= (hi or 10 ** 9)], p) for g, p in pairs]
        kept = [(g, p) for g, p in kept if g]
        assert result["by_length"][name]["num_queries"] == len(kept)
        assert result["by_length"][name]["mAP@0.3"] == pytest.approx(
            100 * np.mean([ap03(g, p) for g, p in kept]), abs=1e-9)
        assert result["by_length"][name]["mAP@0.1:0.5"] == pytest.approx(
            100 * np.mean([ap_mean(g, p) for g, p in kept]), abs=1e-9)
    multiple = [(g, p) for g, p in pairs if len(g) >= 2]
    assert result["by_count"]["multiple"]["mAP@0.1:0.5"] == pytest.approx(
        100 * np.mean([ap_mean(g, p) for g, p in multiple]), abs=1e-9)


def test_mr_at_k_takes_the_predictions_as_listed_not_sorted_by_score():
    # issue 13: the reference (QV-M2) takes the first k windows of the line as they are listed; a
    # low-scored miss listed first is the top-1 for mR@1 (sorting by score would have hit)
    r = evaluate_temporal([gt("q", [0, 1])], [pred("q", [5, 6, 0.2], [0, 1, 0.9])])
    assert r["mR@1"] == 0.0
    assert r["mAP@0.3"] == pytest.approx(100.0)  # the AP still sorts by score (reference)
    r = evaluate_temporal([gt("q", [0, 1])], [pred("q", [0, 1, 0.2], [5, 6, 0.9])])
    assert r["mR@1"] == pytest.approx(100.0)


def test_mr_at_k_is_0_with_its_count_when_no_query_has_k_windows():
    r = evaluate_temporal([gt("q", [0, 1])], [pred("q", [0, 1, 0.9], [3, 4, 0.5])])
    assert r["mR@1"] == pytest.approx(100.0) and r["mR@1_queries"] == 1
    for k in (2, 3):  # nobody has 2 or 3 GT windows: 0, as the reference reports, and 0 queries
        assert r[f"mR@{k}"] == 0.0 and r[f"mR@{k}_queries"] == 0
