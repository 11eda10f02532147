"""One record of every run (issue 34): the leaderboard, the runs panel, `eval cloze` and its
`--items` rows read the same run files through the one collection and say the same numbers; each
run's answer is shown in its own terms (its letter and option map beside the letter on screen, the
file's error text and raw reply); a run with nothing valid scores 0 everywhere, as released."""
from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from tests.helpers.runs import collect_cloze_runs
from components.cloze import runs_view
from components.cloze.leaderboard import run_rows, table
from components.cloze.metrics import as_released, score_results
from components.cloze.runs import ClozeRuns, compact_results
from components.common.runs import ContentCache
from tests.helpers.runs import mean_score, read_item_rows
from examples.released_runs import write_released_runs
from tests.runs.test_cloze_runs import run_cli

SHOWN = {"A": "Wide", "B": "Early", "C": "Late", "D": "GT"}            # the question on screen
ITS = {"A": "Early", "B": "GT", "C": "Wide", "D": "Late"}              # the run's own order


def _record(answer, **kw) -> dict:
    return {"answer": answer, "option_map": ITS, "expected": "B", **kw}



def _cloze_without_runs(tmp_path, cloze_examples):
    """A data folder holding the example Cloze data without its run files, and its stems."""
    data = tmp_path / "data"
    (data / "cloze").mkdir(parents=True)
    for child in cloze_examples.iterdir():
        if child.name not in ("results", "runs"):
            (data / "cloze" / child.name).symlink_to(child)
    return data, sorted(p.name for p in (cloze_examples / "choices").iterdir() if p.is_dir())

def test_a_runs_own_letter_is_shown_beside_the_letter_on_screen():
    run = {"s1": {"A": _record("B", correct=True, reason="Candidate B correctly shows the middle.")}}
    table_ = ClozeRuns({"gemini": compact_results(run)})
    answer = table_.question("s1", "A", SHOWN).answers[0]
    # its B is the true middle, which is D on screen
    assert (answer.own_letter, answer.letter, answer.correct) == ("B", "D", True)
    assert answer.own_map(SHOWN) == {"A": "B", "B": "D", "C": "A", "D": "C"}
    assert runs_view.own_letter_text(answer, SHOWN) == "its B = your D"
    html = unescape(runs_view.question_html(table_.question("s1", "A", SHOWN), SHOWN))
    row = re.search(r'<tr class="runs-row" data-run="gemini"[^>]*>(.*?)</tr>', html, re.S).group(1)
    assert re.search(r'<td class="runs-letter">D <span class="runs-own">\(its B = your D\)</span></td>', row)
    # the reason's letters are the run's: its fold lists them, and a note above the rows says so
    assert "Its letters: its A = your B (Early) · its B = your D (GT) · its C = your A (Wide) · its D = your C (Late)" in row
    assert "Candidate B correctly shows the middle." in row
    assert html.count(runs_view.OWN_LETTERS_NOTE) == 1
    # the same order as on screen: no mapping to show
    same = ClozeRuns({"m": compact_results({"s1": {"A": {**_record("D", correct=True), "option_map": SHOWN,
                                                         "expected": "D"}}})})
    assert runs_view.own_letter_text(same.question("s1", "A", SHOWN).answers[0], SHOWN) == ""
    assert runs_view.OWN_LETTERS_NOTE not in unescape(runs_view.question_html(same.question("s1", "A", SHOWN), SHOWN))


def test_error_and_invalid_rows_show_the_files_error_text_and_raw_reply():
    run = {"s1": {"S": _record(None, error="vLLM HTTP 404: model foo does not exist"),
                  "A": _record("maybe the second", error="unparsed: no JSON", raw="I think it is the second clip"),
                  "C": _record(None, error="Read timed out (600)", raw_original="<think>..."),
                  }}
    table_ = ClozeRuns({"m": compact_results(run)})
    err = table_.question("s1", "S", SHOWN).answers[0]
    assert (err.status, err.error, err.raw, err.correct) == ("error", "vLLM HTTP 404: model foo does not exist", "", None)
    html = unescape(runs_view.question_html(table_.question("s1", "A", SHOWN), SHOWN))
    assert "error: unparsed: no JSON" in html and "raw reply: <pre>I think it is the second clip</pre>" in html
    assert '<td class="runs-letter">unparsed</td>' in html
    assert "raw reply: <pre><think>...</pre>" in unescape(unescape(runs_view.question_html(
        table_.question("s1", "P", SHOWN), SHOWN)))
    # counts in the released categories
    assert table_.scores()["m"].counts == {"valid": 0, "invalid": 1, "error": 2, "missing": 0}


def _nothing_valid_files(folder: Path, stems: list[str]) -> list[Path]:
    paths = write_released_runs(stems, folder, 3, quirks=False)
    empty = {stem: {d: {"answer": None, "error": "vLLM HTTP 404: model x does not exist", "raw": ""}
                    for d in ("S", "A", "C")} for stem in stems}
    dead = folder / "dead-model_results.json"
    dead.write_text(json.dumps(empty))
    return [*paths, dead]


def test_a_run_with_nothing_valid_scores_zero_in_eval_items_leaderboard_and_panel(tmp_path, capsys):
    stems = [f"stem{i:02d}" for i in range(12)]
    files = _nothing_valid_files(tmp_path / "data" / "cloze" / "results", stems)
    dead = files[-1]
    out = tmp_path / "items.csv"
    code, printed, _ = run_cli(["eval", "cloze", "--results", str(dead), "--json", "--items", str(out),
                                *map(str, files[:-1])], capsys)
    released = json.loads(printed)
    assert code == 0 and released["acc"] == 0.0 and "acc" in released["nothing_valid"]
    # no null interval: [0, 0], marked
    for key in ("S", "A", "P", "acc", ">=1", ">=2", "3/3"):
        ci = released["intervals"][key]
        assert (ci["value"], ci["low"], ci["high"], ci["nothing_valid"]) == (0.0, 0.0, 0.0, True)
    rows = [r for r in read_item_rows(out) if r["metric"] == "correct"]
    assert all(r["score"] == 0.0 and "nothing_valid" in r["source"] for r in rows if r["run"] == dead.stem)
    for f in files:   # every run's per-run mean equals the acc eval prints for it
        _, one, _ = run_cli(["eval", "cloze", "--results", str(f), "--json"], capsys)
        assert mean_score(rows, f.stem) == pytest.approx(json.loads(one)["acc"])
    loaded = collect_cloze_runs(tmp_path / "data", cache=ContentCache(tmp_path / "cache"))
    runs = ClozeRuns(loaded.runs)
    score = runs.scores()[dead.stem]
    assert (score.acc, score.nothing_valid, score.rank, score.of) == (0.0, True, 4, 4)
    assert score.text() == "acc 0 (nothing valid) · #4 of 4"
    panel = unescape(runs_view.question_html(runs.question(stems[3], "S", SHOWN), SHOWN, (), runs.scores()))
    row = re.search(rf'data-run="{dead.stem}"[^>]*>(.*?)</tr>', panel, re.S).group(1)
    assert "acc 0 (nothing valid) · #4 of 4" in row and "vLLM HTTP 404: model x does not exist" in row
    assert 'title="its entries: valid 0 · invalid 0 · error 36 · missing 0"' in row     # the released categories
    board = {r["name"]: r for r in run_rows(loaded)}
    assert board[dead.stem]["acc"] == 0.0 and "acc" in board[dead.stem]["nothing_valid"]
    headers, body = table(list(board.values()))
    row = next(r for r in body if r[0] == dead.stem)
    assert row[headers.index("acc")] == 0.0 and row[headers.index("acc 95 % CI")] == "[0, 0] nothing valid"
    assert all(cell is not None for cell in row)


def test_leaderboard_panel_items_and_eval_agree_on_every_runs_acc(tmp_path, capsys):
    stems = [f"stem{i:02d}" for i in range(15)]
    folder = tmp_path / "data" / "cloze" / "results"
    write_released_runs(stems, folder, 10)            # the released quirks: empty stems, error records, ...
    loaded = collect_cloze_runs(tmp_path / "data", cache=ContentCache(tmp_path / "cache"))
    runs = ClozeRuns(loaded.runs)
    board = {r["name"]: r for r in run_rows(loaded)}
    items = tmp_path / "items.jsonl"
    paths = sorted(folder.glob("*.json"))
    run_cli(["eval", "cloze", "--results", str(paths[0]), "--json", "--items", str(items), *map(str, paths[1:])],
            capsys)
    rows = [r for r in read_item_rows(items) if r["metric"] == "correct"]
    assert len(board) == len(paths) == 10
    for path in paths:
        released = as_released(score_results(json.loads(path.read_text())))
        name = path.stem
        for key in ("S", "A", "P", "acc", ">=1", ">=2", "3/3"):
            assert board[name][key] == pytest.approx(released[key]), (name, key)
        assert board[name]["intervals"]["acc"] == released["intervals"]["acc"]
        assert runs.scores()[name].acc == pytest.approx(released["acc"])
        assert mean_score(rows, name) == pytest.approx(released["acc"])
        counts = runs.scores()[name].counts
        assert counts["valid"] + counts["invalid"] + counts["error"] == released["entries"]
        assert counts["invalid"] + counts["error"] == released["invalid_entries_skipped"]
        assert counts["missing"] == sum(released["missing_entries"].values())
    ranks = sorted((s.rank, -s.acc) for s in runs.scores().values())
    assert [r for r, _ in ranks][0] == 1 and [-a for _, a in ranks] == sorted((s.acc for s in runs.scores().values()),
                                                                             reverse=True)


def test_a_result_file_in_cloze_results_is_a_leaderboard_row(tmp_path, cloze_examples):
    """The collection the panels read (cloze/results, --runs) is the leaderboard's: a file there is
    a row, with the numbers `eval` gives it, and its row opens the run."""
    from components.cloze.ui.handlers import compare_panel, runs_panel
    from components.cloze.ui.session import RESOURCES, ClozeSession, ClozeTab

    data = tmp_path / "data"
    (data / "cloze").mkdir(parents=True)
    for child in cloze_examples.iterdir():
        if child.name != "results":
            (data / "cloze" / child.name).symlink_to(child)
    stems = sorted(p.name for p in (cloze_examples / "choices").iterdir() if p.is_dir())
    [released] = write_released_runs(stems, data / "cloze" / "results", 1, prefix="released-file", quirks=False)
    named = tmp_path / "named"
    [extra] = write_released_runs(stems, named, 1, seed=3, prefix="named-run", quirks=False)
    runs_panel.forget_loaders()
    try:
        session = ClozeSession(data_dir=str(data), root=str(data / "cloze"), runs=(str(named),))
        view = compare_panel.refresh(ClozeTab(str(data)), RESOURCES.get("t-one-record"), session, [], [], "")
        board = view.leaderboard["value"]
        names = [r[0] for r in board["data"]]
        # one width per column, as the layout gives them
        from components.cloze.leaderboard import column_widths
        assert len(column_widths()) == len(board["headers"]) == len(board["data"][0])
        for path in (released, extra):
            assert path.stem in names
            row = board["data"][names.index(path.stem)]
            acc = as_released(score_results(json.loads(path.read_text())))["acc"]
            assert row[board["headers"].index("acc")] == round(acc, 2)
            assert row[board["headers"].index("Source")] == "run file"
        html = compare_panel.open_run(str(data), (str(named),), released.stem, False, 1)
        results = json.loads(released.read_text())
        assert 'data-state="ready"' in html
        assert html.count('<tr class="runs-row"') == sum(len(d) for d in results.values())
        wrong = compare_panel.open_run(str(data), (str(named),), released.stem, True, 1)
        assert wrong.count('<tr class="runs-row"') == sum(not e["correct"] for d in results.values() for e in d.values())
        assert "no answers to open here" in compare_panel.open_run(str(data), (), "Seed1.8 (thinking on)", False, 1)
    finally:
        RESOURCES.release("t-one-record")
        runs_panel.forget_loaders()


def test_paper_rows_have_a_binomial_interval_or_a_word_why_not():
    from components.cloze.leaderboard import binomial_interval, reference_rows

    headers, body = table(reference_rows())
    ci = headers.index("acc 95 % CI")
    by_name = {r[0]: r[ci] for r in body}
    assert all(by_name.values())
    # Human: 291 of 300 (the paper's Appendix C); Wilson's interval, by hand: 94.4 to 98.4
    low, high = binomial_interval(97.0, 300)
    assert low == pytest.approx(94.39, abs=0.01) and high == pytest.approx(98.41, abs=0.01)
    assert by_name["Human"] == f"[{round(low, 2)}, {round(high, 2)}] binomial"
    assert by_name["Seed1.8 (thinking on)"].endswith("] binomial")
    stems = headers.index("Stems")
    assert {r[0]: r[stems] for r in body}["Human"] == 100            # N = 3 x the paper's videos
    assert {r[0]: r[stems] for r in body}["Seed1.8 (thinking on)"] == 1521
    assert by_name["Random"].startswith("none: chance level")


def test_the_server_starts_reading_every_tabs_runs_and_says_when_they_are_ready(example_data_dir, caplog):
    """app.launch starts the loaders (app.start_runs) before any page asks: the pages' own loaders
    are those, and each logs one line when its runs are read."""
    import logging

    import app
    from components.cloze.ui.handlers import question
    from components.common.runs import forget_runs_loaders
    from components.impact.ui.handlers import runs_panel as impact_panel
    from components.window_search.ui.handlers import runs_panel as ws_panel

    forget_runs_loaders()
    try:
        with caplog.at_level(logging.WARNING, logger="components.common.runs"):
            started = app.start_runs(example_data_dir, ())
            for loader in started:
                assert loader.wait(120) is not None
        assert started == [ws_panel.loader_for(str(example_data_dir), ()),
                            question.loader_for(str(example_data_dir), ()),
                            impact_panel.loader_for(str(example_data_dir), ())]
        lines = [r.getMessage() for r in caplog.records if "runs ready" in r.getMessage()]
        assert {line.split()[0] for line in lines} == {"grounding", "cloze", "impact"}
        assert any(line.startswith("cloze runs ready: 6 run file(s) read") for line in lines), lines
    finally:
        forget_runs_loaders()


def _big_table(stems: int = 250) -> ClozeRuns:
    names = [f"s{i:03d}" for i in range(stems)]
    import random
    runs = {}
    for r in range(4):
        rng = random.Random(r)
        runs[f"run{r}"] = compact_results({s: {d: {"answer": rng.choice("ABCD"), "option_map": SHOWN, "expected": "D"}
                                               for d in ("S", "A", "C")} for s in names})
    return ClozeRuns(runs)


def test_the_question_list_finds_filters_and_pages_through_every_question():
    table_ = _big_table()
    total = 250 * 3
    pages = []
    for page in range(1, 5):
        html = runs_view.question_list_html(table_, "stem", page=page)
        assert f'data-total="{total}"' in html
        pages.append(re.findall(r'<tr data-stem="([^"]+)" data-dim="([^"]+)">', html))
    assert [len(p) for p in pages] == [200, 200, 200, 150]
    listed = [q for p in pages for q in p]
    assert len(set(listed)) == total
    # by stem: the dimensions in the paper's order S, A, P
    assert listed[:6] == [("s000", "S"), ("s000", "A"), ("s000", "P"), ("s001", "S"), ("s001", "A"), ("s001", "P")]
    assert "questions 601–750 of 750 · page 4 of 4" in unescape(runs_view.question_list_html(table_, "stem", page=9))
    # find by stem, one dimension, how many runs were right
    found = re.findall(r'data-stem="([^"]+)" data-dim="([^"]+)"', runs_view.question_list_html(table_, "stem", find="s01"))
    assert {s for s, _ in found} == {f"s01{i}" for i in range(10)} and len(found) == 30
    only_a = re.findall(r'data-dim="([^"]+)"', runs_view.question_list_html(table_, "hardest", dim="A"))
    assert set(only_a) == {"A"}
    for k in range(5):
        assert all(s.right == k for s in runs_view.list_rows(table_, "hardest", right=k))
    assert sum(len(runs_view.list_rows(table_, "stem", right=k)) for k in range(5)) == total


def test_an_overview_column_opens_the_list_of_its_questions_and_each_row_has_its_score():
    from urllib.parse import parse_qs, urlsplit

    table_ = _big_table(40)
    html = unescape(runs_view.overview_html(table_, columns_max=10))   # 120 questions, 12 a column
    links = re.findall(r'<a class="runs-cell" href="([^"]+)"', html)
    first = parse_qs(urlsplit(links[0]).query)
    assert first["sort"] == ["stem"] and first["overview"] == ["1"]
    listed = re.findall(r'data-stem="([^"]+)" data-dim="([^"]+)"',
                        runs_view.question_list_html(table_, "stem", find=first["find"][0]))
    assert listed == table_.question_keys()[:12]
    for name, score in table_.scores().items():
        row = re.search(rf'<div class="runs-grid-row" data-run="{name}">(.*?)</div>', html).group(1)
        assert score.text() in row


def test_a_pages_own_run_and_an_imported_file_open_from_their_rows(tmp_path, cloze_examples, monkeypatch):
    """Every run row opens: a run this page wrote (★, its visitors/ folder) and an imported result
    file, not only the collection's runs; the opened view counts the file's own entries."""
    from components.cloze.ui.handlers import compare_panel, runs_panel
    from components.cloze.ui.handlers.model_panel import visitor_runs_dir
    from components.cloze.ui.session import RESOURCES, ClozeSession, ClozeTab

    monkeypatch.delenv("APP_ADMIN", raising=False)
    data, stems = _cloze_without_runs(tmp_path, cloze_examples)
    runs_panel.forget_loaders()
    res = RESOURCES.get("t-own-run")
    try:
        [own] = write_released_runs(stems, visitor_runs_dir(res, str(data)), 1, prefix="own-run", quirks=False)
        [imported] = write_released_runs(stems, tmp_path / "elsewhere", 1, seed=5, prefix="imported-run", quirks=False)
        session = ClozeSession(data_dir=str(data), root=str(data / "cloze"))
        tab = ClozeTab(str(data))
        board = compare_panel.refresh(tab, res, session, [], [str(imported)], "").leaderboard["value"]
        names = [r[0] for r in board["data"]]
        assert compare_panel.OWN_MARK + own.stem in names and imported.stem in names
        for name, path in ((compare_panel.OWN_MARK + own.stem, own), (imported.stem, imported)):
            html = compare_panel.show_run(tab, res, session, name, False, 1, [str(imported)]).run_view
            results = json.loads(path.read_text())
            assert 'data-state="ready"' in html, name
            assert html.count('<tr class="runs-row"') == sum(len(d) for d in results.values()), name
        # another visitor's page has neither: its rows do not open them
        other = RESOURCES.get("t-other-visitor")
        html = compare_panel.show_run(tab, other, session, compare_panel.OWN_MARK + own.stem, False, 1, []).run_view
        assert "no answers to open here" in html
    finally:
        RESOURCES.release("t-own-run")
        RESOURCES.release("t-other-visitor")
        runs_panel.forget_loaders()


def test_a_result_record_is_read_validated_and_scored_once_on_its_way_to_the_leaderboard(
        tmp_path, cloze_examples, monkeypatch):
    """The Cloze walk (issue 36): from a run file in cloze/results to its leaderboard row, each file
    is read once, validated once and its entries scored once (compact_results: every score of the
    run, the leaderboard's row included, is made from the tally of that pass), and the rows are
    tested against their neighbours by one `significance`. The real functions are wrapped to count
    them; after the scoring pass the entries' verdicts are blanked, so a second pass over them
    would score nothing valid."""
    import threading

    from components.cloze import leaderboard
    from components.cloze import runs as cloze_runs
    from components.cloze.ui.handlers import compare_panel, runs_panel
    from components.cloze.ui.session import RESOURCES, ClozeSession, ClozeTab

    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))   # every file read, none from a cache
    data, stems = _cloze_without_runs(tmp_path, cloze_examples)
    files = write_released_runs(stems, data / "cloze" / "results", 3, prefix="walk", quirks=False)
    calls: dict[str, int] = {}

    def counted(name, real, after=None):
        def wrapper(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            out = real(*args, **kwargs)
            return after(out) if after else out
        return wrapper

    def blank_verdicts(compact):
        for dims in compact["q"].values():
            for entry in dims.values():
                entry[2] = None
        return compact

    monkeypatch.setattr(cloze_runs, "compact_results", counted("score", cloze_runs.compact_results, blank_verdicts))
    monkeypatch.setattr(cloze_runs, "_is_results_shape", counted("validate", cloze_runs._is_results_shape))
    monkeypatch.setattr(cloze_runs, "check_results", counted("validate", cloze_runs.check_results))
    monkeypatch.setattr(leaderboard, "significance", counted("significance", leaderboard.significance))
    runs_panel.forget_loaders()
    try:
        session = ClozeSession(data_dir=str(data), root=str(data / "cloze"))
        view = compare_panel.refresh(ClozeTab(str(data)), RESOURCES.get("t-walk"), session, [], [], "")
        for thread in threading.enumerate():
            if thread.name == "leaderboard-ahead":
                thread.join(60)
        board = view.leaderboard["value"]
        names = [r[0] for r in board["data"]]
        for path in files:
            row = board["data"][names.index(path.stem)]
            assert row[board["headers"].index("acc")] == round(
                as_released(score_results(json.loads(path.read_text())))["acc"], 2), path.stem
        assert calls == {"score": len(files), "validate": len(files), "significance": 1}
    finally:
        RESOURCES.release("t-walk")
        runs_panel.forget_loaders()
