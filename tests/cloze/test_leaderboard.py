"""Leaderboard rows name their data set and size; rows on different data are not comparable."""
from components.cloze.data import load_dataset
from components.cloze.leaderboard import comparability_note, reference_rows, row_from_results, table
from components.cloze.questions import build_set
from components.cloze.pipeline import run_set
from components.cloze.solvers import EdgeSolver


def test_every_row_names_its_data_and_size_and_the_table_says_they_differ(cloze_examples, tmp_path):
    ds = load_dataset(cloze_examples)
    first = sorted(ds.instances)[:2]
    qs = [q for q in build_set(ds, "all", ["S"]).questions if q.stem in first]
    res = run_set(EdgeSolver(), ds, qs, tmp_path / "edge.json", progress=False)
    ours = row_from_results("baseline:edge1", res["results"], "this app")
    assert ours["data"] == f"data folder '{cloze_examples.name}'"
    assert ours["size"] == "2 stems"
    paper = reference_rows()
    assert all(r["data"].startswith("TempCloze (paper)") or r["name"] == "Random" for r in paper)
    assert {r["size"] for r in paper if r["name"] not in ("Human", "Random")} == {"1,521 videos"}
    assert next(r for r in paper if r["name"] == "Human")["size"] == "100 videos"
    headers, body = table(paper + [ours])
    col = headers.index("Data (size)")
    assert all(row[col] and "?" not in row[col] for row in body)
    # this app's runs come first, the paper's rows after them (not ranked together)
    assert body[0][col] == f"data folder '{cloze_examples.name}' (2 stems)"
    assert body[1][col].startswith("TempCloze (paper)") and body[2][col].startswith("TempCloze (paper)")
    names = [row[0] for row in body]
    # the paper's rows are one group, its Human row (the ceiling, on the 100-video study) first
    assert names[1] == "Human" and names[-1] != "Human"
    assert "Seed1.8 (thinking on)" in names and "Seed1.8 (thinking off)" in names   # what differs is said
    assert "not comparable" in comparability_note()


def test_an_imported_file_without_a_data_set_says_so():
    results = {"s": {"S": {"answer": "A", "correct": True}}}
    row = row_from_results("x", results, "imported")
    assert row["data"] == "imported file" and row["size"] == "1 stem"


OM = {"A": "GT", "B": "Rand1", "C": "Rand2", "D": "Rand3"}


def _results(right: list[int], data_set: str = "cloze") -> dict:
    return {f"s{i}": {d: {"answer": "A" if ok else "B", "expected": "A", "correct": bool(ok),
                          "option_map": OM, "data_set": data_set} for d in ("S", "A", "C")}
            for i, ok in enumerate(right)}


def test_rows_carry_intervals_and_a_test_against_the_next_row():
    from components.cloze.leaderboard import significance

    strong = row_from_results("strong", _results([1] * 38 + [0] * 2), "this app")
    twin = row_from_results("twin", _results([1] * 38 + [0] * 2), "this app")
    weak = row_from_results("weak", _results([1] * 10 + [0] * 30), "this app")
    ci = strong["intervals"]["acc"]
    assert (ci["unit"], ci["units"], ci["resamples"], ci["seed"]) == ("stems", 40, 2000, 0)
    assert ci["low"] <= strong["acc"] <= ci["high"]
    rows = reference_rows() + [weak, twin, strong]
    headers, body = table(rows)
    # the score and its interval first (on screen in a narrow window), what tells rows apart last
    assert headers[:3] == ["Model", "acc", "acc 95 % CI"] and headers[-2:] == ["Data (size)", "Source"]
    vs_next = headers.index("acc vs next row")
    body = [[*r[:-1][:vs_next], r[vs_next], r[-1]] for r in body]   # ... vs next, Source
    ours = [r for r in body if r[-1] == "this app"]
    assert [r[0] for r in ours] == ["twin", "strong", "weak"]  # best first, ties as given
    # the two equal runs: not significant (paired over the same stems, difference 0, p = 1)
    assert ours[0][-2].startswith("n.s. vs next (p 1.00, paired, 40 stems")
    # the second against the weak run: a clear gap
    assert ours[1][-2].startswith("above next (p 0.000, paired, 40 stems")
    assert ours[2][-2] == ""  # the last row of its data set
    # a paper row is tested against no other row, but its acc has an interval (or a word why not)
    assert all(r[-2] == "" and r[2] for r in body if r[-1] == "paper")
    tests = significance(rows)
    assert sum(1 for t in tests if t is not None) == 2


def test_rows_that_share_no_stem_are_compared_unpaired():
    from components.cloze.leaderboard import acc_difference

    a = row_from_results("a", _results([1] * 20), "imported", data="x")
    b = row_from_results("b", {f"t{i}": v for i, v in enumerate(_results([0] * 20).values())}, "imported",
                         data="x")
    d = acc_difference(a, b)
    assert not d.paired and d.diff.value == 100.0 and d.significant


def test_the_human_row_gets_its_interval_the_same_way():
    from components.cloze.metrics import human_results

    records = []
    for who in ("a1", "a2"):
        for i in range(12):
            records.append({"annotator": who, "stem": f"s{i}", "dim": "S",
                            "answer": "A" if (i or who == "a1") else "B", "option_map": OM})
    row = row_from_results("Human (this study)", human_results(records), "this study", data="study")
    ci = row["intervals"]["S"]
    assert row["S"] == 100 * 11 / 12 and (ci["unit"], ci["units"]) == ("stems", 12)
    assert ci["low"] <= ci["value"] <= ci["high"] == 100.0


def test_the_docs_give_the_order_the_table_has():
    """The table puts this app's runs first and the paper's rows last (held above); the module's
    docstring and docs/decisions.md say so, not "the paper's first"."""
    import re
    from pathlib import Path

    from components.cloze import leaderboard

    root = Path(__file__).resolve().parents[2]
    texts = {"leaderboard.py": leaderboard.__doc__,
             "decisions.md": (root / "docs" / "decisions.md").read_text(encoding="utf-8")}
    for name, text in texts.items():
        flat = " ".join(text.split())
        assert not re.search(r"the paper's (rows )?(come )?first|\(the paper's first\)", flat), name
        assert "the paper's rows last" in flat, name
