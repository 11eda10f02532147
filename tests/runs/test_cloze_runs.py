"""The Cloze table of every run (components/cloze/runs.py): released files as they are, the
per-question facts, the question list, the matrix, and `eval cloze --items` against `eval cloze`."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers.runs import collect_cloze_runs
from components.cloze.runs import HUMAN, ClozeRuns, human_run
from components.common.runs import ContentCache
from tests.helpers.runs import mean_score, read_item_rows
from examples.released_runs import write_released_runs

PAPER = {"S": "S", "A": "A", "C": "P"}


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    from app import build_parser

    args = build_parser().parse_args(argv)
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def stems(cloze_examples) -> list[str]:
    return sorted(p.name for p in (cloze_examples / "choices").iterdir() if p.is_dir())


@pytest.fixture
def data_dir(tmp_path, stems) -> Path:
    write_released_runs(stems, tmp_path / "data" / "cloze" / "results", 10)
    return tmp_path / "data"


def _load(data_dir: Path, tmp_path: Path) -> tuple[ClozeRuns, dict]:
    loaded = collect_cloze_runs(data_dir, cache=ContentCache(tmp_path / "cache"))
    raw = {Path(p).stem: json.loads(Path(p).read_text()) for p in loaded.files.values()}
    return ClozeRuns(loaded.runs), raw


def test_released_files_load_with_their_quirks(data_dir, tmp_path, stems, monkeypatch):
    monkeypatch.delenv("APP_CLOZE_RUNS_DIR", raising=False)
    loaded = collect_cloze_runs(data_dir, cache=ContentCache(tmp_path / "cache"))
    assert loaded.refusals == [] and len(loaded.runs) == 10
    table = ClozeRuns(loaded.runs)
    # run 0: a stem with no entry: no answer of that run (eval cloze never sees the stem)
    assert "model00_results" not in {a.run for a in table.question(stems[0], "S").answers}
    assert "model01_results" in {a.run for a in table.question(stems[0], "S").answers}
    # run 1: a stem whose entries are all error records: no letter, no verdict, the kind named
    s1 = {a.run: a for a in table.question(stems[1], "P").answers}
    assert (s1["model01_results"].letter, s1["model01_results"].correct, s1["model01_results"].status) \
        == (None, None, "error")
    # run 2: a stem lacking C
    assert {a.run: a for a in table.question(stems[2], "P").answers}["model02_results"].status == "missing"
    # run 3: "<B>" and " b " are letters; run 4: a record without `correct` is scored by `expected`
    raw3 = json.loads((data_dir / "cloze/results/model03_results.json").read_text())[stems[3]]
    a3 = {a.run: a for a in table.question(stems[3], "S").answers}["model03_results"]
    assert a3.own_letter == raw3["S"]["answer"].strip("<>") and a3.status == "answer"
    raw4 = json.loads((data_dir / "cloze/results/model04_results.json").read_text())[stems[4]]["A"]
    a4 = {a.run: a for a in table.question(stems[4], "A").answers}["model04_results"]
    assert a4.correct == (raw4["answer"] == raw4["expected"])


def test_per_question_facts_match_the_files(data_dir, tmp_path, stems):
    table, raw = _load(data_dir, tmp_path)
    shown = {"A": "Wide", "B": "GT", "C": "Early", "D": "Late"}
    back = {clip: letter for letter, clip in shown.items()}
    for stem in stems:
        for dim in ("S", "A", "C"):
            q = table.question(stem, PAPER[dim], option_map=shown if dim == "A" else None)
            entries = {name: r[stem][dim] for name, r in raw.items() if dim in r.get(stem, {})}
            valid = {n: e for n, e in entries.items() if isinstance(e.get("answer"), str)}
            picks = {n: e["option_map"][e["answer"].strip().strip("<>").strip().upper()] for n, e in valid.items()}
            assert q.right == sum(1 for p in picks.values() if p == "GT")
            assert len(q.answered) == len(valid)
            assert q.summary() == f"{q.right} of {len(valid)} runs chose the true middle"
            if dim == "A":  # letters on the shown question's own map
                assert q.letter_counts() == {k: Counter(back[p] for p in picks.values()).get(k, 0) for k in "ABCD"}
            for a in q.answers:
                if a.correct is False:
                    assert a.pick == picks[a.run] and a.distractor.endswith(f"({a.pick})")
                    assert a.reason == entries[a.run]["reason"]


def test_people_right_every_model_wrong(tmp_path, stems):
    results = write_released_runs(stems, tmp_path / "runs", 4, quirks=False)
    for path in results:  # every run wrong on stems[5] S
        r = json.loads(path.read_text())
        e = r[stems[5]]["S"]
        e["answer"] = next(k for k, v in e["option_map"].items() if v == "Rand1")
        e["correct"] = False
        path.write_text(json.dumps(r))
    loaded = collect_cloze_runs(None, named=[tmp_path / "runs"], cache=None)
    gt = {"A": "GT", "B": "Rand1", "C": "Rand2", "D": "Rand3"}
    records = [{"stem": stems[5], "dim": "S", "answer": "A", "option_map": gt, "annotator": who}
               for who in ("a1", "a2")]
    records.append({"stem": stems[0], "dim": "S", "answer": "B", "option_map": gt, "annotator": "a1"})
    table = ClozeRuns(loaded.runs, human=human_run(records))
    only = table.questions(people_only=True)
    assert [(s.stem, s.dim) for s in only] == [(stems[5], "S")]
    assert only[0].right == 0 and only[0].human_right is True
    q = table.question(stems[5], "S")
    assert q.human is not None and q.human.run == HUMAN and q.human.correct is True
    assert table.question(stems[0], "S").human.correct is False


def test_question_list_sorts_and_filters(data_dir, tmp_path):
    table, _ = _load(data_dir, tmp_path)
    by_share = table.questions("share_right")
    shares = [s.share_right for s in by_share if s.share_right is not None]
    assert shares == sorted(shares) and len(by_share) == len(table.question_keys())
    assert [s.share_right for s in by_share[len(shares):]] == [None] * (len(by_share) - len(shares))
    down = [s.disagreement for s in table.questions("disagreement", descending=True)]
    assert down == sorted(down, reverse=True)
    assert {s.dim for s in table.questions(dim="P")} == {"P"}
    for s in table.stats():
        q = table.question(s.stem, s.dim)
        picks = Counter(a.pick for a in q.answered)
        top = max(picks.values()) if picks else 0
        assert s.disagreement == pytest.approx(1 - top / len(q.answered) if q.answered else 0.0)
        assert (s.entropy == 0.0) == (len(picks) <= 1)
    with pytest.raises(ValueError):
        table.questions("nonsense")


def test_matrix_marks_every_run_and_question(data_dir, tmp_path, stems):
    table, raw = _load(data_dir, tmp_path)
    m = table.matrix()
    assert m.runs == table.names and len(m.cells) == len(m.runs)
    col = m.questions.index((stems[1], "S"))
    row = m.runs.index("model01_results")
    assert m.cells[row][col] == "–"          # an error record
    col0 = m.questions.index((stems[0], "S"))
    assert m.cells[m.runs.index("model00_results")][col0] == ""   # no entry
    for r, name in enumerate(m.runs):
        for c, (stem, dim) in enumerate(m.questions):
            e = raw[name].get(stem, {}).get({"P": "C"}.get(dim, dim))
            if e and isinstance(e.get("answer"), str):
                assert m.cells[r][c] == ("✓" if e.get("correct", e["answer"] == e["expected"]) else "✗")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_items_mean_is_the_eval_score(data_dir, tmp_path, capsys, suffix):
    files = sorted((data_dir / "cloze" / "results").glob("*.json"))
    out = tmp_path / f"items{suffix}"
    code, printed, _ = run_cli(["eval", "cloze", "--results", str(files[0]), "--json", "--items", str(out),
                                *map(str, files[1:])], capsys)
    assert code == 0
    rows = [r for r in read_item_rows(out) if r["metric"] == "correct"]
    assert {r["run"] for r in rows} == {f.stem for f in files}
    for f in files:
        _, one, _ = run_cli(["eval", "cloze", "--results", str(f), "--json"], capsys)
        expected = json.loads(one)
        assert mean_score(rows, f.stem) == pytest.approx(expected["acc"])
        mine = [r for r in rows if r["run"] == f.stem]
        # strict: invalid answers and missing entries count as wrong
        assert 100 * sum(r["score"] or 0 for r in mine) / len(mine) == pytest.approx(expected["strict"]["acc"])
    assert json.loads(printed)["acc"] == pytest.approx(mean_score(rows, files[0].stem))


def test_run_files_without_items_are_refused(data_dir, capsys):
    from components.base.errors import UserError
    files = sorted((data_dir / "cloze" / "results").glob("*.json"))
    with pytest.raises(UserError, match="--items"):
        run_cli(["eval", "cloze", str(files[1]), "--results", str(files[0])], capsys)


def test_a_study_folder_is_the_human_row(tmp_path, stems):
    from components.cloze.runs import study_run
    folder = tmp_path / "human_study"
    folder.mkdir()
    gt = {"A": "Wide", "B": "GT", "C": "Early", "D": "Late"}
    for who, answer in (("ann1", "B"), ("ann2", "A")):
        (folder / f"{who}.jsonl").write_text(json.dumps({"stem": stems[0], "dim": "A", "answer": answer,
                                                         "option_map": gt}) + "\n")
    (folder / "ann1.catch.jsonl").write_text(json.dumps({"catch": True, "answer": "A"}) + "\n")
    human, refusals = study_run(folder)
    assert refusals == []
    table = ClozeRuns({}, human=human)
    row = table.question(stems[0], "A", option_map=gt).human
    assert row.correct is False   # one annotator missed: the paper's Human row counts it wrong
    (folder / "ann3.jsonl").write_text(json.dumps({"stem": stems[0], "answer": "A"}) + "\n")
    human, refusals = study_run(folder)
    assert human is None and "lacks key 'dim'" in refusals[0].line() and str(folder) in refusals[0].line()
    assert study_run(tmp_path / "none") == (None, [])


def test_a_run_named_like_the_scored_one_keeps_its_own_rows(data_dir, tmp_path, capsys):
    files = sorted((data_dir / "cloze" / "results").glob("*.json"))
    twin = tmp_path / "other" / files[0].name
    twin.parent.mkdir()
    twin.write_bytes(files[1].read_bytes())
    out = tmp_path / "items.csv"
    run_cli(["eval", "cloze", "--results", str(files[0]), "--json", "--items", str(out), str(twin)], capsys)
    rows = read_item_rows(out)
    assert {r["run"] for r in rows} == {files[0].stem, f"{files[0].stem} (other)"}
    _, one, _ = run_cli(["eval", "cloze", "--results", str(files[1]), "--json"], capsys)
    good = [r for r in rows if r["metric"] == "correct"]
    assert mean_score(good, f"{files[0].stem} (other)") == pytest.approx(json.loads(one)["acc"])
