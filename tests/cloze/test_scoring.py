"""Scoring against hand-computed cases (released analysis, strict variant, Human row, Table 4)."""
import itertools
import json
from pathlib import Path

import pytest

from components.cloze.metrics import human_results, order_sensitivity, score_results
from components.base.errors import DataFormatError

OM_S = {"A": "GT", "B": "Rand1", "C": "Rand2", "D": "Rand3"}
OM_A = {"A": "Early", "B": "GT", "C": "Late", "D": "Wide"}
OM_C = {"A": "Reverse", "B": "Shuffle", "C": "GT", "D": "Loop"}


def e(answer, om, correct=None):
    exp = next(k for k, v in om.items() if v == "GT")
    rec = {"answer": answer, "expected": exp, "option_map": om, "reason": ""}
    rec["correct"] = (answer == exp) if correct is None else correct
    return rec


RESULTS = {
    "s1": {"S": e("A", OM_S), "A": e("D", OM_A), "C": e("C", OM_C)},
    "s2": {"S": e("B", OM_S), "A": e("B", OM_A), "C": e("A", OM_C)},
    "s3": {"S": e("A", OM_S), "A": e("maybe B", OM_A, correct=False), "C": e("D", OM_C)},
    "s4": {"S": e("A", OM_S)},
}


def test_released_analysis_hand_computed():
    m = score_results(RESULTS)
    assert m["S"] == pytest.approx(75.0)          # 3 of 4 valid
    assert m["A"] == pytest.approx(50.0)          # 1 of 2 valid (s3's answer is invalid)
    assert m["P"] == pytest.approx(100 / 3)       # 1 of 3
    assert m["acc"] == pytest.approx(500 / 9)     # micro: 5 correct of 9 valid
    assert m["stems"] == 2                        # s1, s2 have all three valid
    assert (m["3/3"], m["2/3"], m["1/3"], m["0/3"]) == (0.0, 50.0, 50.0, 0.0)
    assert (m[">=1"], m[">=2"]) == (100.0, 50.0)
    assert m["invalid_entries_skipped"] == 1
    assert m["error_source"] == {"A": {"Early": 0.0, "Late": 0.0, "Wide": 100.0},
                                 "P": {"Reverse": 50.0, "Shuffle": 0.0, "Loop": 50.0}}


def test_strict_variant_and_parse_rate():
    m = score_results(RESULTS)
    # s4 lacks A and C while the other stems have them: the released scores leave them out (they
    # count the entries present), the strict ones count them as wrong, and the output says so
    assert m["missing_entries"] == {"S": 0, "A": 1, "P": 1}
    assert m["strict"]["S"] == pytest.approx(75.0)
    assert m["strict"]["A"] == pytest.approx(25.0)      # 1 of 4: s3 unparsed, s4 missing
    assert m["strict"]["P"] == pytest.approx(25.0)      # 1 of 4: s4 missing
    assert m["strict"]["acc"] == pytest.approx(500 / 12)  # 5 of 10 entries + 2 missing
    assert m["parse_rate"] == pytest.approx(90.0)       # of the entries present


def test_keys_are_exactly_the_documented_ones_plus_extras():
    m = score_results(RESULTS)
    required = {"S", "A", "P", "acc", "3/3", "2/3", "1/3", "0/3", ">=1", ">=2", "stems",
                "invalid_entries_skipped", "error_source"}
    assert required <= set(m)
    json.dumps(m)


def test_angle_bracket_answers_are_valid_and_records_without_correct_flag():
    res = {"s": {"S": {"answer": "<A>", "expected": "A", "option_map": OM_S},
                 "A": {"answer": "b", "option_map": OM_A},
                 "C": {"answer": "A", "option_map": OM_C}}}
    m = score_results(res)
    assert (m["S"], m["A"], m["P"]) == (100.0, 100.0, 0.0)
    assert m["2/3"] == 100.0


def test_random_row_matches_the_paper():
    """All 64 answer combinations equally often = a uniform random guesser (paper's Random row)."""
    res = {}
    for i, (a, b, c) in enumerate(itertools.product("ABCD", repeat=3)):
        res[f"s{i}"] = {"S": e(a, OM_S), "A": e(b, {"A": "GT", "B": "Early", "C": "Late", "D": "Wide"}),
                        "C": e(c, {"A": "GT", "B": "Reverse", "C": "Shuffle", "D": "Loop"})}
    m = score_results(res)
    assert (m["S"], m["A"], m["P"], m["acc"]) == (25.0, 25.0, 25.0, 25.0)
    rows = json.loads(Path("assets/cloze_reference_rows.json").read_text())["rows"]
    random_row = next(r for r in rows if r["name"] == "Random")
    for key in (">=1", ">=2", "3/3"):
        assert round(m[key], 2) == pytest.approx(random_row[key])


def test_empty_results_give_none_not_a_crash():
    m = score_results({})
    assert m["acc"] is None and m["stems"] == 0 and m["invalid_entries_skipped"] == 0


def test_malformed_results_name_the_record():
    with pytest.raises(DataFormatError, match="s1"):
        score_results({"s1": ["not", "a", "dict"]})


def test_mixed_entries_report_error_share_by_dimension():
    om = {"A": "GT", "B": "Rand2", "C": "Wide", "D": "Loop"}
    res = {"x": {"Mixed": e("A", om)}, "y": {"Mixed": e("C", om)}, "z": {"Mixed": e("??", om)}}
    mx = score_results(res)["mixed"]
    assert mx["acc"] == 50.0 and mx["invalid"] == 1
    assert mx["error_share"] == {"S": 0.0, "A": 100.0, "P": 0.0}


def test_human_row_needs_both_annotators_on_gt():
    recs = [
        {"annotator": "a1", "stem": "s", "dim": "S", "answer": "A", "option_map": OM_S},
        {"annotator": "a2", "stem": "s", "dim": "S", "answer": "A", "option_map": OM_S},
        {"annotator": "a1", "stem": "s", "dim": "A", "answer": "B", "option_map": OM_A},
        {"annotator": "a2", "stem": "s", "dim": "A", "answer": "D", "option_map": OM_A},
        {"annotator": "a1", "stem": "s", "dim": "C", "answer": "A", "option_map": OM_C},  # wrong...
        {"annotator": "a1", "stem": "s", "dim": "C", "answer": "C", "option_map": OM_C},  # ...redone
        {"annotator": "a2", "stem": "s", "dim": "C", "answer": "C", "option_map": OM_C},
    ]
    res = human_results(recs)
    assert res["s"]["S"]["correct"] and res["s"]["C"]["correct"]
    assert not res["s"]["A"]["correct"]
    m = score_results(res)
    assert (m["S"], m["A"], m["P"]) == (100.0, 0.0, 100.0)
    assert m["error_source"]["A"]["Wide"] == 100.0


def test_order_sensitivity_hand_computed():
    runs = {"q1": [(True, "GT"), (True, "GT")],
            "q2": [(True, "GT"), (False, "Wide")],
            "q3": [(False, "Early"), (False, "Late")]}
    m = order_sensitivity(runs)
    assert m["FR"] == pytest.approx(100 / 3)
    assert m["CFR"] == pytest.approx(200 / 3)
    assert m["per_order_acc"] == pytest.approx([200 / 3, 100 / 3])
    assert m["Range"] == pytest.approx(100 / 3)
    assert m["Disp"] == pytest.approx(50 / 3)   # population std of [66.67, 33.33]


def test_order_sensitivity_counts_unparsed_as_its_own_choice():
    m = order_sensitivity({"q": [(False, None), (False, "Wide")]})
    assert m["FR"] == 0.0 and m["CFR"] == 100.0
    with pytest.raises(DataFormatError):
        order_sensitivity({"a": [(True, "GT")], "b": [(True, "GT"), (True, "GT")]})


def test_eval_cloze_writes_0_where_nothing_was_valid_as_released_and_names_it(tmp_path, capsys):
    # issue 28: the released analysis writes `x / y if y else 0`; a file whose A answers are all
    # unreadable scored A as null here. Now 0, and `nothing_valid` says why it is 0.
    from app import main

    results = {"s1": {"S": e("A", OM_S), "A": e("maybe", OM_A, correct=False), "C": e("C", OM_C)},
               "s2": {"S": e("B", OM_S), "A": e("?", OM_A, correct=False), "C": e("C", OM_C)}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results))
    assert main(["eval", "cloze", "--results", str(path), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["A"] == 0.0 and m["S"] == 50.0 and m["P"] == 100.0
    assert m["3/3"] == 0.0 and m[">=1"] == 0.0                 # no stem with all three valid
    assert m["error_source"]["A"] == {"Early": 0.0, "Late": 0.0, "Wide": 0.0}
    assert {"A", "3/3", "2/3", "1/3", "0/3", ">=1", ">=2", "error source A Early"} <= set(m["nothing_valid"])
    assert "S" not in m["nothing_valid"] and "P" not in m["nothing_valid"]
    assert main(["eval", "cloze", "--results", str(path)]) == 0
    table = capsys.readouterr().out
    assert "no valid entry to score (written 0, as the released analysis does): A, 3/3" in table
    assert "  -  " not in table.splitlines()[1]                  # the score row holds numbers only
