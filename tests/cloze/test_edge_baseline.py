"""The B.2.2 edge baseline: hand-computed probabilities and its results on the example data."""
import pytest
from PIL import Image

from components.cloze.edge import edge_answer
from components.cloze.data import load_dataset
from components.cloze.questions import build_set
from components.cloze.pipeline import answer_safely
from components.cloze.metrics import score_results
from components.cloze.solvers import EdgeSolver
from components.base.errors import UserError


def grey(v):
    return Image.new("RGB", (8, 6), (v, v, v))


def test_edge1_probabilities_hand_computed():
    begin = [grey(0)] * 15 + [grey(100)]
    end = [grey(200)] + [grey(0)] * 15
    cands = [[grey(0)] * 16,                               # left 1-100/255, right 1-200/255
             [grey(100)] + [grey(7)] * 14 + [grey(200)],   # perfect edges
             [grey(200)] * 16,                             # left 1-100/255, right 1
             [grey(100)] * 16]                             # left 1, right 1-100/255
    s = [((1 - 100 / 255) + (1 - 200 / 255)) / 2, 1.0, ((1 - 100 / 255) + 1) / 2, (1 + (1 - 100 / 255)) / 2]
    ans = edge_answer(begin, end, cands, k=1)
    assert ans.letter == "B"
    for letter, score in zip("ABCD", s):
        assert ans.probabilities[letter] == pytest.approx(score / sum(s), abs=1e-6)
    assert sum(ans.probabilities.values()) == pytest.approx(1.0)


def test_edge4_averages_four_frames_each_side():
    begin = [grey(0)] * 12 + [grey(50)] * 4
    end = [grey(50)] * 4 + [grey(0)] * 12
    a = [grey(50)] * 4 + [grey(0)] * 8 + [grey(50)] * 4
    b = [grey(50)] + [grey(0)] * 14 + [grey(50)]   # matches at the very edge only
    ans1 = edge_answer(begin, end, [b, a, a, a], k=1)
    ans4 = edge_answer(begin, end, [b, a, a, a], k=4)
    assert ans1.probabilities["A"] == pytest.approx(0.25)    # Edge-1 cannot tell them apart
    # Edge-4: b's sides score (1 + 3 * (1 - 50/255)) / 4 each, a's score 1
    sb = (1 + 3 * (1 - 50 / 255)) / 4
    assert ans4.probabilities["A"] == pytest.approx(sb / (sb + 3))


def test_edge_baseline_on_the_example_data(cloze_examples):
    ds = load_dataset(cloze_examples)
    recs = {}
    for q in build_set(ds, "all").questions:
        rec = answer_safely(EdgeSolver("edge4"), ds, q)
        recs.setdefault(q.stem, {})[q.dim] = rec
        assert rec["backend"] == "baseline:edge4" and set(rec["probabilities"]) == set("ABCD")
    m = score_results(recs)
    assert m["parse_rate"] == 100.0
    assert m["acc"] > 50.0   # the examples' continuous motion makes the true middle's edges match
    with pytest.raises(UserError, match="edge1, edge4, dinov2"):
        EdgeSolver("edge9")
