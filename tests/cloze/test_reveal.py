"""components/cloze/reveal.py: what the runs chose on a practice question, on the player's letters,
and the running score placed among the runs, from run files in the upstream result format (each
run with its own option order, as the released files are)."""
from __future__ import annotations

from components.cloze.reveal import runs_chose, standing
from components.cloze.runs import ClozeRuns, compact_results


def _entry(option_map: dict, answer: str | None, error: str | None = None) -> dict:
    gt = next(k for k, v in option_map.items() if v == "GT")
    return {"answer": answer, "correct": answer == gt if answer else False, "expected": gt,
            "reason": "", "option_map": option_map, **({"error": error} if error else {})}


# each run's own option order; the player saw A=Rand2, B=GT, C=Rand1, D=Rand3
OWN = [{"A": "GT", "B": "Rand1", "C": "Rand2", "D": "Rand3"},
       {"A": "Rand3", "B": "Rand2", "C": "GT", "D": "Rand1"}]
SHOWN = {"A": "Rand2", "B": "GT", "C": "Rand1", "D": "Rand3"}


def _table() -> ClozeRuns:
    runs = {
        "r1": {"s1": {"S": _entry(OWN[0], "A")}, "s2": {"S": _entry(OWN[0], "A")}},     # GT, GT
        "r2": {"s1": {"S": _entry(OWN[1], "B")}, "s2": {"S": _entry(OWN[1], "C")}},     # Rand2, GT
        "r3": {"s1": {"S": _entry(OWN[0], "C")}, "s2": {"S": _entry(OWN[0], "B")}},     # Rand2, Rand1
        "r4": {"s1": {"S": _entry(OWN[1], "D")}, "s2": {"S": _entry(OWN[1], None, "Cannot parse")}},  # Rand1, -
        "r5": {"s1": {"S": _entry(OWN[0], None, "Cannot parse")}, "s2": {"S": _entry(OWN[0], "A")}},  # -, GT
    }
    return ClozeRuns({name: compact_results(q) for name, q in runs.items()})


def test_runs_chose_counts_each_pick_on_the_players_letters():
    qr = _table().question("s1", "S", SHOWN)
    # r1 picked GT (B on screen); r2 and r3 Rand2 (A); r4 Rand1 (C); r5 no valid answer
    assert runs_chose(qr, SHOWN) == ("1 of 4 runs chose B; 2 chose A (Semantic · Rand2); "
                                     "1 chose C (Semantic · Rand1); 1 gave no valid answer.")


def test_standing_places_the_score_among_the_runs_on_the_same_questions():
    table = _table()
    # runs right on s1 and s2: r1 2, r2 1, r3 0, r4 0, r5 1
    both = {("s1", "S"): {"correct": True}, ("s2", "S"): {"correct": False}}
    assert standing(table, both) == "1 of 2: above 2 of 5 runs on these questions, level with 2."
    one = {("s1", "S"): {"correct": True}}       # on s1 alone only r1 was right
    assert standing(table, one) == "1 of 1: above 4 of 5 runs on these questions, level with 1."
    assert standing(table, {("other", "S"): {"correct": True}}) == ""
