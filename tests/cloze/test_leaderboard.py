"""Leaderboard rows name their data set and size; rows on different data are not comparable."""
from components.cloze.data import load_dataset
from components.cloze.leaderboard import comparability_note, reference_rows, row_from_results, table
from components.cloze.questions import build_set
from components.cloze.runner import run_set
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
    assert body[1][col].startswith("TempCloze (paper)")
    names = [row[0] for row in body]
    assert "Seed1.8 (thinking on)" in names and "Seed1.8 (thinking off)" in names   # what differs is said
    assert "not comparable" in comparability_note()


def test_an_imported_file_without_a_data_set_says_so():
    results = {"s": {"S": {"answer": "A", "correct": True}}}
    row = row_from_results("x", results, "imported")
    assert row["data"] == "imported file" and row["size"] == "1 stem"
